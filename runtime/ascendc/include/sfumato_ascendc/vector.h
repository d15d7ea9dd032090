// Vector calls of the public Ascend C API over the kernel API's vector calls: the count form
// (`Add(dst, a, b, count)`) and the mask/repeat form (`Add(dst, a, b, mask, repeat, params)`
// with a continuous-count mask or a 2 x 64-bit lane mask) of the binary, vector-scalar and
// unary operations, Duplicate, Cast with its rounding modes, Compare/Select, the reductions
// and Brcb. Each issues what the kernel API's call of the same name issues. Count forms check
// the count against the tensors' sizes (an overflow stops the run naming the block and call).
// Simplified: BlockReduceSum/Max/Min issue one per-repeat reduction per 32-byte block (8
// instructions where the chip has one); Select takes tensor operands only; the mask register's
// counter mode (SetMaskCount) is not modelled.
#pragma once
#include <type_traits>

#include "runtime/kernel/api.h"
#include "sfumato_ascendc/tensor.h"

namespace sfumato::ascendc {

template <class T, class U>
storage_t<T> kscalar(U v) {
    const T t = static_cast<T>(v);
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
        storage_t<T> s;
        s.bits = t.bits;
        return s;
    } else {
        return static_cast<storage_t<T>>(t);
    }
}

inline kernel::BinaryRepeatParams kparams(const AscendC::BinaryRepeatParams& p) {
    return {p.dstBlkStride, p.src0BlkStride, p.src1BlkStride, p.dstRepStride, p.src0RepStride, p.src1RepStride};
}
inline kernel::UnaryRepeatParams kparams(const AscendC::UnaryRepeatParams& p) {
    return {p.dstBlkStride, p.srcBlkStride, p.dstRepStride, p.srcRepStride};
}
inline kernel::VecMask kmask(uint64_t count) {
    if (count > 128) fail("mask " + std::to_string(count) + " > 128 lanes");
    return kernel::VecMask(count);
}
inline kernel::VecMask kmask(const uint64_t* bits) {
    kernel::VecMask m;
    m.lo = bits[0], m.hi = bits[1];
    return m;
}
isa::RoundMode kround(AscendC::RoundMode m);
isa::CmpMode kcmp(AscendC::CMPMODE m);

// A count-form call's element count, checked against the tensors it touches.
template <class... Ts>
uint64_t count_of(int64_t count, const Ts&... tensors) {
    if (count < 0) fail("negative element count " + std::to_string(count));
    const uint64_t n = static_cast<uint64_t>(count);
    for (uint32_t size : {tensors.GetSize()...}) {
        if (n > size)
            fail(std::to_string(n) + " elements exceed a LocalTensor of " + std::to_string(size) +
                 " elements");
    }
    return n;
}

}  // namespace sfumato::ascendc

namespace AscendC {

#define SFUMATO_ASCENDC_BINARY(Name)                                                                      \
    template <class T, bool isSetMask = true>                                                            \
    void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,         \
              const int32_t& calCount) {                                                                 \
        sfumato::ascendc::enter(#Name);                                                                  \
        sfumato::kernel::Name(dst.kt(), src0.kt(), src1.kt(),                                            \
                              sfumato::ascendc::count_of(calCount, dst, src0, src1));                     \
    }                                                                                                    \
    template <class T, bool isSetMask = true>                                                            \
    void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,         \
              uint64_t mask, uint8_t repeatTimes, const BinaryRepeatParams& p) {                         \
        sfumato::ascendc::enter(#Name);                                                                  \
        sfumato::kernel::Name(dst.kt(), src0.kt(), src1.kt(), sfumato::ascendc::kmask(mask), repeatTimes, \
                              sfumato::ascendc::kparams(p));                                             \
    }                                                                                                    \
    template <class T, bool isSetMask = true>                                                            \
    void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,         \
              const uint64_t mask[], uint8_t repeatTimes, const BinaryRepeatParams& p) {                 \
        sfumato::ascendc::enter(#Name);                                                                  \
        sfumato::kernel::Name(dst.kt(), src0.kt(), src1.kt(), sfumato::ascendc::kmask(mask), repeatTimes, \
                              sfumato::ascendc::kparams(p));                                             \
    }

SFUMATO_ASCENDC_BINARY(Add)
SFUMATO_ASCENDC_BINARY(Sub)
SFUMATO_ASCENDC_BINARY(Mul)
SFUMATO_ASCENDC_BINARY(Div)
SFUMATO_ASCENDC_BINARY(Max)
SFUMATO_ASCENDC_BINARY(Min)
SFUMATO_ASCENDC_BINARY(And)
SFUMATO_ASCENDC_BINARY(Or)
SFUMATO_ASCENDC_BINARY(AddRelu)
SFUMATO_ASCENDC_BINARY(MulAddDst)
SFUMATO_ASCENDC_BINARY(FusedMulAdd)
#undef SFUMATO_ASCENDC_BINARY

#define SFUMATO_ASCENDC_SCALAR(Name)                                                                      \
    template <class T, class U, bool isSetMask = true>                                                   \
    void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const U& scalarValue,                \
              const int32_t& calCount) {                                                                 \
        sfumato::ascendc::enter(#Name);                                                                  \
        sfumato::kernel::Name(dst.kt(), src.kt(), sfumato::ascendc::kscalar<T>(scalarValue),             \
                              sfumato::ascendc::count_of(calCount, dst, src));                            \
    }                                                                                                    \
    template <class T, class U, bool isSetMask = true>                                                   \
    void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const U& scalarValue, uint64_t mask, \
              uint8_t repeatTimes, const UnaryRepeatParams& p) {                                         \
        sfumato::ascendc::enter(#Name);                                                                  \
        sfumato::kernel::Name(dst.kt(), src.kt(), sfumato::ascendc::kscalar<T>(scalarValue),             \
                              sfumato::ascendc::kmask(mask), repeatTimes, sfumato::ascendc::kparams(p));  \
    }                                                                                                    \
    template <class T, class U, bool isSetMask = true>                                                   \
    void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const U& scalarValue,                \
              const uint64_t mask[], uint8_t repeatTimes, const UnaryRepeatParams& p) {                  \
        sfumato::ascendc::enter(#Name);                                                                  \
        sfumato::kernel::Name(dst.kt(), src.kt(), sfumato::ascendc::kscalar<T>(scalarValue),             \
                              sfumato::ascendc::kmask(mask), repeatTimes, sfumato::ascendc::kparams(p));  \
    }

SFUMATO_ASCENDC_SCALAR(Adds)
SFUMATO_ASCENDC_SCALAR(Muls)
SFUMATO_ASCENDC_SCALAR(Maxs)
SFUMATO_ASCENDC_SCALAR(Mins)
SFUMATO_ASCENDC_SCALAR(LeakyRelu)
SFUMATO_ASCENDC_SCALAR(Axpy)
#undef SFUMATO_ASCENDC_SCALAR

#define SFUMATO_ASCENDC_UNARY(Name)                                                                       \
    template <class T, bool isSetMask = true>                                                            \
    void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& calCount) {           \
        sfumato::ascendc::enter(#Name);                                                                  \
        sfumato::kernel::Name(dst.kt(), src.kt(), sfumato::ascendc::count_of(calCount, dst, src));       \
    }                                                                                                    \
    template <class T, bool isSetMask = true>                                                            \
    void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint64_t mask, uint8_t repeatTimes,  \
              const UnaryRepeatParams& p) {                                                              \
        sfumato::ascendc::enter(#Name);                                                                  \
        sfumato::kernel::Name(dst.kt(), src.kt(), sfumato::ascendc::kmask(mask), repeatTimes,            \
                              sfumato::ascendc::kparams(p));                                             \
    }                                                                                                    \
    template <class T, bool isSetMask = true>                                                            \
    void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[],               \
              uint8_t repeatTimes, const UnaryRepeatParams& p) {                                         \
        sfumato::ascendc::enter(#Name);                                                                  \
        sfumato::kernel::Name(dst.kt(), src.kt(), sfumato::ascendc::kmask(mask), repeatTimes,            \
                              sfumato::ascendc::kparams(p));                                             \
    }

SFUMATO_ASCENDC_UNARY(Exp)
SFUMATO_ASCENDC_UNARY(Ln)
SFUMATO_ASCENDC_UNARY(Abs)
SFUMATO_ASCENDC_UNARY(Sqrt)
SFUMATO_ASCENDC_UNARY(Rsqrt)
SFUMATO_ASCENDC_UNARY(Reciprocal)
SFUMATO_ASCENDC_UNARY(Relu)
SFUMATO_ASCENDC_UNARY(Not)
#undef SFUMATO_ASCENDC_UNARY

// ---- fill ----
template <class T, class U>
void Duplicate(const LocalTensor<T>& dst, const U& scalarValue, const int32_t& calCount) {
    sfumato::ascendc::enter("Duplicate");
    sfumato::kernel::Duplicate(dst.kt(), sfumato::ascendc::kscalar<T>(scalarValue),
                               sfumato::ascendc::count_of(calCount, dst));
}
template <class T, class U>
void Duplicate(const LocalTensor<T>& dst, const U& scalarValue, uint64_t mask, uint8_t repeatTimes,
               uint16_t dstBlockStride, uint8_t dstRepeatStride) {
    sfumato::ascendc::enter("Duplicate");
    sfumato::kernel::Duplicate(dst.kt(), sfumato::ascendc::kscalar<T>(scalarValue), sfumato::ascendc::kmask(mask),
                               repeatTimes, dstBlockStride, dstRepeatStride);
}
template <class T, class U>
void Duplicate(const LocalTensor<T>& dst, const U& scalarValue, const uint64_t mask[], uint8_t repeatTimes,
               uint16_t dstBlockStride, uint8_t dstRepeatStride) {
    sfumato::ascendc::enter("Duplicate");
    sfumato::kernel::Duplicate(dst.kt(), sfumato::ascendc::kscalar<T>(scalarValue), sfumato::ascendc::kmask(mask),
                               repeatTimes, dstBlockStride, dstRepeatStride);
}

// ---- conversion ----
template <class D, class S>
void Cast(const LocalTensor<D>& dst, const LocalTensor<S>& src, const RoundMode& round, const uint32_t calCount) {
    sfumato::ascendc::enter("Cast");
    sfumato::kernel::Cast(dst.kt(), src.kt(), sfumato::ascendc::kround(round),
                          sfumato::ascendc::count_of(calCount, dst, src));
}
template <class D, class S, bool isSetMask = true>
void Cast(const LocalTensor<D>& dst, const LocalTensor<S>& src, const RoundMode& round, uint64_t mask,
          uint8_t repeatTimes, const UnaryRepeatParams& p) {
    sfumato::ascendc::enter("Cast");
    sfumato::kernel::Cast(dst.kt(), src.kt(), sfumato::ascendc::kround(round), sfumato::ascendc::kmask(mask),
                          repeatTimes, sfumato::ascendc::kparams(p));
}
template <class D, class S, bool isSetMask = true>
void Cast(const LocalTensor<D>& dst, const LocalTensor<S>& src, const RoundMode& round, const uint64_t mask[],
          uint8_t repeatTimes, const UnaryRepeatParams& p) {
    sfumato::ascendc::enter("Cast");
    sfumato::kernel::Cast(dst.kt(), src.kt(), sfumato::ascendc::kround(round), sfumato::ascendc::kmask(mask),
                          repeatTimes, sfumato::ascendc::kparams(p));
}

// ---- compare / select (bitmasks: one bit per element, in uint8_t tensors) ----
template <class T, class U>
void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, CMPMODE cmpMode,
             uint32_t calCount) {
    sfumato::ascendc::enter("Compare");
    sfumato::ascendc::count_of(calCount, src0, src1);
    sfumato::kernel::Compare(dst.template ReinterpretCast<uint8_t>().kt(), src0.kt(), src1.kt(),
                             sfumato::ascendc::kcmp(cmpMode), calCount);
}
template <class T, class U, bool isSetMask = true>
void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, CMPMODE cmpMode,
             uint64_t mask, uint8_t repeatTimes, const BinaryRepeatParams& p) {
    sfumato::ascendc::enter("Compare");
    sfumato::isa::VecParams v =
        sfumato::kernel::detail::rep(sfumato::ascendc::kmask(mask), repeatTimes, sfumato::ascendc::kparams(p));
    v.cmp = sfumato::ascendc::kcmp(cmpMode);
    sfumato::kernel::detail::vec_one(
        src0.kt().ctx(), sfumato::isa::Opcode::VCMP, sfumato::isa::DTypeOf<sfumato::ascendc::storage_t<T>>::v,
        {sfumato::kernel::detail::at(dst.kt()), sfumato::kernel::detail::at(src0.kt()),
         sfumato::kernel::detail::at(src1.kt()), {}},
        v, 0);
}
template <class T, class U, class S>
void CompareScalar(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const S& src1Scalar, CMPMODE cmpMode,
                   uint32_t calCount) {
    sfumato::ascendc::enter("CompareScalar");
    sfumato::ascendc::count_of(calCount, src0);
    sfumato::kernel::Compares(dst.template ReinterpretCast<uint8_t>().kt(), src0.kt(),
                              sfumato::ascendc::kscalar<T>(src1Scalar), sfumato::ascendc::kcmp(cmpMode), calCount);
}
template <class T, class U>
void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
            const LocalTensor<T>& src1, SELMODE selMode, uint32_t calCount) {
    sfumato::ascendc::enter("Select");
    if (selMode == SELMODE::VSEL_TENSOR_SCALAR_MODE)
        sfumato::ascendc::fail("Select with SELMODE::VSEL_TENSOR_SCALAR_MODE takes a scalar operand");
    sfumato::ascendc::count_of(calCount, dst, src0, src1);
    sfumato::kernel::Select(dst.kt(), selMask.template ReinterpretCast<uint8_t>().kt(), src0.kt(), src1.kt(), calCount);
}

// ---- reductions ----
namespace detail_reduce {
template <class T>
void whole(sfumato::isa::Opcode op, const LocalTensor<T>& dst, const LocalTensor<T>& src, uint64_t mask,
           uint8_t repeat, int32_t dstRepStride, int32_t srcBlkStride, int32_t srcRepStride, bool index) {
    sfumato::kernel::detail::reduce_each(op, dst.kt(), src.kt(), sfumato::ascendc::kmask(mask), repeat,
                                         static_cast<uint16_t>(dstRepStride), static_cast<uint16_t>(srcBlkStride),
                                         static_cast<uint16_t>(srcRepStride), index);
}
bool with_index(ReduceOrder order);
}  // namespace detail_reduce

template <class T, bool isSetMask = true>
void WholeReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t mask, const int32_t repeatTimes,
                    const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride) {
    sfumato::ascendc::enter("WholeReduceSum");
    detail_reduce::whole(sfumato::isa::Opcode::VRED_SUM, dst, src, static_cast<uint64_t>(mask),
                         static_cast<uint8_t>(repeatTimes), dstRepStride, srcBlkStride, srcRepStride, false);
}
template <class T, bool isSetMask = true>
void WholeReduceMax(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t mask, const int32_t repeatTimes,
                    const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride,
                    ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX) {
    sfumato::ascendc::enter("WholeReduceMax");
    detail_reduce::whole(sfumato::isa::Opcode::VRED_MAX, dst, src, static_cast<uint64_t>(mask),
                         static_cast<uint8_t>(repeatTimes), dstRepStride, srcBlkStride, srcRepStride,
                         detail_reduce::with_index(order));
}
template <class T, bool isSetMask = true>
void WholeReduceMin(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t mask, const int32_t repeatTimes,
                    const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride,
                    ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX) {
    sfumato::ascendc::enter("WholeReduceMin");
    detail_reduce::whole(sfumato::isa::Opcode::VRED_MIN, dst, src, static_cast<uint64_t>(mask),
                         static_cast<uint8_t>(repeatTimes), dstRepStride, srcBlkStride, srcRepStride,
                         detail_reduce::with_index(order));
}

// Per 32-byte block: one result per block, 8 per repeat, repeats dstRepStride x 8 results apart.
namespace detail_reduce {
template <class T>
void blocks(sfumato::isa::Opcode op, const LocalTensor<T>& dst, const LocalTensor<T>& src, int32_t repeat,
            uint64_t lo, uint64_t hi, int32_t dstRepStride, int32_t srcBlkStride, int32_t srcRepStride) {
    constexpr uint32_t per_block = 32 / sizeof(T);
    if (repeat < 1 || repeat > 255) sfumato::ascendc::fail("repeatTimes " + std::to_string(repeat) + " (1..255)");
    // dstRepStride counts one repeat's results (8 elements).
    const uint16_t results_apart = static_cast<uint16_t>(dstRepStride * 8);
    for (uint32_t b = 0; b < 8; ++b) {
        uint64_t mlo = 0, mhi = 0;
        for (uint32_t l = b * per_block; l < (b + 1) * per_block; ++l) {
            if (l < 64) mlo |= (lo >> l & 1ull) << l;
            else mhi |= (hi >> (l - 64) & 1ull) << (l - 64);
        }
        if (!mlo && !mhi) continue;
        sfumato::kernel::VecMask m;
        m.lo = mlo, m.hi = mhi;
        sfumato::kernel::detail::reduce_each(op, dst.kt()[b], src.kt(), m, static_cast<uint8_t>(repeat),
                                             results_apart, static_cast<uint16_t>(srcBlkStride),
                                             static_cast<uint16_t>(srcRepStride), false);
    }
}
inline void mask_bits(uint64_t count, uint64_t& lo, uint64_t& hi) {
    const sfumato::kernel::VecMask m = sfumato::ascendc::kmask(count);
    lo = m.lo, hi = m.hi;
}
}  // namespace detail_reduce

#define SFUMATO_ASCENDC_BLOCK_REDUCE(Name, Op)                                                                 \
    template <class T, bool isSetMask = true>                                                                 \
    void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeatTimes, const int32_t mask, \
              const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride) {           \
        sfumato::ascendc::enter(#Name);                                                                       \
        uint64_t lo, hi;                                                                                      \
        detail_reduce::mask_bits(static_cast<uint64_t>(mask), lo, hi);                                       \
        detail_reduce::blocks(sfumato::isa::Opcode::Op, dst, src, repeatTimes, lo, hi, dstRepStride, srcBlkStride, \
                              srcRepStride);                                                                  \
    }                                                                                                         \
    template <class T, bool isSetMask = true>                                                                 \
    void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeatTimes,                \
              const uint64_t mask[], const int32_t dstRepStride, const int32_t srcBlkStride,                  \
              const int32_t srcRepStride) {                                                                   \
        sfumato::ascendc::enter(#Name);                                                                       \
        detail_reduce::blocks(sfumato::isa::Opcode::Op, dst, src, repeatTimes, mask[0], mask[1], dstRepStride,  \
                              srcBlkStride, srcRepStride);                                                    \
    }

SFUMATO_ASCENDC_BLOCK_REDUCE(BlockReduceSum, VRED_SUM)
SFUMATO_ASCENDC_BLOCK_REDUCE(BlockReduceMax, VRED_MAX)
SFUMATO_ASCENDC_BLOCK_REDUCE(BlockReduceMin, VRED_MIN)
#undef SFUMATO_ASCENDC_BLOCK_REDUCE

// Whole reductions of `count` elements into dst[0] (and, for max/min with calIndex, the index
// after it). A count one instruction cannot take is reduced in pieces (up to 255 whole repeats,
// then the masked tail), each piece after the first into workLocal[0] and folded into dst[0].
namespace detail_reduce {
template <class T>
void all(sfumato::isa::Opcode whole_op, sfumato::isa::Opcode fold_op, const LocalTensor<T>& dst,
         const LocalTensor<T>& src, const LocalTensor<T>& work, uint64_t count, bool index) {
    constexpr uint64_t lanes = 256 / sizeof(T);
    if (count <= lanes || (count % lanes == 0 && count / lanes <= 255)) {
        sfumato::kernel::detail::reduce_all(whole_op, dst.kt(), src.kt(), count, index);
        return;
    }
    if (index) sfumato::ascendc::fail("calIndex over " + std::to_string(count) + " elements (more than one instruction)");
    if (work.GetSize() < 1) sfumato::ascendc::fail("workLocal is empty");
    uint64_t done = 0;
    while (done < count) {
        const uint64_t full = (count - done) / lanes;
        const uint64_t piece = full ? std::min<uint64_t>(255, full) * lanes : count - done;
        const auto& target = done == 0 ? dst : work;
        sfumato::kernel::detail::reduce_all(whole_op, target.kt(), src.kt()[static_cast<uint32_t>(done)], piece, false);
        if (done > 0)
            sfumato::kernel::detail::binary(fold_op, dst.kt(), dst.kt(), work.kt(), sfumato::kernel::VecMask(1), 1,
                                            sfumato::kernel::BinaryRepeatParams{});
        done += piece;
    }
}
}  // namespace detail_reduce

template <class T>
void ReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& workLocal,
               const int32_t count) {
    sfumato::ascendc::enter("ReduceSum");
    detail_reduce::all(sfumato::isa::Opcode::VREDALL_SUM, sfumato::isa::Opcode::VADD, dst, src, workLocal,
                       sfumato::ascendc::count_of(count, src), false);
}
template <class T>
void ReduceMax(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& workLocal,
               const int32_t count, bool calIndex = false) {
    sfumato::ascendc::enter("ReduceMax");
    detail_reduce::all(sfumato::isa::Opcode::VREDALL_MAX, sfumato::isa::Opcode::VMAX, dst, src, workLocal,
                       sfumato::ascendc::count_of(count, src), calIndex);
}
template <class T>
void ReduceMin(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& workLocal,
               const int32_t count, bool calIndex = false) {
    sfumato::ascendc::enter("ReduceMin");
    detail_reduce::all(sfumato::isa::Opcode::VREDALL_MIN, sfumato::isa::Opcode::VMIN, dst, src, workLocal,
                       sfumato::ascendc::count_of(count, src), calIndex);
}

// ---- rearrangement ----
template <class T>
void Brcb(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint8_t repeatTimes, const BrcbRepeatParams& p) {
    sfumato::ascendc::enter("Brcb");
    sfumato::kernel::Brcb(dst.kt(), src.kt(), repeatTimes, p.dstBlkStride, p.dstRepStride);
}

// ---- the mask register ----
template <class T, int mode = 0>
void SetVectorMask(uint64_t maskHigh, uint64_t maskLow) {
    sfumato::ascendc::CoreState& s = sfumato::ascendc::enter("SetVectorMask");
    sfumato::kernel::VecMask m;
    m.lo = maskLow, m.hi = maskHigh;
    sfumato::kernel::SetVectorMask(*s.ctx, m);
}
template <class T, int mode = 0>
void SetVectorMask(int32_t len) {
    sfumato::ascendc::CoreState& s = sfumato::ascendc::enter("SetVectorMask");
    sfumato::kernel::SetVectorMask(*s.ctx, sfumato::ascendc::kmask(static_cast<uint64_t>(len)));
}
inline void ResetMask() {
    sfumato::ascendc::CoreState& s = sfumato::ascendc::enter("ResetMask");
    sfumato::kernel::SetVectorMask(*s.ctx, sfumato::kernel::VecMask());
}
inline void SetMaskNorm() { sfumato::ascendc::enter("SetMaskNorm"); }

}  // namespace AscendC
