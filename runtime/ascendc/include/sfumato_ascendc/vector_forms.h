// The vector APIs' other template forms the reference gives, which catlass's tiles and epilogues use: the
// <T, isSetMask> forms of the vector-scalar ops and Duplicate (the scalar of the tensors' type),
// MulAddDst<T, U, isSetMask>, RepeatReduceSum (ReduceRepeat<SUM>'s older name); each the instruction of the
// form in vector.h; ShiftLeft of unsigned types.
#pragma once
#include <string>
#include <type_traits>

#include "sfumato_ascendc/unsupported.h"
#include "sfumato_ascendc/vector.h"

namespace AscendC {

// dst = src0 * src1 + dst, with the reference's <T (dst), U (sources), isSetMask>; sources of another type
// than dst (half into float) are not supported.
template <class T, class U, bool isSetMask = true>
void MulAddDst(const LocalTensor<T>& dst, const LocalTensor<U>& src0, const LocalTensor<U>& src1, const int32_t& calCount) {
    static_assert(std::is_same_v<T, U> || sfumato_unsupported::always_false<T>,
                  "AscendC::MulAddDst with sources of another type than dst is not supported by sfumato's Ascend C layer");
    sfumato::ascendc::enter("MulAddDst");
    sfumato::kernel::MulAddDst(dst.kt(), src0.kt(), src1.kt(), sfumato::ascendc::count_of(calCount, dst, src0, src1));
}
template <class T, class U, bool isSetMask = true, class M>
void MulAddDst(const LocalTensor<T>& dst, const LocalTensor<U>& src0, const LocalTensor<U>& src1, const M& mask,
               uint8_t repeatTimes, const BinaryRepeatParams& p) {
    static_assert(std::is_same_v<T, U> || sfumato_unsupported::always_false<T>,
                  "AscendC::MulAddDst with sources of another type than dst is not supported by sfumato's Ascend C layer");
    sfumato::ascendc::enter("MulAddDst");
    namespace sa = sfumato::ascendc;
    sa::vec_issue(sfumato::isa::Opcode::VMLA, sa::dt_of<T>(), sa::dt_of<T>(), {sa::at(dst), sa::at(src0), sa::at(src1), {}},
                  sa::vparams(repeatTimes, p), 0, sa::marg(isSetMask, mask));
}

// The reference's other template form, <T, isSetMask> with the scalar of the tensors' type (catlass calls
// Muls<half, false>(...)): the same instruction.
#define SFUMATO_ASCENDC_SCALAR_T(Name)                                                                       \
    template <class T, bool isSetMask = true>                                                            \
    void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue, const int32_t& calCount) { \
        Name<T, T, isSetMask>(dst, src, scalarValue, calCount);                                          \
    }                                                                                                    \
    template <class T, bool isSetMask = true, class M>                                                   \
    void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue, const M& mask,  \
              uint8_t repeatTimes, const UnaryRepeatParams& p) {                                         \
        Name<T, T, isSetMask>(dst, src, scalarValue, mask, repeatTimes, p);                              \
    }

SFUMATO_ASCENDC_SCALAR_T(Adds)
SFUMATO_ASCENDC_SCALAR_T(Muls)
SFUMATO_ASCENDC_SCALAR_T(Maxs)
SFUMATO_ASCENDC_SCALAR_T(Mins)
SFUMATO_ASCENDC_SCALAR_T(LeakyRelu)
#undef SFUMATO_ASCENDC_SCALAR_T

// The reference's <T, isSetMask> form (the scalar of the tensor's type): Duplicate<float, false>(...).
template <class T, bool isSetMask = true, class M>
void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, const M& mask, uint8_t repeatTimes,
               uint16_t dstBlockStride, uint8_t dstRepeatStride) {
    Duplicate<T, T, isSetMask>(dst, scalarValue, mask, repeatTimes, dstBlockStride, dstRepeatStride);
}
// ShiftLeft of unsigned elements (the reference's logical shift: the high bits dropped, zeros shifted in),
// count and mask forms, scalarValue 0..16 (uint16_t) or 0..32 (uint32_t). Issued as one vmuls by 2^n in the
// 16- or 32-bit integer type, which wraps to the same bits (the modelled ISA has no vshl; the same vector
// rate). Signed types (the reference's arithmetic shift keeps the sign bit) fail to compile naming the call.
namespace detail_shift {
template <class T>
constexpr void types() {
    static_assert(std::is_same_v<T, uint16_t> || std::is_same_v<T, uint32_t> || sfumato_unsupported::always_false<T>,
                  "AscendC::ShiftLeft is supported by sfumato's Ascend C layer for uint16_t and uint32_t (the logical "
                  "shift); int16_t and int32_t (the arithmetic shift, the sign bit kept) are not");
}
template <class T>
double factor(const T& n) {
    const uint64_t v = n, bits = 8 * sizeof(T);
    if (v > bits)
        sfumato::ascendc::fail("ShiftLeft by " + std::to_string(v) + " bits (0.." + std::to_string(bits) + " for a " +
                               std::to_string(bits) + "-bit type)");
    return v == bits ? 0.0 : static_cast<double>(uint64_t{1} << v);  // every bit shifted out: zeros
}
}  // namespace detail_shift
template <class T, bool isSetMask = true>
void ShiftLeft(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue, const int32_t& count) {
    detail_shift::types<T>();
    sfumato::ascendc::enter("ShiftLeft");
    namespace sa = sfumato::ascendc;
    sfumato::kernel::detail::vec_count(dst.kt().ctx(), sfumato::isa::Opcode::VMULS, sa::dt_of<T>(), sa::dt_of<T>(),
                                       {sa::at(dst), sa::at(src), {}, {}}, sa::count_of(count, dst, src), {},
                                       detail_shift::factor(scalarValue));
}
template <class T, bool isSetMask = true, class M>
void ShiftLeft(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue, const M& mask,
               const uint8_t repeatTime, const UnaryRepeatParams& repeatParams) {
    detail_shift::types<T>();
    sfumato::ascendc::enter("ShiftLeft");
    namespace sa = sfumato::ascendc;
    sa::vec_issue(sfumato::isa::Opcode::VMULS, sa::dt_of<T>(), sa::dt_of<T>(), {sa::at(dst), sa::at(src), {}, {}},
                  sa::vparams(repeatTime, repeatParams), detail_shift::factor(scalarValue), sa::marg(isSetMask, mask));
}

// The older name of ReduceRepeat<ReduceType::SUM> (the reference's list of changed interfaces: repeatTime
// before the mask, and a dstBlkStride that nothing reads).
template <class T, bool isSetMask = true>
void RepeatReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeatTime, const int32_t mask,
                     const int32_t dstBlkStride, const int32_t srcBlkStride, const int32_t dstRepStride,
                     const int32_t srcRepStride) {
    (void)dstBlkStride;
    ReduceRepeat<ReduceType::SUM, T, T, isSetMask>(dst, src, mask, repeatTime, dstRepStride, srcBlkStride, srcRepStride,
                                                   ReduceOrder::ORDER_VALUE_INDEX);
}

}  // namespace AscendC
