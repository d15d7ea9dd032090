// The kernel-facing instruction API (Ascend-C-like): DataCopy/DataCopyPad between GM and local
// buffers, and vector arithmetic with counts or explicit mask/repeat/stride parameters. Each call
// builds ISA instructions and issues them through the tensor's kernel context.
#pragma once
#include "runtime/kernel/tensor.h"
#include "runtime/kernel/tpipe.h"

namespace sfumato::kernel {

struct BinaryRepeatParams {
    uint16_t dstBlkStride = 1, src0BlkStride = 1, src1BlkStride = 1;
    uint16_t dstRepStride = 8, src0RepStride = 8, src1RepStride = 8;
};

// Burst copy parameters in the Ascend C convention (lengths and local strides in 32 B blocks).
struct DataCopyParams {
    uint16_t blockCount = 1;
    uint16_t blockLen = 0;
    uint16_t srcStride = 0;
    uint16_t dstStride = 0;
};

namespace detail {
void copy_in(KernelContext& ctx, isa::Pos dst_pos, uint32_t dst, uint64_t src, uint32_t nburst, uint32_t len_bytes,
             uint32_t src_gap_bytes, uint32_t dst_gap_blocks);
void copy_out(KernelContext& ctx, uint64_t dst, isa::Pos src_pos, uint32_t src, uint32_t nburst, uint32_t len_bytes,
              uint32_t src_gap_blocks, uint32_t dst_gap_bytes);
void binary(KernelContext& ctx, isa::Opcode op, isa::DType t, const isa::Addr& dst, const isa::Addr& a,
            const isa::Addr& b, uint64_t count);
void binary_masked(KernelContext& ctx, isa::Opcode op, isa::DType t, const isa::Addr& dst, const isa::Addr& a,
                   const isa::Addr& b, uint64_t mask_lo, uint64_t mask_hi, uint8_t repeat, const BinaryRepeatParams& p);
uint64_t count_mask_lo(uint32_t n);
uint64_t count_mask_hi(uint32_t n);
template <class T>
isa::Addr addr(const LocalTensor<T>& t) { return {t.address(), t.pos()}; }
}  // namespace detail

// GM -> local, `count` elements (any count: the local side is padded to 32 B).
template <class T>
void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint32_t count) {
    detail::copy_in(dst.ctx(), dst.pos(), dst.address(), src.address(), 1, count * sizeof(T), 0, 0);
}
// local -> GM, `count` elements (exactly count * sizeof(T) bytes reach GM).
template <class T>
void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, uint32_t count) {
    detail::copy_out(src.ctx(), dst.address(), src.pos(), src.address(), 1, count * sizeof(T), 0, 0);
}
template <class T>
void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p) {
    detail::copy_in(dst.ctx(), dst.pos(), dst.address(), src.address(), p.blockCount, p.blockLen * 32u, p.srcStride * 32u, p.dstStride);
}
template <class T>
void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p) {
    detail::copy_out(src.ctx(), dst.address(), src.pos(), src.address(), p.blockCount, p.blockLen * 32u, p.srcStride, p.dstStride * 32u);
}

#define SFUMATO_BINARY_API(Name, OP)                                                                          \
    template <class T>                                                                                        \
    void Name(const LocalTensor<T>& dst, const LocalTensor<T>& a, const LocalTensor<T>& b, uint32_t count) { \
        detail::binary(dst.ctx(), isa::Opcode::OP, isa::DTypeOf<T>::v, detail::addr(dst), detail::addr(a),    \
                       detail::addr(b), count);                                                               \
    }                                                                                                         \
    template <class T>                                                                                        \
    void Name(const LocalTensor<T>& dst, const LocalTensor<T>& a, const LocalTensor<T>& b, uint64_t mask,     \
              uint8_t repeat, const BinaryRepeatParams& p) {                                                  \
        detail::binary_masked(dst.ctx(), isa::Opcode::OP, isa::DTypeOf<T>::v, detail::addr(dst),             \
                              detail::addr(a), detail::addr(b), detail::count_mask_lo(static_cast<uint32_t>(mask)), \
                              detail::count_mask_hi(static_cast<uint32_t>(mask)), repeat, p);                 \
    }                                                                                                         \
    template <class T>                                                                                        \
    void Name(const LocalTensor<T>& dst, const LocalTensor<T>& a, const LocalTensor<T>& b,                    \
              const uint64_t mask[2], uint8_t repeat, const BinaryRepeatParams& p) {                          \
        detail::binary_masked(dst.ctx(), isa::Opcode::OP, isa::DTypeOf<T>::v, detail::addr(dst),             \
                              detail::addr(a), detail::addr(b), mask[0], mask[1], repeat, p);                 \
    }

SFUMATO_BINARY_API(Add, VADD)
SFUMATO_BINARY_API(Sub, VSUB)
SFUMATO_BINARY_API(Mul, VMUL)
SFUMATO_BINARY_API(Div, VDIV)
SFUMATO_BINARY_API(Max, VMAX)
SFUMATO_BINARY_API(Min, VMIN)
#undef SFUMATO_BINARY_API

}  // namespace sfumato::kernel
