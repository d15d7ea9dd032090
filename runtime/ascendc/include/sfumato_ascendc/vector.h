// Vector calls of the public Ascend C API over the kernel API's vector calls: the count form
// (`Add(dst, a, b, count)`) and the mask/repeat form (`Add(dst, a, b, mask, repeat, params)`
// with a continuous-count mask or a 2 x 64-bit lane mask) of the binary, vector-scalar and
// unary operations, Duplicate, Cast with its rounding modes, Compare/Select, the reductions
// and Brcb. Each issues what the kernel API's call of the same name issues. Count forms check
// the count against the tensors' sizes (an overflow stops the run naming the block and call).
// Simplified: BlockReduceSum/Max/Min issue one per-repeat reduction per 32-byte block (8
// instructions where the chip has one). Select is in select.h.
#pragma once
#include <type_traits>
#include <vector>

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

// The mask of a mask/repeat-form call: as given (isSetMask = true: a lane count or 2 x 64 lane
// bits) or the mask register's (isSetMask = false, MASK_PLACEHOLDER passed).
struct MaskArg {
    bool set = true;
    bool bits = false;
    uint64_t lo = 0, hi = 0;
};
inline MaskArg marg(bool set, uint64_t count) { return {set, false, count, 0}; }
inline MaskArg marg(bool set, const uint64_t* m) { return {set, true, m[0], m[1]}; }
// Issues one mask/repeat-form vector instruction with the call's mask resolved against the
// mask register: in normal mode one instruction; in counter mode (SetMaskCount) the count
// becomes as many whole repeats as it fills (repeatTimes is ignored, as on the chip) plus a
// masked last repeat, each operand advancing by its repeat stride.
void vec_issue(isa::Opcode op, isa::DType dt, isa::DType st, const kernel::detail::VecArgs& a, isa::VecParams v,
               double scalar, const MaskArg& m);
// The lane mask a normal-mode call works with (its own, or the register's); counter mode is
// rejected naming `what`.
kernel::VecMask resolve_mask(const MaskArg& m, const char* what);
template <class T>
isa::Addr at(const AscendC::LocalTensor<T>& t) {
    if (!t.valid()) fail("the LocalTensor was never allocated");
    return {t.kt().address(), t.kt().pos()};
}
template <class T>
constexpr isa::DType dt_of() {
    return isa::DTypeOf<storage_t<T>>::v;
}
inline isa::VecParams vparams(uint8_t repeat, const AscendC::BinaryRepeatParams& p) {
    return kernel::detail::rep(kernel::VecMask(), repeat, kparams(p));
}
inline isa::VecParams vparams(uint8_t repeat, const AscendC::UnaryRepeatParams& p) {
    return kernel::detail::rep(kernel::VecMask(), repeat, kparams(p));
}

}  // namespace sfumato::ascendc

namespace AscendC {

#define SFUMATO_ASCENDC_BINARY(Name, Op)                                                                      \
    template <class T, bool isSetMask = true>                                                            \
    void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,         \
              const int32_t& calCount) {                                                                 \
        sfumato::ascendc::enter(#Name);                                                                  \
        sfumato::kernel::Name(dst.kt(), src0.kt(), src1.kt(),                                            \
                              sfumato::ascendc::count_of(calCount, dst, src0, src1));                     \
    }                                                                                                    \
    template <class T, bool isSetMask = true, class M>                                                   \
    void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,         \
              const M& mask, uint8_t repeatTimes, const BinaryRepeatParams& p) {                         \
        sfumato::ascendc::enter(#Name);                                                                  \
        namespace sa = sfumato::ascendc;                                                                 \
        sa::vec_issue(sfumato::isa::Opcode::Op, sa::dt_of<T>(), sa::dt_of<T>(),                          \
                      {sa::at(dst), sa::at(src0), sa::at(src1), {}}, sa::vparams(repeatTimes, p), 0,     \
                      sa::marg(isSetMask, mask));                                                        \
    }

SFUMATO_ASCENDC_BINARY(Add, VADD)
SFUMATO_ASCENDC_BINARY(Sub, VSUB)
SFUMATO_ASCENDC_BINARY(Mul, VMUL)
SFUMATO_ASCENDC_BINARY(Div, VDIV)
SFUMATO_ASCENDC_BINARY(Max, VMAX)
SFUMATO_ASCENDC_BINARY(Min, VMIN)
SFUMATO_ASCENDC_BINARY(And, VAND)
SFUMATO_ASCENDC_BINARY(Or, VOR)
SFUMATO_ASCENDC_BINARY(AddRelu, VADDRELU)
SFUMATO_ASCENDC_BINARY(FusedMulAdd, VMADD)
#undef SFUMATO_ASCENDC_BINARY

template <class T>
template <SymbolOp Op>
void LocalTensor<T>::operator=(const SymbolOverride<T, Op>& e) const {
    const int32_t n = static_cast<int32_t>(GetSize());
    if constexpr (Op == SymbolOp::Add) Add(*this, e.src0, e.src1, n);
    else if constexpr (Op == SymbolOp::Sub) Sub(*this, e.src0, e.src1, n);
    else if constexpr (Op == SymbolOp::Mul) Mul(*this, e.src0, e.src1, n);
    else if constexpr (Op == SymbolOp::Div) Div(*this, e.src0, e.src1, n);
    else if constexpr (Op == SymbolOp::Or) Or(*this, e.src0, e.src1, n);
    else And(*this, e.src0, e.src1, n);
}

#define SFUMATO_ASCENDC_SCALAR(Name, Op)                                                                      \
    template <class T, class U, bool isSetMask = true>                                                   \
    void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const U& scalarValue,                \
              const int32_t& calCount) {                                                                 \
        sfumato::ascendc::enter(#Name);                                                                  \
        sfumato::kernel::Name(dst.kt(), src.kt(), sfumato::ascendc::kscalar<T>(scalarValue),             \
                              sfumato::ascendc::count_of(calCount, dst, src));                            \
    }                                                                                                    \
    template <class T, class U, bool isSetMask = true, class M>                                          \
    void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const U& scalarValue, const M& mask, \
              uint8_t repeatTimes, const UnaryRepeatParams& p) {                                         \
        sfumato::ascendc::enter(#Name);                                                                  \
        namespace sa = sfumato::ascendc;                                                                 \
        sa::vec_issue(sfumato::isa::Opcode::Op, sa::dt_of<T>(), sa::dt_of<T>(), {sa::at(dst), sa::at(src), {}, {}}, \
                      sa::vparams(repeatTimes, p), sa::scalar_value<T>(scalarValue), sa::marg(isSetMask, mask)); \
    }

SFUMATO_ASCENDC_SCALAR(Adds, VADDS)
SFUMATO_ASCENDC_SCALAR(Muls, VMULS)
SFUMATO_ASCENDC_SCALAR(Maxs, VMAXS)
SFUMATO_ASCENDC_SCALAR(Mins, VMINS)
SFUMATO_ASCENDC_SCALAR(LeakyRelu, VLRELU)
SFUMATO_ASCENDC_SCALAR(Axpy, VAXPY)
#undef SFUMATO_ASCENDC_SCALAR

#define SFUMATO_ASCENDC_UNARY(Name, Op)                                                                       \
    template <class T, bool isSetMask = true>                                                            \
    void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& calCount) {           \
        sfumato::ascendc::enter(#Name);                                                                  \
        sfumato::kernel::Name(dst.kt(), src.kt(), sfumato::ascendc::count_of(calCount, dst, src));       \
    }                                                                                                    \
    template <class T, bool isSetMask = true, class M>                                                   \
    void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const M& mask, uint8_t repeatTimes,  \
              const UnaryRepeatParams& p) {                                                              \
        sfumato::ascendc::enter(#Name);                                                                  \
        namespace sa = sfumato::ascendc;                                                                 \
        sa::vec_issue(sfumato::isa::Opcode::Op, sa::dt_of<T>(), sa::dt_of<T>(), {sa::at(dst), sa::at(src), {}, {}}, \
                      sa::vparams(repeatTimes, p), 0, sa::marg(isSetMask, mask));                        \
    }

SFUMATO_ASCENDC_UNARY(Exp, VEXP)
SFUMATO_ASCENDC_UNARY(Ln, VLN)
SFUMATO_ASCENDC_UNARY(Abs, VABS)
SFUMATO_ASCENDC_UNARY(Sqrt, VSQRT)
SFUMATO_ASCENDC_UNARY(Rsqrt, VRSQRT)
SFUMATO_ASCENDC_UNARY(Reciprocal, VREC)
SFUMATO_ASCENDC_UNARY(Relu, VRELU)
SFUMATO_ASCENDC_UNARY(Not, VNOT)
#undef SFUMATO_ASCENDC_UNARY

// ---- fill ----
template <class T, class U>
void Duplicate(const LocalTensor<T>& dst, const U& scalarValue, const int32_t& calCount) {
    sfumato::ascendc::enter("Duplicate");
    sfumato::kernel::Duplicate(dst.kt(), sfumato::ascendc::kscalar<T>(scalarValue),
                               sfumato::ascendc::count_of(calCount, dst));
}
template <class T, class U, bool isSetMask = true, class M>
void Duplicate(const LocalTensor<T>& dst, const U& scalarValue, const M& mask, uint8_t repeatTimes,
               uint16_t dstBlockStride, uint8_t dstRepeatStride) {
    sfumato::ascendc::enter("Duplicate");
    namespace sa = sfumato::ascendc;
    sa::vec_issue(sfumato::isa::Opcode::VDUP, sa::dt_of<T>(), sa::dt_of<T>(), {sa::at(dst), {}, {}, {}},
                  sa::vparams(repeatTimes, UnaryRepeatParams{dstBlockStride, 1, dstRepeatStride, 8}),
                  sa::scalar_value<T>(scalarValue), sa::marg(isSetMask, mask));
}

// ---- conversion ----
#define SFUMATO_ASCENDC_NO_FP8_CAST                                                                            \
    static_assert(!sfumato::ascendc::kIsFloat8<D> && !sfumato::ascendc::kIsFloat8<S>,                          \
                  "AscendC::Cast to or from an 8-bit float (fp8_e4m3fn_t, fp8_e5m2_t, hifloat8_t) is not on Atlas A2: " \
                  "the reference lists these conversions for Ascend 950 only; convert in software (shifts and "    \
                  "masks, as catlass's 29_a2_fp8_e4m3_matmul does)")
template <class D, class S>
void Cast(const LocalTensor<D>& dst, const LocalTensor<S>& src, const RoundMode& round, const uint32_t calCount) {
    SFUMATO_ASCENDC_NO_FP8_CAST;
    sfumato::ascendc::enter("Cast");
    sfumato::kernel::Cast(dst.kt(), src.kt(), sfumato::ascendc::kround(round),
                          sfumato::ascendc::count_of(calCount, dst, src));
}
template <class D, class S, bool isSetMask = true, class M>
void Cast(const LocalTensor<D>& dst, const LocalTensor<S>& src, const RoundMode& round, const M& mask,
          uint8_t repeatTimes, const UnaryRepeatParams& p) {
    SFUMATO_ASCENDC_NO_FP8_CAST;
    sfumato::ascendc::enter("Cast");
    namespace sa = sfumato::ascendc;
    sfumato::isa::VecParams v = sa::vparams(repeatTimes, p);
    v.src_dtype = sa::dt_of<S>();
    v.round = sa::kround(round);
    sa::vec_issue(sfumato::isa::Opcode::VCONV, sa::dt_of<D>(), sa::dt_of<S>(), {sa::at(dst), sa::at(src), {}, {}}, v,
                  0, sa::marg(isSetMask, mask));
}

#undef SFUMATO_ASCENDC_NO_FP8_CAST

// ---- compare / select (bitmasks: one bit per element, in uint8_t tensors) ----
template <class T, class U>
void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, CMPMODE cmpMode,
             uint32_t calCount) {
    sfumato::ascendc::enter("Compare");
    sfumato::ascendc::count_of(calCount, src0, src1);
    sfumato::kernel::Compare(dst.template ReinterpretCast<uint8_t>().kt(), src0.kt(), src1.kt(),
                             sfumato::ascendc::kcmp(cmpMode), calCount);
}
template <class T, class U, bool isSetMask = true, class M>
void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, CMPMODE cmpMode,
             const M& mask, uint8_t repeatTimes, const BinaryRepeatParams& p) {
    sfumato::ascendc::enter("Compare");
    namespace sa = sfumato::ascendc;
    sfumato::isa::VecParams v = sa::vparams(repeatTimes, p);
    v.cmp = sa::kcmp(cmpMode);
    sa::vec_issue(sfumato::isa::Opcode::VCMP, sa::dt_of<T>(), sa::dt_of<T>(), {sa::at(dst), sa::at(src0), sa::at(src1), {}},
                  v, 0, sa::marg(isSetMask, mask));
}
template <class T, class U, class S>
void CompareScalar(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const S& src1Scalar, CMPMODE cmpMode,
                   uint32_t calCount) {
    sfumato::ascendc::enter("CompareScalar");
    sfumato::ascendc::count_of(calCount, src0);
    sfumato::kernel::Compares(dst.template ReinterpretCast<uint8_t>().kt(), src0.kt(),
                              sfumato::ascendc::kscalar<T>(src1Scalar), sfumato::ascendc::kcmp(cmpMode), calCount);
}
// ---- reductions ----
namespace detail_reduce {
bool with_index(ReduceOrder order);
// One per-repeat reduction instruction (VRED_*), recorded for GetReduceRepeatSumSpr and friends.
template <class T>
void issue(sfumato::isa::Opcode op, const LocalTensor<T>& dst, const LocalTensor<T>& src,
           const sfumato::ascendc::MaskArg& m, int32_t repeat, int32_t dstRepStride, int32_t srcBlkStride,
           int32_t srcRepStride, bool index) {
    namespace sa = sfumato::ascendc;
    if (repeat < 0 || repeat > 255) sa::fail("repeatTime " + std::to_string(repeat) + " (0..255)");
    if (repeat == 0) return;  // a no-op on the chip
    sfumato::isa::VecParams v = sa::vparams(
        static_cast<uint8_t>(repeat), UnaryRepeatParams{1, static_cast<uint16_t>(srcBlkStride),
                                                        static_cast<uint8_t>(dstRepStride), static_cast<uint8_t>(srcRepStride)});
    v.dst_rep_stride = static_cast<uint16_t>(dstRepStride);
    v.src0_rep_stride = static_cast<uint16_t>(srcRepStride);
    v.with_index = index ? 1 : 0;
    sa::vec_issue(op, sa::dt_of<T>(), sa::dt_of<T>(), {sa::at(dst), sa::at(src), {}, {}}, v, 0, m);
    sa::enter("reduction").reduce_pos = dst.kt().pos();
    sa::enter("reduction").reduce_addr = dst.kt().address();
}
constexpr sfumato::isa::Opcode repeat_op(ReduceType t) {
    return t == ReduceType::SUM   ? sfumato::isa::Opcode::VRED_SUM
           : t == ReduceType::MAX ? sfumato::isa::Opcode::VRED_MAX
                                  : sfumato::isa::Opcode::VRED_MIN;
}
}  // namespace detail_reduce

// Per repeat: one result (value, or value and index) per repeat, dstRepStride results apart.
#define SFUMATO_ASCENDC_WHOLE_REDUCE(Name, Op, Indexed)                                                      \
    template <class T, bool isSetMask = true, class M>                                                      \
    void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const M& mask, const int32_t repeatTime, \
              const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride,           \
              ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX) {                                          \
        sfumato::ascendc::enter(#Name);                                                                     \
        detail_reduce::issue(sfumato::isa::Opcode::Op, dst, src, sfumato::ascendc::marg(isSetMask, mask), repeatTime, \
                             dstRepStride, srcBlkStride, srcRepStride, Indexed && detail_reduce::with_index(order)); \
    }
SFUMATO_ASCENDC_WHOLE_REDUCE(WholeReduceSum, VRED_SUM, false)
SFUMATO_ASCENDC_WHOLE_REDUCE(WholeReduceMax, VRED_MAX, true)
SFUMATO_ASCENDC_WHOLE_REDUCE(WholeReduceMin, VRED_MIN, true)
#undef SFUMATO_ASCENDC_WHOLE_REDUCE

// Per 32-byte block: one result per block, 8 per repeat, repeats dstRepStride x 8 results
// apart. Simplified: the modelled ISA has no per-block reduction (vcgadd), so each of the 8
// blocks is one per-repeat reduction over that block's lanes (8 instructions where the chip has
// one): the right values, more vector time.
namespace detail_reduce {
template <class T>
void blocks(sfumato::isa::Opcode op, const LocalTensor<T>& dst, const LocalTensor<T>& src,
            const sfumato::ascendc::MaskArg& m, int32_t repeat, int32_t dstRepStride, int32_t srcBlkStride,
            int32_t srcRepStride) {
    namespace sa = sfumato::ascendc;
    constexpr uint32_t per_block = 32 / sizeof(T);
    if (repeat < 0 || repeat > 255) sa::fail("repeatTime " + std::to_string(repeat) + " (0..255)");
    if (repeat == 0) return;
    const sfumato::kernel::VecMask all = sa::resolve_mask(m, "a block reduction");
    const uint16_t results_apart = static_cast<uint16_t>(dstRepStride * 8);
    for (uint32_t b = 0; b < 8; ++b) {
        uint64_t mlo = 0, mhi = 0;
        for (uint32_t l = b * per_block; l < (b + 1) * per_block; ++l) {
            if (l < 64) mlo |= (all.lo >> l & 1ull) << l;
            else mhi |= (all.hi >> (l - 64) & 1ull) << (l - 64);
        }
        if (!mlo && !mhi) continue;  // a block without lanes keeps what dst held
        sfumato::kernel::VecMask k;
        k.lo = mlo, k.hi = mhi;
        sfumato::kernel::detail::reduce_each(op, dst.kt()[b], src.kt(), k, static_cast<uint8_t>(repeat), results_apart,
                                             static_cast<uint16_t>(srcBlkStride), static_cast<uint16_t>(srcRepStride),
                                             false);
    }
}
constexpr sfumato::isa::Opcode block_op(ReduceType t) { return repeat_op(t); }
}  // namespace detail_reduce

#define SFUMATO_ASCENDC_BLOCK_REDUCE(Name, Op)                                                               \
    template <class T, bool isSetMask = true, class M>                                                      \
    void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeatTime, const M& mask, \
              const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride) {          \
        sfumato::ascendc::enter(#Name);                                                                     \
        detail_reduce::blocks(sfumato::isa::Opcode::Op, dst, src, sfumato::ascendc::marg(isSetMask, mask), repeatTime, \
                              dstRepStride, srcBlkStride, srcRepStride);                                    \
    }
SFUMATO_ASCENDC_BLOCK_REDUCE(BlockReduceSum, VRED_SUM)
SFUMATO_ASCENDC_BLOCK_REDUCE(BlockReduceMax, VRED_MAX)
SFUMATO_ASCENDC_BLOCK_REDUCE(BlockReduceMin, VRED_MIN)
#undef SFUMATO_ASCENDC_BLOCK_REDUCE

// The newer names: ReduceRepeat (WholeReduce*), ReduceDataBlock (BlockReduce*), ReducePairElem
// (PairReduceSum); the reduction is a template argument, and the mask comes before repeatTime.
template <ReduceType reduceType, class T, class U = T, bool isSetMask = true, class M>
void ReduceRepeat(const LocalTensor<T>& dst, const LocalTensor<U>& src, const M& mask, const int32_t repeatTime,
                  const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride,
                  ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX) {
    sfumato::ascendc::enter("ReduceRepeat");
    static_assert(std::is_same_v<T, U>, "ReduceRepeat: dst and src have one element type");
    detail_reduce::issue(detail_reduce::repeat_op(reduceType), dst, src, sfumato::ascendc::marg(isSetMask, mask),
                         repeatTime, dstRepStride, srcBlkStride, srcRepStride,
                         reduceType != ReduceType::SUM && detail_reduce::with_index(order));
}
template <ReduceType reduceType, class T, class U = T, bool isSetMask = true, class M>
void ReduceDataBlock(const LocalTensor<T>& dst, const LocalTensor<U>& src, const M& mask, const int32_t repeatTime,
                     const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride) {
    sfumato::ascendc::enter("ReduceDataBlock");
    static_assert(std::is_same_v<T, U>, "ReduceDataBlock: dst and src have one element type");
    detail_reduce::blocks(detail_reduce::block_op(reduceType), dst, src, sfumato::ascendc::marg(isSetMask, mask),
                          repeatTime, dstRepStride, srcBlkStride, srcRepStride);
}
// Pair reductions (vcpadd): each repeat's lanes summed two by two, the L / 2 results packed,
// repeats dstRepStride x 128 bytes apart.
template <ReduceType reduceType, class T, class U = T, bool isSetMask = true, class M>
void ReducePairElem(const LocalTensor<T>& dst, const LocalTensor<U>& src, const M& mask,
                    const int32_t repeatTime, const int32_t dstRepStride, const int32_t srcBlkStride,
                    const int32_t srcRepStride) {
    namespace sa = sfumato::ascendc;
    sa::enter("ReducePairElem");
    static_assert(reduceType == ReduceType::SUM, "ReducePairElem: the reference gives ReduceType::SUM only");
    static_assert(std::is_same_v<T, U>, "ReducePairElem: dst and src have one element type");
    if (repeatTime < 0 || repeatTime > 255)
        sa::fail("repeatTime " + std::to_string(repeatTime) + " (0..255)");
    sfumato::isa::VecParams v = sa::vparams(static_cast<uint8_t>(repeatTime),
                                            UnaryRepeatParams{1, static_cast<uint16_t>(srcBlkStride), 8,
                                                              static_cast<uint8_t>(srcRepStride)});
    v.dst_rep_stride = static_cast<uint16_t>(dstRepStride);
    v.src0_rep_stride = static_cast<uint16_t>(srcRepStride);
    sa::vec_issue(sfumato::isa::Opcode::VCPADD, sa::dt_of<T>(), sa::dt_of<T>(),
                  {sa::at(dst), sa::at(src), {}, {}}, v, 0, sa::marg(isSetMask, mask));
}
// The older name, with repeatTime before the mask.
template <class T, bool isSetMask = true, class M>
void PairReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeatTime,
                   const M& mask, const int32_t dstRepStride, const int32_t srcBlkStride,
                   const int32_t srcRepStride) {
    ReducePairElem<ReduceType::SUM, T, T, isSetMask>(dst, src, mask, repeatTime, dstRepStride, srcBlkStride,
                                                     srcRepStride);
}

// CreateVecIndex (vci): dst = firstValue, firstValue + 1, ...; the count form in whole repeats and
// a masked last one, the mask forms counting on across repeats.
template <class T>
void CreateVecIndex(LocalTensor<T> dst, const T& firstValue, uint32_t count) {
    namespace sa = sfumato::ascendc;
    sa::CoreState& s = sa::enter("CreateVecIndex");
    sfumato::kernel::detail::index_count(*s.ctx, sa::dt_of<T>(), sa::at(dst), sa::scalar_value<T>(firstValue),
                                         sa::count_of(count, dst));
}
template <class T, class M>
void CreateVecIndex(LocalTensor<T>& dst, const T& firstValue, const M& mask, uint8_t repeatTime,
                    uint16_t dstBlkStride, uint8_t dstRepStride) {
    namespace sa = sfumato::ascendc;
    sa::enter("CreateVecIndex");
    sa::vec_issue(sfumato::isa::Opcode::VCI, sa::dt_of<T>(), sa::dt_of<T>(), {sa::at(dst), {}, {}, {}},
                  sa::vparams(repeatTime, UnaryRepeatParams{dstBlkStride, 1, dstRepStride, 8}),
                  sa::scalar_value<T>(firstValue), sa::marg(true, mask));
}

// Whole reductions of `count` elements into dst[0] (and, for max/min with calIndex, the index
// after it). A count one instruction cannot take is reduced in pieces (up to 255 whole repeats,
// then the masked tail), each piece after the first into workLocal[0] and folded into dst[0].
namespace detail_reduce {
// With the index over more than one instruction: each piece's value and index go to workLocal
// (2 elements a piece); the scalar unit, after the vector pipe finished, picks the piece with the
// extreme value (the first on ties) and writes its value and its index plus the piece's start to
// dst, as the chip's two-stage reduction does with its second stage. In timing mode the scalar
// reads see 0: the same instructions, the first piece picked.
void pick_extreme(sfumato::isa::Opcode op, sfumato::isa::DType dt, sfumato::isa::Pos pos, uint64_t dst,
                  uint64_t work, const std::vector<uint64_t>& starts);
template <class T>
void index_pieces(sfumato::isa::Opcode whole_op, const LocalTensor<T>& dst, const LocalTensor<T>& src,
                  const LocalTensor<T>& work, uint64_t count) {
    constexpr uint64_t lanes = 256 / sizeof(T);
    std::vector<uint64_t> starts;
    for (uint64_t done = 0; done < count;) {
        const uint64_t full = (count - done) / lanes;
        const uint64_t piece = full ? std::min<uint64_t>(255, full) * lanes : count - done;
        starts.push_back(done);
        done += piece;
    }
    if (work.GetSize() < 2 * starts.size())
        sfumato::ascendc::fail("workLocal of " + std::to_string(work.GetSize()) + " elements (" +
                               std::to_string(2 * starts.size()) + " needed)");
    for (size_t i = 0; i < starts.size(); ++i) {
        const uint64_t end = i + 1 < starts.size() ? starts[i + 1] : count;
        sfumato::kernel::detail::reduce_all(whole_op, work.kt()[static_cast<uint32_t>(2 * i)],
                                            src.kt()[static_cast<uint32_t>(starts[i])], end - starts[i], true);
    }
    pick_extreme(whole_op, sfumato::ascendc::dt_of<T>(), dst.kt().pos(), dst.kt().address(), work.kt().address(),
                 starts);
}
template <class T>
void all(sfumato::isa::Opcode whole_op, sfumato::isa::Opcode fold_op, const LocalTensor<T>& dst,
         const LocalTensor<T>& src, const LocalTensor<T>& work, uint64_t count, bool index) {
    constexpr uint64_t lanes = 256 / sizeof(T);
    if (count <= lanes || (count % lanes == 0 && count / lanes <= 255)) {
        sfumato::kernel::detail::reduce_all(whole_op, dst.kt(), src.kt(), count, index);
        return;
    }
    if (index) {
        index_pieces(whole_op, dst, src, work, count);
        return;
    }
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

template <class T, bool isSetMask = true>
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

// Mask/repeat forms: every masked lane of repeatTime repeats (srcRepStride blocks apart) into
// dst[0] (and the index after it): one whole-reduction instruction.
namespace detail_reduce {
template <class T, class M>
void all_masked(sfumato::isa::Opcode op, const LocalTensor<T>& dst, const LocalTensor<T>& src, const M& mask,
                int32_t repeat, int32_t srcRepStride, bool index) {
    namespace sa = sfumato::ascendc;
    if (repeat < 1 || repeat > 255) sa::fail("repeatTime " + std::to_string(repeat) + " (1..255)");
    sfumato::isa::VecParams v =
        sa::vparams(static_cast<uint8_t>(repeat), UnaryRepeatParams{1, 1, 8, static_cast<uint8_t>(srcRepStride)});
    v.src0_rep_stride = static_cast<uint16_t>(srcRepStride);
    v.with_index = index ? 1 : 0;
    sa::vec_issue(op, sa::dt_of<T>(), sa::dt_of<T>(), {sa::at(dst), sa::at(src), {}, {}}, v, 0, sa::marg(true, mask));
}
}  // namespace detail_reduce
template <class T, class M>
void ReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& /*sharedTmpBuffer*/,
               const M& mask, const int32_t repeatTime, const int32_t srcRepStride) {
    sfumato::ascendc::enter("ReduceSum");
    detail_reduce::all_masked(sfumato::isa::Opcode::VREDALL_SUM, dst, src, mask, repeatTime, srcRepStride, false);
}
template <class T, class M>
void ReduceMax(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& /*sharedTmpBuffer*/,
               const M& mask, const int32_t repeatTime, const int32_t srcRepStride, bool calIndex = false) {
    sfumato::ascendc::enter("ReduceMax");
    detail_reduce::all_masked(sfumato::isa::Opcode::VREDALL_MAX, dst, src, mask, repeatTime, srcRepStride, calIndex);
}
template <class T, class M>
void ReduceMin(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& /*sharedTmpBuffer*/,
               const M& mask, const int32_t repeatTime, const int32_t srcRepStride, bool calIndex = false) {
    sfumato::ascendc::enter("ReduceMin");
    detail_reduce::all_masked(sfumato::isa::Opcode::VREDALL_MIN, dst, src, mask, repeatTime, srcRepStride, calIndex);
}

// ---- rearrangement ----
template <class T>
void Brcb(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint8_t repeatTimes, const BrcbRepeatParams& p) {
    sfumato::ascendc::enter("Brcb");
    sfumato::kernel::Brcb(dst.kt(), src.kt(), repeatTimes, p.dstBlkStride, p.dstRepStride);
}

// ---- the mask register ----
// Normal mode: maskHigh/maskLow are the 128 lane bits (a length sets the first len lanes);
// counter mode (SetMaskCount): maskLow (or len) is the element count of the next calls.
void set_vector_mask(uint64_t hi, uint64_t lo, bool length);
template <class T, MaskMode mode = MaskMode::NORMAL>
void SetVectorMask(uint64_t maskHigh, uint64_t maskLow) {
    sfumato::ascendc::enter("SetVectorMask");
    set_vector_mask(maskHigh, maskLow, false);
}
template <class T, MaskMode mode = MaskMode::NORMAL>
void SetVectorMask(int32_t len) {
    sfumato::ascendc::enter("SetVectorMask");
    set_vector_mask(0, static_cast<uint64_t>(len), true);
}
inline void ResetMask() {
    sfumato::ascendc::enter("ResetMask");
    set_vector_mask(~0ull, ~0ull, false);
}
inline void SetMaskCount() { sfumato::ascendc::enter("SetMaskCount").mask_counter = true; }
inline void SetMaskNorm() { sfumato::ascendc::enter("SetMaskNorm").mask_counter = false; }

// Values of the last reduction, read by the scalar unit (after the kernel waited for V).
template <class T>
T GetReduceRepeatSumSpr() {
    sfumato::ascendc::CoreState& s = sfumato::ascendc::enter("GetReduceRepeatSumSpr");
    T v{};
    sfumato::ascendc::local_scalar_read(s.reduce_pos, s.reduce_addr, &v, sizeof(T));
    return v;
}
template <class T>
T GetAccVal() {
    return GetReduceRepeatSumSpr<T>();
}
template <class T>
void GetReduceRepeatMaxMinSpr(T& maxMinValue, T& maxMinIndex) {
    sfumato::ascendc::CoreState& s = sfumato::ascendc::enter("GetReduceRepeatMaxMinSpr");
    sfumato::ascendc::local_scalar_read(s.reduce_pos, s.reduce_addr, &maxMinValue, sizeof(T));
    sfumato::ascendc::local_scalar_read(s.reduce_pos, s.reduce_addr + sizeof(T), &maxMinIndex, sizeof(T));
}
template <class T>
void GetReduceRepeatMaxMinSpr(T& maxMinValue) {
    sfumato::ascendc::CoreState& s = sfumato::ascendc::enter("GetReduceRepeatMaxMinSpr");
    sfumato::ascendc::local_scalar_read(s.reduce_pos, s.reduce_addr, &maxMinValue, sizeof(T));
}
template <class T>
void GetReduceMaxMinCount(T& maxMinValue, T& maxMinIndex) {
    GetReduceRepeatMaxMinSpr(maxMinValue, maxMinIndex);
}
template <class T>
void GetReduceMaxMinCount(T& maxMinValue) {
    GetReduceRepeatMaxMinSpr(maxMinValue);
}

}  // namespace AscendC
