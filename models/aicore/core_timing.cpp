#include "models/aicore/core_timing.h"

#include <algorithm>

#include "isa/semantics.h"

namespace sfumato {

using isa::Opcode;
using isa::Pos;

namespace {

uint64_t ceil_div64(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// Which UB operands of a vector instruction are accessed block by block (src0, src1, dst).
struct VecOperands {
    bool src0 = false, src1 = false, dst = false;
};

VecOperands vec_operands(Opcode op) {
    switch (op) {
        case Opcode::VADD: case Opcode::VSUB: case Opcode::VMUL: case Opcode::VDIV: case Opcode::VMAX:
        case Opcode::VMIN: case Opcode::VAND: case Opcode::VOR: case Opcode::VMADD: case Opcode::VMLA:
        case Opcode::VADDRELU: case Opcode::VSEL:
            return {true, true, true};
        case Opcode::VCMP: return {true, true, false};
        case Opcode::VADDS: case Opcode::VMULS: case Opcode::VMAXS: case Opcode::VMINS: case Opcode::VEXP:
        case Opcode::VLN: case Opcode::VSQRT: case Opcode::VRSQRT: case Opcode::VREC: case Opcode::VABS:
        case Opcode::VRELU: case Opcode::VNOT: case Opcode::VLRELU: case Opcode::VAXPY: case Opcode::VCONV:
            return {true, false, true};
        case Opcode::VCMPS: return {true, false, false};
        default: return {};
    }
}

// One 32-byte block an operand touches in a repeat: its UB row, and whether it is read.
struct Block {
    uint64_t row;
    bool read;
};

// The longest run of equal values in v[0..n) (sorted in place; n <= 24).
uint32_t longest_run(uint64_t* v, int n) {
    for (int i = 1; i < n; ++i) {  // insertion sort: at most 24 entries
        const uint64_t k = v[i];
        int j = i - 1;
        for (; j >= 0 && v[j] > k; --j) v[j + 1] = v[j];
        v[j + 1] = k;
    }
    uint32_t worst = n > 0 ? 1 : 0, run = 1;
    for (int i = 1; i < n; ++i) {
        run = v[i] == v[i - 1] ? run + 1 : 1;
        worst = std::max(worst, run);
    }
    return worst;
}

// Cycles one repeat's UB accesses take (at least 1). A row's group is row mod G; its bank is the
// group and the row's span of G x bank_rows rows. Each group reads one row and writes one row per
// cycle, and a bank serves one access per cycle: the repeat takes the most reads any group
// gets, the most writes any group gets, or the most accesses any bank gets, whichever is largest.
uint32_t repeat_cycles(const Block* b, int n, const CoreParams& p) {
    const uint64_t g = p.ub_bank_groups, span = g * p.ub_bank_rows;
    uint64_t rd[24], wr[24], bank[24];
    int nr = 0, nw = 0;
    for (int i = 0; i < n; ++i) {
        (b[i].read ? rd[nr++] : wr[nw++]) = b[i].row % g;
        bank[i] = (b[i].row / span) * g + b[i].row % g;
    }
    uint32_t worst = std::max(longest_run(rd, nr), longest_run(wr, nw));
    if (nr > 0 && nw > 0) worst = std::max(worst, longest_run(bank, n));  // a read and a write in one bank
    return std::max<uint32_t>(worst, 1);
}

// The blocks of every UB operand in repeat r (an operand read with block stride 0 reads one block
// eight times: the bank serves it once and broadcasts it).
int repeat_blocks(const uint64_t* base, const uint64_t* blk, const uint64_t* rep, const bool* src, int nops, uint32_t r,
                  const CoreParams& p, Block* out) {
    constexpr int kBlocks = 8;
    int n = 0;
    for (int o = 0; o < nops; ++o)
        for (int k = 0; k < (blk[o] ? kBlocks : 1); ++k)
            out[n++] = {(base[o] + (uint64_t(r) * rep[o] + uint64_t(k) * blk[o]) * 32) / p.ub_bank_bytes, src[o]};
    return n;
}

}  // namespace

uint64_t ub_conflict_cycles(const isa::Instr& in, const CoreParams& p) {
    if (p.ub_bank_conflict_cycles == 0) return 0;
    VecOperands v = vec_operands(in.op);
    if (in.op == Opcode::VSEL && in.vec.with_index) v.src1 = false;  // tensor-scalar mode: a register
    uint64_t base[3], blk[3], rep[3];
    bool src[3];
    int n = 0;
    auto add = [&](bool use, const isa::Addr& a, uint16_t b, uint16_t r, bool is_src) {
        if (!use || a.pos != Pos::UB) return;
        base[n] = a.addr;
        blk[n] = b;
        rep[n] = r;
        src[n] = is_src;
        ++n;
    };
    add(v.src0, in.src0, in.vec.src0_blk_stride, in.vec.src0_rep_stride, true);
    add(v.src1, in.src1, in.vec.src1_blk_stride, in.vec.src1_rep_stride, true);
    add(v.dst, in.dst, in.vec.dst_blk_stride, in.vec.dst_rep_stride, false);
    if (n == 0 || in.vec.repeat == 0) return 0;
    Block b[24];
    const int nb = repeat_blocks(base, blk, rep, src, n, 0, p, b);
    // Equal repeat strides of whole rows move every block by the same number of rows, which keeps
    // which blocks share a group. Whether a read and a written block of one group share a bank
    // can change only if their rows differ (a boundary between the group's banks may fall
    // between them); without such a pair, one repeat stands for all.
    bool uniform = (rep[0] * 32) % p.ub_bank_bytes == 0;
    for (int i = 1; i < n; ++i) uniform = uniform && rep[i] == rep[0];
    const uint64_t g = p.ub_bank_groups;
    for (int i = 0; i < nb && uniform; ++i)
        for (int j = 0; j < nb; ++j)
            if (b[i].read && !b[j].read && b[i].row != b[j].row && b[i].row % g == b[j].row % g) {
                uniform = false;
                break;
            }
    if (uniform) return uint64_t(repeat_cycles(b, nb, p) - 1) * p.ub_bank_conflict_cycles * in.vec.repeat;
    uint64_t total = repeat_cycles(b, nb, p) - 1;
    for (uint32_t r = 1; r < in.vec.repeat; ++r) {
        repeat_blocks(base, blk, rep, src, n, r, p, b);
        total += repeat_cycles(b, nb, p) - 1;
    }
    return total * p.ub_bank_conflict_cycles;
}

uint64_t mad_cycles(const isa::Instr& in, const CoreParams& p) {
    uint32_t k0 = p.cube_k0_16bit;
    if (in.dtype == isa::DType::INT8 || in.dtype == isa::DType::UINT8) k0 = p.cube_k0_int8;
    else if (in.dtype == isa::DType::INT4) k0 = p.cube_k0_int4;
    else if (in.dtype == isa::DType::FP32) k0 = p.cube_k0_fp32;
    return ceil_div64(in.mad.m, p.cube_m0) * ceil_div64(in.mad.k, k0) * ceil_div64(in.mad.n, p.cube_n0) *
           p.cube_cycles_per_step;
}

ComputeTiming compute_timing(const isa::Instr& in, const CoreParams& p) {
    const uint64_t rep = in.vec.repeat;
    auto vec = [&](uint32_t cpr) {
        const uint64_t bank = ub_conflict_cycles(in, p);
        return ComputeTiming{rep * cpr + bank, p.vec_startup, bank};
    };
    auto move = [&](uint64_t bytes, uint32_t bpc, uint32_t startup) {
        return ComputeTiming{std::max<uint64_t>(1, ceil_div64(bytes, bpc)), startup};
    };
    switch (in.op) {
        case Opcode::VEXP: case Opcode::VLN: case Opcode::VSQRT: case Opcode::VRSQRT: case Opcode::VREC:
        case Opcode::VDIV:
            return vec(p.vec_transcendental_cycles_per_repeat);
        case Opcode::VRED_SUM: case Opcode::VRED_MAX: case Opcode::VRED_MIN: case Opcode::VREDALL_SUM:
        case Opcode::VREDALL_MAX: case Opcode::VREDALL_MIN:
            return vec(p.vec_reduce_cycles_per_repeat);
        case Opcode::VGATHER:
        case Opcode::VGATHERB: return vec(p.vec_gather_cycles_per_repeat);
        case Opcode::VREDUCEV2:
            if (in.vec.with_index) {  // counter mode: each repeat spans its count's 256-byte groups
                const uint64_t groups = ceil_div64(in.vec.mask_lo * isa::dtype_size(in.dtype), 256);
                return {rep * std::max<uint64_t>(1, groups) * p.vec_cycles_per_repeat, p.vec_startup};
            }
            return vec(p.vec_cycles_per_repeat);
        case Opcode::VBITSORT:
        case Opcode::VMRGSORT4: {
            // Charged for every structure the instruction may write: a merge that stops when a list
            // runs out (exhausted suspension) costs the same, since timing mode has no data.
            const isa::MrgSort4Config c = isa::mrgsort4_config(in);
            uint64_t n = 32;
            if (in.op == Opcode::VMRGSORT4) {
                n = 0;
                for (uint32_t i = 0; i < isa::mrgsort4_lists(c.valid); ++i) n += c.len[i];
            }
            const uint32_t bpc = in.dtype == isa::DType::FP16 ? p.vec_sort_fp16_bpc : p.vec_sort_fp32_bpc;
            return {std::max<uint64_t>(1, ceil_div64(rep * n * 8, bpc)), p.vec_startup};
        }
        case Opcode::COPY_UB_TO_UB: {
            const uint64_t bytes = uint64_t{in.copy.nburst} * ceil_div64(in.copy.len_bytes, 32) * 32;
            return {std::max<uint64_t>(1, ceil_div64(bytes, 256)) * p.vec_cycles_per_repeat, p.vec_startup};
        }
        case Opcode::COPY_L0C_TO_UB:
            return move(uint64_t{in.fix.nd_num} * in.fix.m * in.fix.n * 4, p.l0c_ub_bpc, p.vec_startup);
        case Opcode::MAD: return {mad_cycles(in, p), p.cube_fill};
        case Opcode::LOAD2D:
            return move(isa::moved_bytes(in), in.dst.pos == Pos::L0B ? p.mte1_l1_l0b_bpc : p.mte1_l1_l0a_bpc, p.mte1_startup);
        case Opcode::LOAD3D:
            return move(isa::moved_bytes(in), in.dst.pos == Pos::L0B ? p.mte1_l1_l0b_bpc : p.mte1_l1_l0a_bpc, p.mte1_startup);
        case Opcode::COPY_L1_TO_UB: return move(isa::moved_bytes(in), p.mte1_l1_ub_bpc, p.mte1_startup);
        // L1 -> bias table: the L1 read port of L1 -> UB (est.).
        case Opcode::COPY_L1_TO_BT: return move(isa::moved_bytes(in), p.mte1_l1_ub_bpc, p.mte1_startup);
        case Opcode::FILL: return move(isa::moved_bytes(in), p.mte1_fill_bpc, p.mte1_startup);
        case Opcode::FIXPIPE:
            return move(uint64_t{in.fix.nd_num} * in.fix.m * in.fix.n * 4, p.fix_l0c_bpc, p.fix_startup);
        case Opcode::COPY_UB_TO_L1: return move(isa::moved_bytes(in), p.ub_l1_bpc, p.mte3_startup);
        case Opcode::COPY_L1_TO_FB: return move(isa::moved_bytes(in), p.fix_l1_fb_bpc, p.fix_startup);
        default:
            if (isa::param_kind(in.op) == isa::ParamKind::Vec && in.op != Opcode::SET_MASK) return vec(p.vec_cycles_per_repeat);
            return {1, 0};
    }
}

}  // namespace sfumato
