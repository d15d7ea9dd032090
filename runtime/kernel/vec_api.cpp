// Instruction builders behind runtime/kernel/vec_api.h. The count form walks the operands in
// whole repeats (at most 255 per instruction) and issues a masked tail; each operand advances
// by what one repeat of it covers (lanes x element size for data, lanes / 8 bytes for
// compare/select bitmasks, lanes x 4 bytes for gather offsets), so contiguous tensors of any
// count come out right, conversions between sizes included.
#include "runtime/kernel/vec_api.h"

#include <algorithm>

#include "sim/error.h"

namespace sfumato::kernel {

namespace {
uint64_t low_bits(uint64_t n) {
    return n >= 64 ? ~0ull : ((1ull << n) - 1);
}
}  // namespace

VecMask::VecMask(uint64_t count) {
    if (count > 128) throw InputError("vector mask count " + std::to_string(count) + " > 128 lanes");
    lo = low_bits(count);
    hi = count <= 64 ? 0 : low_bits(count - 64);
}

void SetVectorMask(KernelContext& ctx, const VecMask& m) {
    isa::Instr in = isa::make_instr(isa::Opcode::SET_MASK);
    in.vec.mask_lo = m.lo;
    in.vec.mask_hi = m.hi;
    ctx.issue(in);
}

namespace detail {

namespace {

struct Steps {
    uint64_t dst, src0, src1, src2;  // bytes per repeat
};

// Element sizes in bits (int4 has 4).
Steps steps_of(isa::Opcode op, uint32_t lanes, uint32_t bitsd, uint32_t bitss) {
    Steps s{uint64_t{lanes} * bitsd / 8, uint64_t{lanes} * bitss / 8, uint64_t{lanes} * bitsd / 8, 0};
    switch (op) {
        case isa::Opcode::VCMP:
        case isa::Opcode::VCMPS:
            s.dst = lanes / 8;
            break;
        case isa::Opcode::VSEL:
            s.src2 = lanes / 8;
            break;
        case isa::Opcode::VGATHER:
            s.src0 = 0, s.src1 = uint64_t{lanes} * 4;
            break;
        default:
            break;
    }
    return s;
}

bool whole_reduction(isa::Opcode op) {
    return op == isa::Opcode::VREDALL_SUM || op == isa::Opcode::VREDALL_MAX || op == isa::Opcode::VREDALL_MIN;
}

isa::Addr advance(const isa::Addr& a, uint64_t bytes) {
    return {a.addr + bytes, a.pos};
}

// Mask for the first n lanes of a repeat of `lanes` lanes (1-byte types use one bit per 2 lanes).
void set_count_mask(isa::VecParams& v, uint64_t n, uint32_t lanes, isa::Opcode op) {
    uint64_t bits = n;
    if (lanes > 128) {
        if (n % 2)
            throw InputError(std::string(isa::opcode_name(op)) +
                             ": an odd count of 1-byte lanes cannot be masked");
        bits = n / 2;
    }
    const VecMask m(bits);
    v.mask_lo = m.lo;
    v.mask_hi = m.hi;
}

}  // namespace

isa::VecParams rep(const VecMask& m, uint8_t repeat, const BinaryRepeatParams& p) {
    isa::VecParams v;
    v.repeat = repeat;
    v.mask_lo = m.lo, v.mask_hi = m.hi;
    v.dst_blk_stride = p.dstBlkStride, v.src0_blk_stride = p.src0BlkStride,
    v.src1_blk_stride = p.src1BlkStride;
    v.dst_rep_stride = p.dstRepStride, v.src0_rep_stride = p.src0RepStride,
    v.src1_rep_stride = p.src1RepStride;
    return v;
}

isa::VecParams rep(const VecMask& m, uint8_t repeat, const UnaryRepeatParams& p) {
    return rep(m, repeat,
               BinaryRepeatParams{p.dstBlkStride, p.srcBlkStride, 1, p.dstRepStride, p.srcRepStride, 8});
}

void vec_one(KernelContext& ctx, isa::Opcode op, isa::DType dt, const VecArgs& a, const isa::VecParams& v,
             double scalar) {
    isa::Instr in = isa::make_instr(op);
    in.dtype = dt;
    in.dst = a.dst;
    in.src0 = a.src0;
    in.src1 = a.src1;
    in.src2 = a.src2;
    in.vec = v;
    in.scalar = scalar;
    ctx.issue(in);
}

void vec_count(KernelContext& ctx, isa::Opcode op, isa::DType dt, isa::DType st, const VecArgs& a,
               uint64_t count, const isa::VecParams& tmpl, double scalar) {
    if (count == 0) return;
    const uint32_t bd = isa::dtype_bits(dt), bs = isa::dtype_bits(st);  // int4: 4 bits
    const uint32_t lanes = 2048 / std::max(bd, bs);
    // The instruction is built once, in place, in the context's scratch instruction: every field
    // that make_instr sets and the compare reads is written here (the operands' positions come with
    // their addresses), so no fresh instruction is made per call; each one issued changes only its
    // operands, repeat and mask. (Copying a parameter block written just before, as a whole, waits
    // for its stores.)
    isa::Instr& in = ctx.vec_scratch();
    in.op = op;
    in.pipe = isa::default_pipe(op);
    in.dtype = dt;
    in.scalar = scalar;
    isa::VecParams& v = in.vec;
    v.repeat = tmpl.repeat;
    v.mask_lo = tmpl.mask_lo;
    v.mask_hi = tmpl.mask_hi;
    v.src_dtype = tmpl.src_dtype;
    v.round = tmpl.round;
    v.cmp = tmpl.cmp;
    v.with_index = tmpl.with_index;
    v.gather_span = tmpl.gather_span;
    v.dst_blk_stride = v.src0_blk_stride = v.src1_blk_stride = 1;
    v.dst_rep_stride = static_cast<uint16_t>(lanes * bd / 256);
    v.src0_rep_stride = static_cast<uint16_t>(lanes * bs / 256);
    v.src1_rep_stride = static_cast<uint16_t>(lanes * bd / 256);
    auto issue_at = [&](uint64_t reps_done, const Steps& s) {
        in.dst = advance(a.dst, reps_done * s.dst);
        in.src0 = advance(a.src0, reps_done * s.src0);
        in.src1 = advance(a.src1, reps_done * s.src1);
        in.src2 = advance(a.src2, reps_done * s.src2);
        ctx.issue(in);
    };
    if (whole_reduction(op)) {
        if (count <= lanes) {
            v.repeat = 1;
            set_count_mask(v, count, lanes, op);
        } else if (count % lanes == 0 && count / lanes <= 255) {
            v.repeat = static_cast<uint16_t>(count / lanes);
        } else {
            throw InputError(std::string(isa::opcode_name(op)) + ": a whole reduction of " +
                             std::to_string(count) + " elements needs a multiple of " +
                             std::to_string(lanes) + " up to " + std::to_string(255 * lanes));
        }
        issue_at(0, Steps{0, 0, 0, 0});
        return;
    }
    const Steps s = steps_of(op, lanes, bd, bs);
    uint64_t done = 0;  // repeats issued
    const uint64_t full = count / lanes;
    // Each instruction after the first is another iteration of this loop in the scalar code.
    const uint32_t advance_ops = (s.src2 ? 4 : 3) * ApiOps::kAddressAdvance;
    bool first = true;
    auto iteration = [&] {
        if (!first) ctx.scalar(ApiOps::kLoopIteration + advance_ops);
        first = false;
    };
    while (done < full) {
        iteration();
        const uint64_t reps = std::min<uint64_t>(255, full - done);
        v.repeat = static_cast<uint16_t>(reps);
        v.mask_lo = v.mask_hi = ~0ull;
        issue_at(done, s);
        done += reps;
    }
    if (const uint64_t tail = count - full * lanes; tail > 0) {
        if ((done * s.dst) % 32 || (done * s.src2) % 32)
            throw InputError(std::string(isa::opcode_name(op)) + ": count " + std::to_string(count) +
                             " leaves a bitmask tail off 32-byte alignment (use whole groups of " +
                             std::to_string(32 * 8 / lanes) + " repeats, or the mask/repeat form)");
        iteration();
        v.repeat = 1;
        set_count_mask(v, tail, lanes, op);
        issue_at(done, s);
    }
}

void index_count(KernelContext& ctx, isa::DType t, const isa::Addr& d, double first, uint64_t count) {
    const uint32_t lanes = 256 / isa::dtype_size(t);
    uint64_t done = 0;  // elements written
    while (done < count) {
        // Each instruction after the first is another loop iteration (dst and the first value advance).
        if (done) ctx.scalar(ApiOps::kLoopIteration + 2 * ApiOps::kAddressAdvance);
        const uint64_t left = count - done;
        isa::VecParams v;
        v.repeat = static_cast<uint16_t>(left >= lanes ? std::min<uint64_t>(left / lanes, 255) : 1);
        const uint64_t on = std::min<uint64_t>(left, lanes);
        set_count_mask(v, on, lanes, isa::Opcode::VCI);
        vec_one(ctx, isa::Opcode::VCI, t, {advance(d, done * isa::dtype_size(t)), {}, {}, {}}, v,
                first + static_cast<double>(done));
        done += v.repeat * on;
    }
}

void nchwconv(KernelContext& ctx, isa::DType dt, const uint64_t dst[isa::kNchwList],
              const uint64_t src[isa::kNchwList], uint8_t repeat, uint16_t dstRepStride, uint16_t srcRepStride,
              bool dstHigh, bool srcHigh) {
    isa::Instr in = isa::make_instr(isa::Opcode::VNCHWCONV);
    in.dtype = dt;
    in.nchw.repeat = repeat;
    in.nchw.dst_rep_stride = dstRepStride, in.nchw.src_rep_stride = srcRepStride;
    in.nchw.dst_high = dstHigh, in.nchw.src_high = srcHigh;
    if (std::string e = isa::set_nchw_lists(in, dst, src); !e.empty()) throw InputError("vnchwconv: " + e);
    ctx.issue(in);
}

}  // namespace detail

}  // namespace sfumato::kernel
