// The kernel-facing instruction API (Ascend-C-like), data movement, cube and synchronisation
// part: DataCopy/DataCopyPad between GM and local buffers (and between local buffers), ND->NZ
// loads into L1, LoadData (load2d, load3d), InitConstValue, Mmad, Fixpipe (and the coupled
// L0C->UB drain), pipe flags, cross-core flags and block identity. The vector part is in
// runtime/kernel/vec_api.h (included below), so a kernel includes this one header.
// Every call builds ISA instructions and issues them through the tensor's kernel context; the
// core charges the scalar unit for each issued instruction what issuing it takes
// (`scalar.issue_cycles` plus `scalar.setup_cycles` per address and parameter word it needs),
// and the API charges its own bookkeeping (queue operations, the loops that split a call into
// several instructions) through KernelContext::scalar (ApiOps). Simplified: parameters use the ISA's field widths; a call whose parameters do
// not fit the instruction throws InputError naming the call.
#pragma once
#include "runtime/kernel/tensor.h"
#include "runtime/kernel/tpipe.h"

namespace sfumato::kernel {

// Burst copy parameters in the Ascend C convention (lengths and local strides in 32 B blocks).
struct DataCopyParams {
    uint16_t blockCount = 1;
    uint16_t blockLen = 0;
    uint16_t srcStride = 0;
    uint16_t dstStride = 0;
};
// Byte-exact bursts (DataCopyPad): blockLen and the GM-side stride in bytes, the local-side
// stride in 32 B blocks.
struct DataCopyExtParams {
    uint32_t blockCount = 1;
    uint32_t blockLen = 0;
    uint32_t srcStride = 0;
    uint32_t dstStride = 0;
};
template <class T>
struct DataCopyPadExtParams {
    bool isPad = false;
    uint8_t leftPadding = 0, rightPadding = 0;  // elements
    T paddingValue = T();
};
// ND -> NZ while loading GM into L1 (strides as in isa::NdNzParams).
struct Nd2NzParams {
    uint16_t ndNum = 1;
    uint16_t nValue = 0, dValue = 0;
    uint32_t srcNdMatrixStride = 0, srcDValue = 0;
    uint16_t dstNzC0Stride = 0, dstNzNStride = 1;
    uint32_t dstNzMatrixStride = 0;
};
struct LoadData2DParams {
    uint16_t startIndex = 0;
    uint16_t repeatTimes = 1;
    uint16_t srcStride = 1;
    uint16_t dstGap = 0;
    bool ifTranspose = false;
};
// L1 -> L0A/L0B with transpose (LoadDataWithTranspose): 16-bit types transpose each fractal;
// 1- and 4-byte types transpose squares of two fractals (see isa::Load2dParams): startIndex
// and srcStride count squares, dstFracGap places the second fractal of each square.
struct LoadData2dTransposeParams {
    uint16_t startIndex = 0;
    uint16_t repeatTimes = 1;
    uint16_t srcStride = 1;
    uint16_t dstGap = 0;
    uint16_t dstFracGap = 0;
};
// img2col from an NC1HWC0 feature map in L1 into L0A, or into L0B as the B operand (see
// isa::Load3dParams).
struct LoadData3DParams {
    uint16_t l1H = 1, l1W = 1, c1 = 1;
    uint8_t filterH = 1, filterW = 1;
    uint8_t strideH = 1, strideW = 1;
    uint8_t dilationH = 1, dilationW = 1;
    uint8_t padList[4] = {0, 0, 0, 0};  // left, right, top, bottom
    uint16_t mStartPt = 0, mExtension = 16;
    uint16_t kStartPt = 0, kExtension = 16;
    double padValue = 0.0;
    bool transpose = false;  // into L0B with the pixels as K (isa::Load3dParams::transpose)
};
struct InitConstValueParams {
    uint16_t repeatTimes = 1;
    uint16_t blockNum = 1;
    uint16_t dstGap = 0;
    double initValue = 0.0;
};
// cmatrixInitVal = true overwrites C (C = A x B [+ bias]); false accumulates (C += A x B).
struct MmadParams {
    uint16_t m = 0, n = 0, k = 0;
    bool cmatrixInitVal = true;
    // m = 1 only: A is a row vector of k contiguous elements in L0A (the cube's GEMV mode).
    bool gemv = false;
    // fp32 A whose rows in L0A hold k padded to a multiple of 16 (as a transposing load3d leaves
    // them): the cube skips the padding (the vendor's MmadParams::kDirectionAlign).
    bool kDirectionAlign = false;
    // 0, 2 or 3: the L0C unit bits (isa::MadParams::unit_flag) instead of an M -> FIX flag.
    uint8_t unitFlag = 0;
    // The sparse mad (MmadWithSparse sets it): B is a densified int8 matrix a LoadDataWithSparse left in
    // L0B with its index (isa::MadParams::sparse); k is A's.
    bool sparse = false;
};
// Accumulator drain: mSize x nSize of an NZ L0C tile (column fractals srcStride rows apart),
// to ND (nz2ndEn, row stride dstStride elements) or NZ (column groups dstStride blocks apart).
struct FixpipeParams {
    uint16_t nSize = 0, mSize = 0;
    uint16_t srcStride = 0;  // 0 = mSize rounded up to 16
    uint32_t dstStride = 0;  // 0 = nSize (ND) or mSize (NZ)
    isa::QuantMode quantPre = isa::QuantMode::NONE;
    double deqScalar = 1.0;
    bool reluEn = false;
    bool nz2ndEn = true;
    // Add into GM instead of overwriting (SetAtomicAdd<T>() before the Fixpipe in Ascend C).
    bool atomicAdd = false;
    // NZ fp32 output as 16 x 8 fractals (C0 = 32 B, as for every other output type; the default)
    // or, false, as the accumulator's 16 x 16 (64-byte rows). Ignored for other outputs and ND.
    bool channelSplit = true;
    // 0, 2 or 3: read L0C once a Mmad with a unit flag wrote it (isa::FixpipeParams::unit_flag).
    uint8_t unitFlag = 0;
    // ND output only: ndNum matrices, the sources srcNdStride x 1024 B of L0C apart, the
    // destinations dstNdStride elements apart.
    uint16_t ndNum = 1, srcNdStride = 0;
    uint32_t dstNdStride = 0;
};

namespace detail {
template <class T>
isa::Addr addr(const LocalTensor<T>& t) {
    return {t.address(), t.pos()};
}
void copy_in(KernelContext& ctx, isa::DType t, isa::Pos dst_pos, uint32_t dst, uint64_t src,
             const isa::CopyParams& c, double pad_value);
void copy_out(KernelContext& ctx, isa::DType t, uint64_t dst, isa::Pos src_pos, uint32_t src,
              const isa::CopyParams& c);
void copy_local(KernelContext& ctx, isa::DType t, const isa::Addr& dst, const isa::Addr& src,
                const isa::CopyParams& c);
void nd2nz(KernelContext& ctx, isa::DType t, const isa::Addr& dst, uint64_t src, const Nd2NzParams& p);
void load2d(KernelContext& ctx, isa::DType t, const isa::Addr& dst, const isa::Addr& src,
            const LoadData2DParams& p);
void load2d_transpose(KernelContext& ctx, isa::DType t, const isa::Addr& dst, const isa::Addr& src,
                      const LoadData2dTransposeParams& p);
void load3d(KernelContext& ctx, isa::DType t, const isa::Addr& dst, const isa::Addr& src,
            const LoadData3DParams& p);
void load2d_sparse(KernelContext& ctx, const isa::Addr& dst, const isa::Addr& src, const isa::Addr& idx,
                   const LoadData2DParams& p);
void fill(KernelContext& ctx, isa::DType t, const isa::Addr& dst, const InitConstValueParams& p);
void mmad(KernelContext& ctx, isa::DType t, const isa::Addr& c, const isa::Addr& a, const isa::Addr& b,
          const isa::Addr* bias, const MmadParams& p);
void fixpipe(KernelContext& ctx, isa::Opcode op, isa::DType acc, isa::DType out, const isa::Addr& dst,
             const isa::Addr& src, const isa::Addr* scales, const FixpipeParams& p);
isa::CopyParams blocks(const DataCopyParams& p);
isa::CopyParams bytes(const DataCopyExtParams& p);
}  // namespace detail

// ---- GM <-> local ----
// GM -> local, `count` elements (any count: the local side is padded to 32 B).
template <class T>
void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint32_t count) {
    detail::copy_in(dst.ctx(), isa::DTypeOf<T>::v, dst.pos(), dst.address(), src.address(),
                    {1, count * uint32_t{sizeof(T)}, 0, 0}, 0);
}
// local -> GM, `count` elements (exactly count * sizeof(T) bytes reach GM).
template <class T>
void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, uint32_t count) {
    detail::copy_out(src.ctx(), isa::DTypeOf<T>::v, dst.address(), src.pos(), src.address(),
                     {1, count * uint32_t{sizeof(T)}, 0, 0});
}
template <class T>
void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p) {
    detail::copy_in(dst.ctx(), isa::DTypeOf<T>::v, dst.pos(), dst.address(), src.address(), detail::blocks(p),
                    0);
}
template <class T>
void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p) {
    // Outbound: the local (source) stride counts blocks, the GM (destination) stride bytes.
    const isa::CopyParams c{p.blockCount, p.blockLen * 32u, p.srcStride, p.dstStride * 32u};
    detail::copy_out(src.ctx(), isa::DTypeOf<T>::v, dst.address(), src.pos(), src.address(), c);
}
// local -> local (L1->UB, UB->L1, UB->UB), strides in blocks on both sides.
template <class T>
void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p) {
    // Both gaps stay in blocks (the ISA's unit for local sides).
    const isa::CopyParams c{p.blockCount, p.blockLen * 32u, p.srcStride, p.dstStride};
    detail::copy_local(dst.ctx(), isa::DTypeOf<T>::v, detail::addr(dst), detail::addr(src), c);
}
// GM -> L1 with ND -> NZ conversion.
template <class T>
void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const Nd2NzParams& p) {
    detail::nd2nz(dst.ctx(), isa::DTypeOf<T>::v, detail::addr(dst), src.address(), p);
}
template <class T>
void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyExtParams& p,
                 const DataCopyPadExtParams<T>& pad = {}) {
    isa::CopyParams c = detail::bytes(p);
    if (pad.isPad) c.pad_left = pad.leftPadding, c.pad_right = pad.rightPadding;
    detail::copy_in(dst.ctx(), isa::DTypeOf<T>::v, dst.pos(), dst.address(), src.address(), c,
                    static_cast<double>(static_cast<float>(pad.paddingValue)));
}
// local -> GM, byte-exact: srcStride in blocks, dstStride in bytes.
template <class T>
void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyExtParams& p) {
    detail::copy_out(src.ctx(), isa::DTypeOf<T>::v, dst.address(), src.pos(), src.address(),
                     detail::bytes(p));
}
// UB -> GM adding into what GM holds (SetAtomicAdd + DataCopy in Ascend C).
template <class T>
void DataCopyAtomicAdd(const GlobalTensor<T>& dst, const LocalTensor<T>& src, uint32_t count) {
    isa::CopyParams c{1, count * uint32_t{sizeof(T)}, 0, 0};
    c.atomic = 1;
    detail::copy_out(src.ctx(), isa::DTypeOf<T>::v, dst.address(), src.pos(), src.address(), c);
}

// ---- cube ----
// L1 -> L0A/L0B (or GM -> L0A/L0B), whole fractals, optional per-fractal transpose.
template <class T>
void LoadData(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LoadData2DParams& p) {
    detail::load2d(dst.ctx(), isa::DTypeOf<T>::v, detail::addr(dst), detail::addr(src), p);
}
template <class T>
void LoadData(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const LoadData2DParams& p) {
    detail::load2d(dst.ctx(), isa::DTypeOf<T>::v, detail::addr(dst), {src.address(), isa::Pos::GM}, p);
}
template <class T>
void LoadDataWithTranspose(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LoadData2dTransposeParams& p) {
    detail::load2d_transpose(dst.ctx(), isa::DTypeOf<T>::v, detail::addr(dst), detail::addr(src), p);
}
// 4:2 sparse B (int8): repeatTimes consecutive fractals from fractal startIndex of src (L1) into dst
// (L0B), and their 128-byte index fractals from idx (L1) into the cube's index buffer
// (isa::Load2dParams::sparse); srcStride, dstGap and ifTranspose must keep their defaults.
template <class T>
void LoadDataWithSparse(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>& idx,
                        const LoadData2DParams& p) {
    static_assert(std::is_same_v<T, int8_t>, "LoadDataWithSparse moves int8 matrices");
    detail::load2d_sparse(dst.ctx(), detail::addr(dst), detail::addr(src), detail::addr(idx), p);
}
template <class T>
void LoadData(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LoadData3DParams& p) {
    detail::load3d(dst.ctx(), isa::DTypeOf<T>::v, detail::addr(dst), detail::addr(src), p);
}
template <class T>
void InitConstValue(const LocalTensor<T>& dst, const InitConstValueParams& p) {
    detail::fill(dst.ctx(), isa::DTypeOf<T>::v, detail::addr(dst), p);
}
// C (CO1, fp32 or int32) [+]= A (A2) x B (B2).
template <class C, class T>
void Mmad(const LocalTensor<C>& c, const LocalTensor<T>& a, const LocalTensor<T>& b, const MmadParams& p) {
    detail::mmad(c.ctx(), isa::DTypeOf<T>::v, detail::addr(c), detail::addr(a), detail::addr(b), nullptr, p);
}
// C = A x B + bias (bias in BT, one accumulator-typed entry per column); always overwrites.
template <class C, class T>
void Mmad(const LocalTensor<C>& c, const LocalTensor<T>& a, const LocalTensor<T>& b,
          const LocalTensor<C>& bias, const MmadParams& p) {
    const isa::Addr ba = detail::addr(bias);
    detail::mmad(c.ctx(), isa::DTypeOf<T>::v, detail::addr(c), detail::addr(a), detail::addr(b), &ba, p);
}
// C (int32) [+]= A (int8, m x k) x the sparse B in L0B and the index buffer (LoadDataWithSparse).
template <class C, class T>
void MmadWithSparse(const LocalTensor<C>& c, const LocalTensor<T>& a, const LocalTensor<T>& b, MmadParams p) {
    static_assert(std::is_same_v<C, int32_t> && std::is_same_v<T, int8_t>, "MmadWithSparse: int8 into int32");
    p.sparse = true;
    detail::mmad(c.ctx(), isa::DType::INT8, detail::addr(c), detail::addr(a), detail::addr(b), nullptr, p);
}
// CO1 -> GM through the FixPipe (split cores).
template <class U, class C>
void Fixpipe(const GlobalTensor<U>& dst, const LocalTensor<C>& src, const FixpipeParams& p) {
    detail::fixpipe(src.ctx(), isa::Opcode::FIXPIPE, isa::DTypeOf<C>::v, isa::DTypeOf<U>::v,
                    {dst.address(), isa::Pos::GM}, detail::addr(src), nullptr, p);
}
// CO1 -> L1 through the FixPipe (split cores).
template <class U, class C>
void Fixpipe(const LocalTensor<U>& dst, const LocalTensor<C>& src, const FixpipeParams& p) {
    detail::fixpipe(src.ctx(), isa::Opcode::FIXPIPE, isa::DTypeOf<C>::v, isa::DTypeOf<U>::v,
                    detail::addr(dst), detail::addr(src), nullptr, p);
}
template <class U, class C>
void Fixpipe(const LocalTensor<U>& dst, const LocalTensor<C>& src, const LocalTensor<uint64_t>& scales,
             const FixpipeParams& p) {
    const isa::Addr s = detail::addr(scales);
    detail::fixpipe(src.ctx(), isa::Opcode::FIXPIPE, isa::DTypeOf<C>::v, isa::DTypeOf<U>::v, detail::addr(dst),
                    detail::addr(src), &s, p);
}
// Per-channel quantisation (quantPre VECTOR): one 64-bit quantisation word per column in the
// FixPipe buffer (`scales`, Pos::FB, filled by DataCopy from L1; isa::FixpipeParams has the format).
template <class U, class C>
void Fixpipe(const GlobalTensor<U>& dst, const LocalTensor<C>& src, const LocalTensor<uint64_t>& scales,
             const FixpipeParams& p) {
    const isa::Addr s = detail::addr(scales);
    detail::fixpipe(src.ctx(), isa::Opcode::FIXPIPE, isa::DTypeOf<C>::v, isa::DTypeOf<U>::v,
                    {dst.address(), isa::Pos::GM}, detail::addr(src), &s, p);
}
// CO1 -> UB through the vector pipe (coupled cores), same conversions as the FixPipe.
template <class U, class C>
void DataCopy(const LocalTensor<U>& dst, const LocalTensor<C>& src, const FixpipeParams& p) {
    detail::fixpipe(src.ctx(), isa::Opcode::COPY_L0C_TO_UB, isa::DTypeOf<C>::v, isa::DTypeOf<U>::v,
                    detail::addr(dst), detail::addr(src), nullptr, p);
}

// ---- synchronisation and identity ----
template <Pipe S, Pipe D>
void SetFlag(KernelContext& ctx, uint8_t event_id) {
    ctx.set_flag(S, D, event_id);
}
template <Pipe S, Pipe D>
void WaitFlag(KernelContext& ctx, uint8_t event_id) {
    ctx.wait_flag(S, D, event_id);
}
template <Pipe P>
void PipeBarrier(KernelContext& ctx) {
    ctx.pipe_barrier(P);
}
// Split parts: cross-core counters. mode 0 = all AICs/AIVs of the kernel, 1 = the 2 AIVs of a
// core, 2 = the AIC and AIVs of a core. The set executes after `pipe` drained; the wait blocks
// `pipe`.
// chip_counting: the chip's per-core counters and barrier sets (isa::CrossFlagParams::all), as
// the Ascend C layer issues them.
void CrossCoreSetFlag(KernelContext& ctx, uint8_t mode, uint8_t flag_id, Pipe pipe,
                      bool chip_counting = false);
void CrossCoreWaitFlag(KernelContext& ctx, uint8_t mode, uint8_t flag_id, Pipe pipe,
                       bool chip_counting = false);
// All vector (or all cube) cores of a kernel meet: each sets flag_id in mode 0 after `pipe`
// drained and waits for it in the scalar unit.
void SyncAll(KernelContext& ctx, uint8_t flag_id, Pipe pipe = Pipe::MTE3, bool chip_counting = false);
inline uint32_t GetBlockIdx(const KernelContext& ctx) {
    return ctx.block_idx();
}
inline uint32_t GetBlockNum(const KernelContext& ctx) {
    return ctx.block_num();
}
inline uint32_t GetSubBlockIdx(const KernelContext& ctx) {
    return ctx.sub_block_idx();
}

}  // namespace sfumato::kernel

#include "runtime/kernel/vec_api.h"
