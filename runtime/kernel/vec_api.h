// The kernel-facing vector API (Ascend-C-like): one call per vector opcode of the ISA, each in
// a count form (`Add(dst, a, b, count)`: any count, split into full 256-byte repeats of at most
// 255 and a masked tail) and, where Ascend C has one, a mask/repeat/params form (`Add(dst, a,
// b, mask, repeat, params)` with mask a continuous lane count or a 128-bit lane mask {lo, hi}).
// Every name forwards to a handful of shared templates, so adding an opcode is one line.
// Simplified: the count form needs counts that the ISA can express in whole instructions
// (whole reductions: at most 255 repeats, a multiple of the lanes per repeat when above it;
// compare/select with a tail: the tail's bitmask must start on 32 bytes).
#pragma once
#include <type_traits>
#include <utility>

#include "isa/semantics.h"
#include "runtime/kernel/tensor.h"

namespace sfumato::kernel {

struct BinaryRepeatParams {
    uint16_t dstBlkStride = 1, src0BlkStride = 1, src1BlkStride = 1;
    uint16_t dstRepStride = 8, src0RepStride = 8, src1RepStride = 8;
};
struct UnaryRepeatParams {
    uint16_t dstBlkStride = 1, srcBlkStride = 1;
    uint16_t dstRepStride = 8, srcRepStride = 8;
};

// A vector mask: a continuous count of lanes (bits 0..n-1) or an explicit 128-bit lane mask.
struct VecMask {
    uint64_t lo = ~0ull, hi = ~0ull;
    VecMask() = default;      // every lane
    VecMask(uint64_t count);  // NOLINT(google-explicit-constructor): Ascend C passes counts
    VecMask(const uint64_t (&m)[2]) : lo(m[0]), hi(m[1]) {}  // NOLINT(google-explicit-constructor)
};

using isa::CmpMode;
using isa::RoundMode;

namespace detail {
struct VecArgs {
    isa::Addr dst, src0, src1, src2;
};
// The count form's default parameters (no compare mode, conversion or gather span), one object for
// every call rather than a fresh one built on each call's stack.
inline const isa::VecParams kVecDefaults{};
// Count form: splits `count` lanes into instructions; operands advance by their natural step.
void vec_count(KernelContext& ctx, isa::Opcode op, isa::DType dt, isa::DType st, const VecArgs& a,
               uint64_t count, const isa::VecParams& tmpl, double scalar);
// Mask/repeat form: exactly one instruction.
void vec_one(KernelContext& ctx, isa::Opcode op, isa::DType dt, const VecArgs& a, const isa::VecParams& v,
             double scalar);
isa::VecParams rep(const VecMask& m, uint8_t repeat, const BinaryRepeatParams& p);
isa::VecParams rep(const VecMask& m, uint8_t repeat, const UnaryRepeatParams& p);
template <class T>
isa::Addr at(const LocalTensor<T>& t) {
    return {t.address(), t.pos()};
}
template <class T>
double value(T v) {
    if constexpr (std::is_arithmetic_v<T>)
        return static_cast<double>(v);
    else
        return static_cast<double>(static_cast<float>(v));
}
template <class T>
constexpr isa::DType dt() {
    return isa::DTypeOf<T>::v;
}
template <class T>
isa::VecParams with_cmp(CmpMode c) {
    isa::VecParams v;
    v.cmp = c;
    return v;
}

// dst = f(src0, src1)
template <class T>
void binary(isa::Opcode op, const LocalTensor<T>& d, const LocalTensor<T>& a, const LocalTensor<T>& b,
            uint64_t n) {
    vec_count(d.ctx(), op, dt<T>(), dt<T>(), {at(d), at(a), at(b), {}}, n, kVecDefaults, 0);
}
template <class T>
void binary(isa::Opcode op, const LocalTensor<T>& d, const LocalTensor<T>& a, const LocalTensor<T>& b,
            const VecMask& m, uint8_t repeat, const BinaryRepeatParams& p) {
    vec_one(d.ctx(), op, dt<T>(), {at(d), at(a), at(b), {}}, rep(m, repeat, p), 0);
}
// dst = f(src0) and dst = f(src0, scalar)
template <class T>
void unary(isa::Opcode op, double s, const LocalTensor<T>& d, const LocalTensor<T>& a, uint64_t n) {
    vec_count(d.ctx(), op, dt<T>(), dt<T>(), {at(d), at(a), {}, {}}, n, kVecDefaults, s);
}
template <class T>
void unary(isa::Opcode op, double s, const LocalTensor<T>& d, const LocalTensor<T>& a, const VecMask& m,
           uint8_t repeat, const UnaryRepeatParams& p) {
    vec_one(d.ctx(), op, dt<T>(), {at(d), at(a), {}, {}}, rep(m, repeat, p), s);
}
}  // namespace detail

// ---- binary: dst = a op b ----

template <class T, class... R>
void Add(const LocalTensor<T>& d, const LocalTensor<T>& a, const LocalTensor<T>& b, R&&... r) {
    detail::binary(isa::Opcode::VADD, d, a, b, std::forward<R>(r)...);
}
template <class T, class... R>
void Sub(const LocalTensor<T>& d, const LocalTensor<T>& a, const LocalTensor<T>& b, R&&... r) {
    detail::binary(isa::Opcode::VSUB, d, a, b, std::forward<R>(r)...);
}
template <class T, class... R>
void Mul(const LocalTensor<T>& d, const LocalTensor<T>& a, const LocalTensor<T>& b, R&&... r) {
    detail::binary(isa::Opcode::VMUL, d, a, b, std::forward<R>(r)...);
}
template <class T, class... R>
void Div(const LocalTensor<T>& d, const LocalTensor<T>& a, const LocalTensor<T>& b, R&&... r) {
    detail::binary(isa::Opcode::VDIV, d, a, b, std::forward<R>(r)...);
}
template <class T, class... R>
void Max(const LocalTensor<T>& d, const LocalTensor<T>& a, const LocalTensor<T>& b, R&&... r) {
    detail::binary(isa::Opcode::VMAX, d, a, b, std::forward<R>(r)...);
}
template <class T, class... R>
void Min(const LocalTensor<T>& d, const LocalTensor<T>& a, const LocalTensor<T>& b, R&&... r) {
    detail::binary(isa::Opcode::VMIN, d, a, b, std::forward<R>(r)...);
}
template <class T, class... R>
void And(const LocalTensor<T>& d, const LocalTensor<T>& a, const LocalTensor<T>& b, R&&... r) {
    detail::binary(isa::Opcode::VAND, d, a, b, std::forward<R>(r)...);
}
template <class T, class... R>
void Or(const LocalTensor<T>& d, const LocalTensor<T>& a, const LocalTensor<T>& b, R&&... r) {
    detail::binary(isa::Opcode::VOR, d, a, b, std::forward<R>(r)...);
}
// dst = max(a + b, 0)
template <class T, class... R>
void AddRelu(const LocalTensor<T>& d, const LocalTensor<T>& a, const LocalTensor<T>& b, R&&... r) {
    detail::binary(isa::Opcode::VADDRELU, d, a, b, std::forward<R>(r)...);
}
// dst = a * b + dst
template <class T, class... R>
void MulAddDst(const LocalTensor<T>& d, const LocalTensor<T>& a, const LocalTensor<T>& b, R&&... r) {
    detail::binary(isa::Opcode::VMLA, d, a, b, std::forward<R>(r)...);
}
// dst = a * dst + b
template <class T, class... R>
void FusedMulAdd(const LocalTensor<T>& d, const LocalTensor<T>& a, const LocalTensor<T>& b, R&&... r) {
    detail::binary(isa::Opcode::VMADD, d, a, b, std::forward<R>(r)...);
}

// ---- vector-scalar: dst = a op s ----
template <class T, class... R>
void Adds(const LocalTensor<T>& d, const LocalTensor<T>& a, T s, R&&... r) {
    detail::unary(isa::Opcode::VADDS, detail::value(s), d, a, std::forward<R>(r)...);
}
template <class T, class... R>
void Muls(const LocalTensor<T>& d, const LocalTensor<T>& a, T s, R&&... r) {
    detail::unary(isa::Opcode::VMULS, detail::value(s), d, a, std::forward<R>(r)...);
}
template <class T, class... R>
void Maxs(const LocalTensor<T>& d, const LocalTensor<T>& a, T s, R&&... r) {
    detail::unary(isa::Opcode::VMAXS, detail::value(s), d, a, std::forward<R>(r)...);
}
template <class T, class... R>
void Mins(const LocalTensor<T>& d, const LocalTensor<T>& a, T s, R&&... r) {
    detail::unary(isa::Opcode::VMINS, detail::value(s), d, a, std::forward<R>(r)...);
}
// dst = a >= 0 ? a : a * s
template <class T, class... R>
void LeakyRelu(const LocalTensor<T>& d, const LocalTensor<T>& a, T s, R&&... r) {
    detail::unary(isa::Opcode::VLRELU, detail::value(s), d, a, std::forward<R>(r)...);
}
// dst = a * s + dst
template <class T, class... R>
void Axpy(const LocalTensor<T>& d, const LocalTensor<T>& a, T s, R&&... r) {
    detail::unary(isa::Opcode::VAXPY, detail::value(s), d, a, std::forward<R>(r)...);
}

// ---- unary: dst = f(a) ----
template <class T, class... R>
void Exp(const LocalTensor<T>& d, const LocalTensor<T>& a, R&&... r) {
    detail::unary(isa::Opcode::VEXP, 0, d, a, std::forward<R>(r)...);
}
template <class T, class... R>
void Ln(const LocalTensor<T>& d, const LocalTensor<T>& a, R&&... r) {
    detail::unary(isa::Opcode::VLN, 0, d, a, std::forward<R>(r)...);
}
template <class T, class... R>
void Sqrt(const LocalTensor<T>& d, const LocalTensor<T>& a, R&&... r) {
    detail::unary(isa::Opcode::VSQRT, 0, d, a, std::forward<R>(r)...);
}
template <class T, class... R>
void Rsqrt(const LocalTensor<T>& d, const LocalTensor<T>& a, R&&... r) {
    detail::unary(isa::Opcode::VRSQRT, 0, d, a, std::forward<R>(r)...);
}
template <class T, class... R>
void Reciprocal(const LocalTensor<T>& d, const LocalTensor<T>& a, R&&... r) {
    detail::unary(isa::Opcode::VREC, 0, d, a, std::forward<R>(r)...);
}
template <class T, class... R>
void Abs(const LocalTensor<T>& d, const LocalTensor<T>& a, R&&... r) {
    detail::unary(isa::Opcode::VABS, 0, d, a, std::forward<R>(r)...);
}
template <class T, class... R>
void Relu(const LocalTensor<T>& d, const LocalTensor<T>& a, R&&... r) {
    detail::unary(isa::Opcode::VRELU, 0, d, a, std::forward<R>(r)...);
}
template <class T, class... R>
void Not(const LocalTensor<T>& d, const LocalTensor<T>& a, R&&... r) {
    detail::unary(isa::Opcode::VNOT, 0, d, a, std::forward<R>(r)...);
}

// ---- fill ----
template <class T>
void Duplicate(const LocalTensor<T>& d, T s, uint64_t count) {
    detail::vec_count(d.ctx(), isa::Opcode::VDUP, detail::dt<T>(), detail::dt<T>(),
                      {detail::at(d), {}, {}, {}}, count, {}, detail::value(s));
}
template <class T>
void Duplicate(const LocalTensor<T>& d, T s, const VecMask& m, uint8_t repeat, uint16_t dstBlkStride,
               uint16_t dstRepStride) {
    detail::vec_one(d.ctx(), isa::Opcode::VDUP, detail::dt<T>(), {detail::at(d), {}, {}, {}},
                    detail::rep(m, repeat, UnaryRepeatParams{dstBlkStride, 1, dstRepStride, 8}),
                    detail::value(s));
}

// ---- conversion: dst(D) = round(src(S)) ----
template <class D, class S>
void Cast(const LocalTensor<D>& d, const LocalTensor<S>& a, RoundMode mode, uint64_t count) {
    isa::VecParams v;
    v.src_dtype = detail::dt<S>(), v.round = mode;
    detail::vec_count(d.ctx(), isa::Opcode::VCONV, detail::dt<D>(), detail::dt<S>(),
                      {detail::at(d), detail::at(a), {}, {}}, count, v, 0);
}
template <class D, class S>
void Cast(const LocalTensor<D>& d, const LocalTensor<S>& a, RoundMode mode, const VecMask& m, uint8_t repeat,
          const UnaryRepeatParams& p) {
    isa::VecParams v = detail::rep(m, repeat, p);
    v.src_dtype = detail::dt<S>(), v.round = mode;
    detail::vec_one(d.ctx(), isa::Opcode::VCONV, detail::dt<D>(), {detail::at(d), detail::at(a), {}, {}}, v,
                    0);
}

// ---- compare / select: bitmasks hold one bit per lane, lanes-per-repeat / 8 bytes a repeat ----
template <class T>
void Compare(const LocalTensor<uint8_t>& bits, const LocalTensor<T>& a, const LocalTensor<T>& b, CmpMode c,
             uint64_t count) {
    detail::vec_count(a.ctx(), isa::Opcode::VCMP, detail::dt<T>(), detail::dt<T>(),
                      {detail::at(bits), detail::at(a), detail::at(b), {}}, count, detail::with_cmp<T>(c), 0);
}
template <class T>
void Compares(const LocalTensor<uint8_t>& bits, const LocalTensor<T>& a, T s, CmpMode c, uint64_t count) {
    detail::vec_count(a.ctx(), isa::Opcode::VCMPS, detail::dt<T>(), detail::dt<T>(),
                      {detail::at(bits), detail::at(a), {}, {}}, count, detail::with_cmp<T>(c),
                      detail::value(s));
}
// dst = bit ? a : b
template <class T>
void Select(const LocalTensor<T>& d, const LocalTensor<uint8_t>& bits, const LocalTensor<T>& a,
            const LocalTensor<T>& b, uint64_t count) {
    detail::vec_count(d.ctx(), isa::Opcode::VSEL, detail::dt<T>(), detail::dt<T>(),
                      {detail::at(d), detail::at(a), detail::at(b), detail::at(bits)}, count,
                      detail::kVecDefaults, 0);
}

// ---- reductions ----
// Per repeat (Ascend C WholeReduce*): one result (value, or value + index) per repeat,
// dstRepStride results apart.
namespace detail {
template <class T>
void reduce_each(isa::Opcode op, const LocalTensor<T>& d, const LocalTensor<T>& a, const VecMask& m,
                 uint8_t repeat, uint16_t dstRepStride, uint16_t srcBlkStride, uint16_t srcRepStride,
                 bool withIndex) {
    isa::VecParams v = detail::rep(m, repeat, UnaryRepeatParams{1, srcBlkStride, dstRepStride, srcRepStride});
    v.with_index = withIndex ? 1 : 0;
    detail::vec_one(d.ctx(), op, detail::dt<T>(), {detail::at(d), detail::at(a), {}, {}}, v, 0);
}
}  // namespace detail
template <class T, class... R>
void WholeReduceSum(const LocalTensor<T>& d, const LocalTensor<T>& a, R&&... r) {
    detail::reduce_each(isa::Opcode::VRED_SUM, d, a, std::forward<R>(r)..., false);
}
template <class T, class... R>
void WholeReduceMax(const LocalTensor<T>& d, const LocalTensor<T>& a, R&&... r) {
    detail::reduce_each(isa::Opcode::VRED_MAX, d, a, std::forward<R>(r)...);
}
template <class T, class... R>
void WholeReduceMin(const LocalTensor<T>& d, const LocalTensor<T>& a, R&&... r) {
    detail::reduce_each(isa::Opcode::VRED_MIN, d, a, std::forward<R>(r)...);
}
// Whole reductions over `count` elements into d[0] (and the index after it for max/min).
namespace detail {
template <class T>
void reduce_all(isa::Opcode op, const LocalTensor<T>& d, const LocalTensor<T>& a, uint64_t count,
                bool withIndex) {
    isa::VecParams v;
    v.with_index = withIndex ? 1 : 0;
    detail::vec_count(d.ctx(), op, detail::dt<T>(), detail::dt<T>(), {detail::at(d), detail::at(a), {}, {}},
                      count, v, 0);
}
}  // namespace detail
template <class T>
void ReduceSum(const LocalTensor<T>& d, const LocalTensor<T>& a, uint64_t count) {
    detail::reduce_all(isa::Opcode::VREDALL_SUM, d, a, count, false);
}
template <class T>
void ReduceMax(const LocalTensor<T>& d, const LocalTensor<T>& a, uint64_t count, bool withIndex = false) {
    detail::reduce_all(isa::Opcode::VREDALL_MAX, d, a, count, withIndex);
}
template <class T>
void ReduceMin(const LocalTensor<T>& d, const LocalTensor<T>& a, uint64_t count, bool withIndex = false) {
    detail::reduce_all(isa::Opcode::VREDALL_MIN, d, a, count, withIndex);
}

// ---- data rearrangement ----
// Each of the 8 source elements of a repeat fills one 32-byte block of dst.
template <class T>
void Brcb(const LocalTensor<T>& d, const LocalTensor<T>& a, uint8_t repeat, uint16_t dstBlkStride = 1,
          uint16_t dstRepStride = 8) {
    detail::vec_one(d.ctx(), isa::Opcode::VBRCB, detail::dt<T>(), {detail::at(d), detail::at(a), {}, {}},
                    detail::rep(VecMask(), repeat, UnaryRepeatParams{dstBlkStride, 1, dstRepStride, 8}), 0);
}
// 16x16 transposes of 16-bit elements, `repeat` of them 512 bytes apart.
template <class T>
void Transpose(const LocalTensor<T>& d, const LocalTensor<T>& a, uint8_t repeat = 1) {
    static_assert(sizeof(T) == 2, "Transpose works on 16-bit elements");
    detail::vec_one(d.ctx(), isa::Opcode::VTRANSPOSE, detail::dt<T>(), {detail::at(d), detail::at(a), {}, {}},
                    detail::rep(VecMask(), repeat, UnaryRepeatParams{1, 1, 16, 16}), 0);
}
// dst[i] = *(src + byte offset offsets[i]), offsets within srcSpanBytes.
template <class T>
void Gather(const LocalTensor<T>& d, const LocalTensor<T>& src, const LocalTensor<uint32_t>& offsets,
            uint32_t srcSpanBytes, uint64_t count) {
    isa::VecParams v;
    v.gather_span = srcSpanBytes;
    detail::vec_count(d.ctx(), isa::Opcode::VGATHER, detail::dt<T>(), detail::dt<T>(),
                      {detail::at(d), detail::at(src), detail::at(offsets), {}}, count, v, 0);
}

// An index vector (vci): d[i] = first + i for i < count, in whole repeats and a masked last one.
namespace detail {
void index_count(KernelContext& ctx, isa::DType t, const isa::Addr& d, double first, uint64_t count);
}
template <class T>
void CreateVecIndex(const LocalTensor<T>& d, T first, uint64_t count) {
    detail::index_count(d.ctx(), detail::dt<T>(), detail::at(d), static_cast<double>(first), count);
}
// Lane pairs summed (vcpadd): per repeat the lanes / 2 sums packed, repeats dstRepStride x 128
// bytes apart.
template <class T>
void PairReduceSum(const LocalTensor<T>& d, const LocalTensor<T>& a, const VecMask& m, uint8_t repeat,
                   uint16_t dstRepStride = 1, uint16_t srcBlkStride = 1, uint16_t srcRepStride = 8) {
    detail::vec_one(d.ctx(), isa::Opcode::VCPADD, detail::dt<T>(), {detail::at(d), detail::at(a), {}, {}},
                    detail::rep(m, repeat, UnaryRepeatParams{1, srcBlkStride, dstRepStride, srcRepStride}),
                    0);
}

// GatherMask (vreducev2): of `repeat` whole repeats of a, the lanes a fixed pattern (1 even, 2 odd,
// 3..6 lane 0..3 of every four, 7 all) or a bit tensor (one bit per lane, repeats srcPatRepStride
// blocks apart) selects, packed into d in order.
template <class T>
void GatherMask(const LocalTensor<T>& d, const LocalTensor<T>& a, uint8_t pattern, uint8_t repeat,
                uint16_t srcRepStride = 8) {
    isa::VecParams v = detail::rep(VecMask(), repeat, UnaryRepeatParams{1, 1, 8, srcRepStride});
    detail::vec_one(d.ctx(), isa::Opcode::VREDUCEV2, detail::dt<T>(), {detail::at(d), detail::at(a), {}, {}},
                    v, pattern);
}
template <class T, class U>
void GatherMask(const LocalTensor<T>& d, const LocalTensor<T>& a, const LocalTensor<U>& bits, uint8_t repeat,
                uint16_t srcRepStride = 8, uint16_t srcPatRepStride = 0) {
    isa::VecParams v = detail::rep(VecMask(), repeat, UnaryRepeatParams{1, 1, 8, srcRepStride});
    v.src1_rep_stride = srcPatRepStride;
    detail::vec_one(d.ctx(), isa::Opcode::VREDUCEV2, detail::dt<T>(),
                    {detail::at(d), detail::at(a), detail::at(bits), {}}, v, 0);
}

// Sort32 (vbitsort): `repeat` groups of 32 scores s (fp16/fp32) with their uint32 indices idx, each group
// sorted by score, descending (ties keep their order), into d as 8-byte (score, index) structures.
template <class T>
void Sort32(const LocalTensor<T>& d, const LocalTensor<T>& s, const LocalTensor<uint32_t>& idx,
            uint8_t repeat) {
    isa::VecParams v;
    v.repeat = repeat;
    detail::vec_one(d.ctx(), isa::Opcode::VBITSORT, detail::dt<T>(),
                    {detail::at(d), detail::at(s), detail::at(idx), {}}, v, 0);
}
// MrgSort (vmrgsort4): the first 2, 3 or 4 (c.valid 3, 7, 15) sorted lists of (score, index) structures,
// list i of c.len[i] structures at lists[i], merged by score, descending, into d; `repeat` > 1 needs four
// contiguous lists of one length (each repeat then merges the next four).
template <class T>
void MrgSort4(const LocalTensor<T>& d, const isa::Addr lists[4], const isa::MrgSort4Config& c,
              uint8_t repeat) {
    isa::VecParams v;
    v.repeat = repeat;
    isa::Instr in = isa::make_instr(isa::Opcode::VMRGSORT4);
    in.dtype = detail::dt<T>();
    in.dst = detail::at(d), in.src0 = lists[0], in.src1 = lists[1], in.src2 = lists[2];
    in.vec = v;
    isa::set_mrgsort4_config(in, c, lists[3].addr);
    d.ctx().issue(in);
}
// Gatherb (vgatherb): per repeat, 8 blocks of 32 bytes from src + the byte offsets in off (uint32, 8 per
// repeat; multiples of 32 below `span`, the bytes of src they may address) into d, blocks dstBlkStride and
// repeats dstRepStride blocks apart.
template <class T>
void Gatherb(const LocalTensor<T>& d, const LocalTensor<T>& src, const LocalTensor<uint32_t>& off,
             uint8_t repeat, uint16_t dstBlkStride, uint16_t dstRepStride, uint32_t span) {
    isa::VecParams v;
    v.repeat = repeat, v.dst_blk_stride = dstBlkStride, v.dst_rep_stride = dstRepStride, v.gather_span = span;
    detail::vec_one(d.ctx(), isa::Opcode::VGATHERB, detail::dt<T>(),
                    {detail::at(d), detail::at(src), detail::at(off), {}}, v, 0);
}

// TransDataTo5HD (vnchwconv, isa/instr.h): per repeat, the 16 source blocks of 32 bytes at the UB byte
// addresses src[i] transposed into the 16 destination blocks at dst[j] (2-byte elements: a 16 x 16
// transpose; 4-byte: 16 x 8 into 8 rows of two blocks; 1-byte: half of each block, dstHigh/srcHigh
// choosing which); repeat r > 0 adds r x the repeat strides (32-byte blocks) to every address, a single
// repeat adds them once. Addresses must be multiples of 32.
namespace detail {
void nchwconv(KernelContext& ctx, isa::DType dt, const uint64_t dst[isa::kNchwList],
              const uint64_t src[isa::kNchwList], uint8_t repeat, uint16_t dstRepStride, uint16_t srcRepStride,
              bool dstHigh, bool srcHigh);
template <class T, class = void>
struct has_dtype : std::false_type {};
template <class T>
struct has_dtype<T, std::void_t<decltype(isa::DTypeOf<T>::v)>> : std::true_type {};
// The element type of a data move: the ISA's type of T, else an integer type of T's size.
template <class T>
constexpr isa::DType bits_type() {
    if constexpr (has_dtype<T>::value) return isa::DTypeOf<T>::v;
    else if constexpr (sizeof(T) == 1) return isa::DType::UINT8;
    else if constexpr (sizeof(T) == 2) return isa::DType::INT16;
    else return isa::DType::INT32;
}
}  // namespace detail
template <class T>
void TransDataTo5HD(KernelContext& ctx, const uint64_t dst[isa::kNchwList], const uint64_t src[isa::kNchwList],
                    uint8_t repeat, uint16_t dstRepStride, uint16_t srcRepStride, bool dstHigh = false,
                    bool srcHigh = false) {
    static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4, "TransDataTo5HD: 1-, 2- or 4-byte elements");
    detail::nchwconv(ctx, detail::bits_type<T>(), dst, src, repeat, dstRepStride, srcRepStride, dstHigh, srcHigh);
}

// The core's vector mask register (SetVectorMask in Ascend C).
void SetVectorMask(KernelContext& ctx, const VecMask& m);

}  // namespace sfumato::kernel
