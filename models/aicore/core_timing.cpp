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

// Extra cycles of one repeat whose operand blocks start at the given addresses: the most
// accesses any one bank gets (sorted bank numbers, longest run) and, if configured, whether two
// different source operands touch one bank group in different banks.
uint64_t repeat_conflicts(const uint64_t* base, const uint64_t* blk_stride, const bool* src, int nops, const CoreParams& p) {
    constexpr int kBlocks = 8;
    const uint32_t bb = p.ub_bank_bytes, nb = p.ub_banks;
    const bool pow2 = (bb & (bb - 1)) == 0 && (nb & (nb - 1)) == 0;  // (std::has_single_bit needs popcnt)
    bool contiguous = bb == 32 && nb >= kBlocks && pow2 && p.ub_group_conflict_cycles == 0;
    for (int o = 0; o < nops; ++o) contiguous = contiguous && blk_stride[o] == 1;
    if (contiguous) {
        // Each operand covers 8 consecutive banks (cyclically); the busiest bank is the start
        // bank of one of them.
        uint32_t start[3];
        for (int o = 0; o < nops; ++o) start[o] = static_cast<uint32_t>((base[o] >> 5) & (nb - 1));
        uint32_t worst = 1;
        for (int i = 0; i < nops; ++i) {
            uint32_t c = 0;
            for (int j = 0; j < nops; ++j) c += ((start[i] - start[j]) & (nb - 1)) < kBlocks;
            worst = std::max(worst, c);
        }
        return uint64_t(worst - 1) * p.ub_bank_conflict_cycles;
    }
    uint32_t bank[3 * kBlocks];
    int op_of[3 * kBlocks];
    int n = 0;
    // An operand read with block stride 0 reads one block eight times: the bank serves it once
    // and broadcasts it (a stride-0 read of a scalar costs no conflict).
    if (pow2) {  // the usual case: shifts and masks
        const int sh = __builtin_ctz(bb);
        for (int o = 0; o < nops; ++o)
            for (int b = 0; b < (blk_stride[o] ? kBlocks : 1); ++b, ++n) {
                bank[n] = static_cast<uint32_t>(((base[o] + uint64_t(b) * blk_stride[o] * 32) >> sh) & (nb - 1));
                op_of[n] = o;
            }
    } else {
        for (int o = 0; o < nops; ++o)
            for (int b = 0; b < (blk_stride[o] ? kBlocks : 1); ++b, ++n) {
                bank[n] = static_cast<uint32_t>(((base[o] + uint64_t(b) * blk_stride[o] * 32) / bb) % nb);
                op_of[n] = o;
            }
    }
    bool group_clash = false;
    if (p.ub_group_conflict_cycles > 0) {
        const uint32_t per_group = std::max<uint32_t>(1, p.ub_banks / p.ub_bank_groups);
        for (int i = 0; i < n && !group_clash; ++i)
            for (int j = i + 1; j < n; ++j) {
                const int oi = op_of[i], oj = op_of[j];
                if (oi != oj && src[oi] && src[oj] && bank[i] != bank[j] && bank[i] / per_group == bank[j] / per_group) {
                    group_clash = true;
                    break;
                }
            }
    }
    for (int i = 1; i < n; ++i) {  // insertion sort: at most 24 entries
        const uint32_t k = bank[i];
        int j = i - 1;
        for (; j >= 0 && bank[j] > k; --j) bank[j + 1] = bank[j];
        bank[j + 1] = k;
    }
    uint32_t worst = 1, run = 1;
    for (int i = 1; i < n; ++i) {
        run = bank[i] == bank[i - 1] ? run + 1 : 1;
        worst = std::max(worst, run);
    }
    return uint64_t(worst - 1) * p.ub_bank_conflict_cycles + (group_clash ? uint64_t(p.ub_group_conflict_cycles) : 0);
}

}  // namespace

uint64_t ub_conflict_cycles(const isa::Instr& in, const CoreParams& p) {
    if (p.ub_bank_conflict_cycles == 0 && p.ub_group_conflict_cycles == 0) return 0;
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
    if (n == 0) return 0;
    // Equal repeat strides shift every operand by the same whole number of banks, which keeps
    // bank coincidences (not bank-group ones): then one repeat stands for all.
    bool uniform = (rep[0] * 32) % p.ub_bank_bytes == 0 && p.ub_group_conflict_cycles == 0;
    for (int i = 1; i < n; ++i) uniform = uniform && rep[i] == rep[0];
    if (uniform) return repeat_conflicts(base, blk, src, n, p) * in.vec.repeat;
    uint64_t total = 0;
    for (uint32_t r = 0; r < in.vec.repeat; ++r) {
        uint64_t b[3];
        for (int i = 0; i < n; ++i) b[i] = base[i] + uint64_t(r) * rep[i] * 32;
        total += repeat_conflicts(b, blk, src, n, p);
    }
    return total;
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
    auto vec = [&](uint32_t cpr) { return ComputeTiming{rep * cpr + ub_conflict_cycles(in, p), p.vec_startup}; };
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
        case Opcode::VNCHWCONV: {
            // The vendor's A2 table gives TransDataTo5HD the element rate of an fp16 Add for 2-byte types
            // and the rates of 1- and 4-byte Adds for the others: 256 bytes a cycle, the vector unit's
            // rate of one 256-byte repeat per vec_cycles_per_repeat. A repeat reads 16 blocks (1-byte types:
            // half of each, 256 bytes) and writes as much.
            const uint64_t bytes = isa::dtype_size(in.dtype) == 1 ? 256 : 512;
            return {uint64_t{in.nchw.repeat} * ceil_div64(bytes, 256) * p.vec_cycles_per_repeat, p.vec_startup};
        }
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
