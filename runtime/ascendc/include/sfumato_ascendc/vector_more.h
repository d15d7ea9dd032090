// More vector calls of the public Ascend C API: Copy (the vector unit's masked, strided copy
// within UB), the scalar compares (Compares/CompareScalar with a mask) and Gather with a base
// offset. Each issues one vector instruction per call (mask/repeat forms, through the mask
// register rules of vec_issue) or, for the count forms, the whole repeats and a masked tail.
// Simplified: the modelled ISA has no vcopy, so Copy issues a vector OR of the source with
// itself on the same lanes and strides (16- or 32-bit integer view of the same bits: the same
// result and the same cycles per repeat). Not modelled, and stopped with a message naming the
// call: Compare without a destination (into the compare-mask register).
#pragma once
#include "sfumato_ascendc/select.h"
#include "sfumato_ascendc/vector.h"

namespace AscendC {

struct CopyRepeatParams {
    CopyRepeatParams() = default;
    CopyRepeatParams(uint16_t dstStrideIn, uint16_t srcStrideIn, uint16_t dstRepeatSizeIn,
                     uint16_t srcRepeatSizeIn)
        : dstStride(dstStrideIn),
          srcStride(srcStrideIn),
          dstRepeatSize(dstRepeatSizeIn),
          srcRepeatSize(srcRepeatSizeIn) {}
    uint16_t dstStride = 1;
    uint16_t srcStride = 1;
    uint16_t dstRepeatSize = 8;
    uint16_t srcRepeatSize = 8;
};

template <class T, bool isSetMask = true, class M>
void Copy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const M& mask, const uint8_t repeatTime,
          const CopyRepeatParams& p) {
    sfumato::ascendc::enter("Copy");
    namespace sa = sfumato::ascendc;
    static_assert(sizeof(T) == 2 || sizeof(T) == 4, "AscendC::Copy moves 16- and 32-bit elements");
    sfumato::isa::VecParams v = sa::vparams(repeatTime, UnaryRepeatParams{});
    v.dst_blk_stride = p.dstStride, v.src0_blk_stride = p.srcStride;
    v.dst_rep_stride = p.dstRepeatSize, v.src0_rep_stride = p.srcRepeatSize;
    v.src1_blk_stride = p.srcStride, v.src1_rep_stride = p.srcRepeatSize;
    constexpr sfumato::isa::DType bits =
        sizeof(T) == 2 ? sfumato::isa::DType::INT16 : sfumato::isa::DType::INT32;
    sa::vec_issue(sfumato::isa::Opcode::VOR, bits, bits, {sa::at(dst), sa::at(src), sa::at(src), {}}, v, 0,
                  sa::marg(isSetMask, mask));
}
template <class T, bool isSetMask = true>
void Copy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count) {
    sfumato::ascendc::enter("Copy");
    namespace sa = sfumato::ascendc;
    static_assert(sizeof(T) == 2 || sizeof(T) == 4, "AscendC::Copy moves 16- and 32-bit elements");
    constexpr sfumato::isa::DType bits =
        sizeof(T) == 2 ? sfumato::isa::DType::INT16 : sfumato::isa::DType::INT32;
    sfumato::kernel::detail::vec_count(dst.kt().ctx(), sfumato::isa::Opcode::VOR, bits, bits,
                                       {sa::at(dst), sa::at(src), sa::at(src), {}},
                                       sa::count_of(count, dst, src), {}, 0);
}

// Compares of a tensor with a scalar into a bitmask (one bit per element).
template <class T, class U, class S>
void Compares(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const S& src1Scalar, CMPMODE cmpMode,
              uint32_t count) {
    CompareScalar(dst, src0, src1Scalar, cmpMode, count);
}
template <class T, class U, bool isSetMask = true, class S, class M>
void CompareScalar(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const S& src1Scalar,
                   CMPMODE cmpMode, const M& mask, uint8_t repeatTime, const UnaryRepeatParams& p) {
    sfumato::ascendc::enter("CompareScalar");
    namespace sa = sfumato::ascendc;
    sfumato::isa::VecParams v = sa::vparams(repeatTime, p);
    v.cmp = sa::kcmp(cmpMode);
    sa::vec_issue(sfumato::isa::Opcode::VCMPS, sa::dt_of<T>(), sa::dt_of<T>(),
                  {sa::at(dst), sa::at(src0), {}, {}}, v, sa::scalar_value<T>(src1Scalar),
                  sa::marg(isSetMask, mask));
}
template <class T, class U, bool isSetMask = true, class S, class M>
void Compares(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const S& src1Scalar, CMPMODE cmpMode,
              const M& mask, uint8_t repeatTime, const UnaryRepeatParams& p) {
    CompareScalar<T, U, isSetMask>(dst, src0, src1Scalar, cmpMode, mask, repeatTime, p);
}

// Compare into the compare-mask register (no destination) is not modelled: it stops the run naming the call.
// SetCmpMask and GetCmpMask are in select.h.
template <class T, bool isSetMask = true, class M>
void Compare(const LocalTensor<T>&, const LocalTensor<T>&, CMPMODE, const M&, const BinaryRepeatParams&) {
    sfumato::ascendc::enter("Compare");
    sfumato::ascendc::fail(
        "Compare into the compare-mask register (no destination) is not modelled by sfumato");
}
// dst[i] = the element of src at byte offset srcBaseOffset + srcOffset[i] (the chip's vgather).
template <class T>
void Gather(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint32_t>& srcOffset,
            const uint32_t srcBaseOffset, const uint32_t count) {
    sfumato::ascendc::enter("Gather");
    namespace sa = sfumato::ascendc;
    sa::count_of(count, dst, srcOffset);
    if (srcBaseOffset % sizeof(T) != 0)
        sa::fail("Gather: srcBaseOffset " + std::to_string(srcBaseOffset) +
                 " is not a multiple of the element size");
    const LocalTensor<T> base = src[srcBaseOffset / sizeof(T)];
    sfumato::isa::VecParams v;
    v.gather_span = base.GetLength();
    sfumato::kernel::detail::vec_count(dst.kt().ctx(), sfumato::isa::Opcode::VGATHER, sa::dt_of<T>(),
                                       sa::dt_of<T>(), {sa::at(dst), sa::at(base), sa::at(srcOffset), {}},
                                       count, v, 0);
}
template <class T, class M>
void Gather(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint32_t>& srcOffset,
            const uint32_t srcBaseOffset, const M& mask, const uint8_t repeatTime,
            const uint16_t dstRepStride) {
    sfumato::ascendc::enter("Gather");
    namespace sa = sfumato::ascendc;
    if (srcBaseOffset % sizeof(T) != 0)
        sa::fail("Gather: srcBaseOffset " + std::to_string(srcBaseOffset) +
                 " is not a multiple of the element size");
    const LocalTensor<T> base = src[srcBaseOffset / sizeof(T)];
    sfumato::isa::VecParams v =
        sa::vparams(repeatTime, UnaryRepeatParams{1, 1, static_cast<uint8_t>(dstRepStride), 8});
    v.dst_rep_stride = dstRepStride;
    v.gather_span = base.GetLength();
    sa::vec_issue(sfumato::isa::Opcode::VGATHER, sa::dt_of<T>(), sa::dt_of<T>(),
                  {sa::at(dst), sa::at(base), sa::at(srcOffset), {}}, v, 0, sa::marg(true, mask));
}

}  // namespace AscendC
