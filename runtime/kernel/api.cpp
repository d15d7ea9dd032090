#include "runtime/kernel/api.h"

#include <algorithm>

namespace sfumato::kernel::detail {

void copy_in(KernelContext& ctx, isa::Pos dst_pos, uint32_t dst, uint64_t src, uint32_t nburst, uint32_t len_bytes,
             uint32_t src_gap_bytes, uint32_t dst_gap_blocks) {
    isa::Instr in;
    in.op = isa::Opcode::COPY_GM_TO_UB;
    in.pipe = Pipe::MTE2;
    in.dst = {dst, dst_pos};
    in.src0 = {src, isa::Pos::GM};
    in.copy = {nburst, len_bytes, src_gap_bytes, dst_gap_blocks};
    ctx.issue(in);
}

void copy_out(KernelContext& ctx, uint64_t dst, isa::Pos src_pos, uint32_t src, uint32_t nburst, uint32_t len_bytes,
              uint32_t src_gap_blocks, uint32_t dst_gap_bytes) {
    isa::Instr in;
    in.op = isa::Opcode::COPY_UB_TO_GM;
    in.pipe = Pipe::MTE3;
    in.dst = {dst, isa::Pos::GM};
    in.src0 = {src, src_pos};
    in.copy = {nburst, len_bytes, src_gap_blocks, dst_gap_bytes};
    ctx.issue(in);
}

uint64_t count_mask_lo(uint32_t n) { return n >= 64 ? ~0ull : ((1ull << n) - 1); }
uint64_t count_mask_hi(uint32_t n) { return n <= 64 ? 0 : n >= 128 ? ~0ull : ((1ull << (n - 64)) - 1); }

void binary_masked(KernelContext& ctx, isa::Opcode op, isa::DType t, const isa::Addr& dst, const isa::Addr& a,
                   const isa::Addr& b, uint64_t mask_lo, uint64_t mask_hi, uint8_t repeat, const BinaryRepeatParams& p) {
    isa::Instr in;
    in.op = op;
    in.pipe = Pipe::V;
    in.dtype = t;
    in.dst = dst;
    in.src0 = a;
    in.src1 = b;
    in.vec.repeat = repeat;
    in.vec.dst_blk_stride = p.dstBlkStride;
    in.vec.src0_blk_stride = p.src0BlkStride;
    in.vec.src1_blk_stride = p.src1BlkStride;
    in.vec.dst_rep_stride = p.dstRepStride;
    in.vec.src0_rep_stride = p.src0RepStride;
    in.vec.src1_rep_stride = p.src1RepStride;
    in.vec.mask_lo = mask_lo;
    in.vec.mask_hi = mask_hi;
    ctx.issue(in);
}

void binary(KernelContext& ctx, isa::Opcode op, isa::DType t, const isa::Addr& dst, const isa::Addr& a,
            const isa::Addr& b, uint64_t count) {
    const uint32_t lanes = 256 / isa::dtype_size(t);
    uint64_t done = 0;
    const BinaryRepeatParams p;
    while (count - done >= lanes) {
        const uint64_t reps = std::min<uint64_t>(255, (count - done) / lanes);
        const uint64_t off = done * isa::dtype_size(t);
        binary_masked(ctx, op, t, {dst.addr + off, dst.pos}, {a.addr + off, a.pos}, {b.addr + off, b.pos},
                      count_mask_lo(lanes), count_mask_hi(lanes), static_cast<uint8_t>(reps), p);
        done += reps * lanes;
    }
    if (done < count) {
        const uint32_t tail = static_cast<uint32_t>(count - done);
        const uint64_t off = done * isa::dtype_size(t);
        binary_masked(ctx, op, t, {dst.addr + off, dst.pos}, {a.addr + off, a.pos}, {b.addr + off, b.pos},
                      count_mask_lo(tail), count_mask_hi(tail), 1, p);
    }
}

}  // namespace sfumato::kernel::detail
