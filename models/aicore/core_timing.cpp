#include "models/aicore/core_timing.h"

#include <algorithm>
#include <numeric>

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

// One 32-byte block an operand touches in a repeat: its UB row, the row's bank group and bank
// span (the bank is the pair), and whether it is read.
struct Block {
    uint64_t row;
    uint64_t group, span;
    bool read;
};

// The UB layout's divisors, as shifts when they are powers of two (the usual case).
struct BankGeometry {
    uint64_t row_bytes, groups, span_rows;
    int row_shift = -1, group_shift = -1, span_shift = -1;
    explicit BankGeometry(const CoreParams& p)
        : row_bytes(p.ub_bank_bytes), groups(p.ub_bank_groups), span_rows(uint64_t{p.ub_bank_groups} * p.ub_bank_rows) {
        auto lg = [](uint64_t v) { return (v & (v - 1)) == 0 ? __builtin_ctzll(v) : -1; };
        row_shift = lg(row_bytes);
        group_shift = lg(groups);
        span_shift = lg(span_rows);
    }
    Block block(uint64_t addr, bool read) const {
        const uint64_t row = row_shift >= 0 ? addr >> row_shift : addr / row_bytes;
        const uint64_t group = group_shift >= 0 ? row & (groups - 1) : row % groups;
        const uint64_t span = span_shift >= 0 ? row >> span_shift : row / span_rows;
        return {row, group, span, read};
    }
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

// Cycles one repeat's UB accesses take (at least 1). Each group reads one row and writes one row
// per cycle, and a bank serves one access per cycle: the repeat takes the most reads any group
// gets, the most writes any group gets, or the most accesses any bank gets, whichever is largest.
uint32_t repeat_cycles(const Block* b, int n, const BankGeometry& geo) {
    constexpr uint64_t kSmall = 64;
    if (geo.groups <= kSmall) {  // the usual layouts: counts per group in place, no sorting
        uint8_t rd[kSmall] = {}, wr[kSmall] = {};
        for (int i = 0; i < n; ++i) ++(b[i].read ? rd : wr)[b[i].group];
        uint32_t worst = 1, both = 0;
        for (int i = 0; i < n; ++i) {
            const uint64_t k = b[i].group;
            worst = std::max<uint32_t>(worst, std::max(rd[k], wr[k]));
            if (rd[k] && wr[k]) both = std::max<uint32_t>(both, rd[k] + wr[k]);
        }
        if (both <= worst) return worst;  // no bank can need more than its group's reads and writes
        for (int i = 0; i < n; ++i) {     // accesses of each written block's bank
            if (b[i].read || !rd[b[i].group]) continue;
            uint32_t c = 0;
            for (int j = 0; j < n; ++j) c += b[j].group == b[i].group && b[j].span == b[i].span;
            worst = std::max(worst, c);
        }
        return worst;
    }
    uint64_t rd[24], wr[24], bank[24];
    int nr = 0, nw = 0;
    for (int i = 0; i < n; ++i) {
        (b[i].read ? rd[nr++] : wr[nw++]) = b[i].group;
        bank[i] = b[i].span * geo.groups + b[i].group;
    }
    uint32_t worst = std::max(longest_run(rd, nr), longest_run(wr, nw));
    if (nr > 0 && nw > 0) worst = std::max(worst, longest_run(bank, n));  // a read and a write in one bank
    return std::max<uint32_t>(worst, 1);
}

// The blocks of every UB operand in repeat r (an operand read with block stride 0 reads one block
// eight times: the bank serves it once and broadcasts it).
int repeat_blocks(const uint64_t* base, const uint64_t* blk, const uint64_t* rep, const bool* src, int nops, uint64_t r,
                  const BankGeometry& geo, Block* out) {
    constexpr int kBlocks = 8;
    int n = 0;
    for (int o = 0; o < nops; ++o)
        for (int k = 0; k < (blk[o] ? kBlocks : 1); ++k)
            out[n++] = geo.block(base[o] + (r * rep[o] + uint64_t(k) * blk[o]) * 32, src[o]);
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
    const BankGeometry geo(p);
    Block b[24];
    const int nb = repeat_blocks(base, blk, rep, src, n, 0, geo, b);
    // Each operand's blocks move by delta_o rows a repeat. Between two repeats where some block
    // enters the next bank span, every block keeps its span, and the groups repeat with a period
    // that divides the group count (lcm over the operands of G / gcd(G, delta_o)): the cycles of
    // a run are its first period's, times the whole periods, plus the rest.
    const uint64_t R = in.vec.repeat, G = geo.groups, span = geo.span_rows;
    bool whole = true;
    uint64_t delta[3], period = 1;
    for (int o = 0; o < n; ++o) {
        whole = whole && (rep[o] * 32) % geo.row_bytes == 0;
        delta[o] = rep[o] * 32 / geo.row_bytes;
        const uint64_t po = G / std::gcd(G, delta[o] % G);
        period = std::lcm(period, po);
    }
    auto each = [&](uint64_t from, uint64_t to) {  // every repeat on its own
        uint64_t t = 0;
        for (uint64_t r = from; r < to; ++r) {
            repeat_blocks(base, blk, rep, src, n, r, geo, b);
            t += repeat_cycles(b, nb, geo) - 1;
        }
        return t;
    };
    uint64_t cuts[64];  // repeats where some block enters a new span
    int nc = 0;
    bool listed = whole;
    for (int o = 0, i = 0; o < n && listed; ++o)
        for (int k = 0; k < (blk[o] ? 8 : 1) && listed; ++k, ++i) {
            if (delta[o] == 0) continue;
            for (uint64_t next = span - (b[i].row - b[i].span * span);; next += span) {
                const uint64_t r = (next + delta[o] - 1) / delta[o];  // first repeat at or past the boundary
                if (r >= R) break;
                if (nc == 64) {
                    listed = false;
                    break;
                }
                cuts[nc++] = r;
            }
        }
    if (!listed) return each(0, R) * p.ub_bank_conflict_cycles;
    std::sort(cuts, cuts + nc);
    uint64_t total = 0, from = 0;
    for (int c = 0; c <= nc; ++c) {
        const uint64_t to = c < nc ? cuts[c] : R;
        if (to <= from) continue;
        const uint64_t len = to - from;
        if (len <= period) {
            total += each(from, to);
        } else {
            const uint64_t rest = len % period;
            const uint64_t head = each(from, from + rest);
            total += head + (len / period) * each(from + rest, from + rest + period);
        }
        from = to;
    }
    return total * p.ub_bank_conflict_cycles;
}

uint64_t mad_cycles(const isa::Instr& in, const CoreParams& p) {
    uint32_t k0 = p.cube_k0_16bit;
    if (in.dtype == isa::DType::INT8 || in.dtype == isa::DType::UINT8) k0 = p.cube_k0_int8;
    else if (in.dtype == isa::DType::INT4) k0 = p.cube_k0_int4;
    else if (in.dtype == isa::DType::FP32) k0 = p.cube_k0_fp32;
    // A sparse mad's depth is half its k (isa::mad_depth): the selected A fractal is 16 x C0, then the
    // cube does a dense product (the vendor's MmadWithSparse reference).
    return ceil_div64(in.mad.m, p.cube_m0) * ceil_div64(isa::mad_depth(in), k0) * ceil_div64(in.mad.n, p.cube_n0) *
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
        case Opcode::VTRANSPOSE: {
            // The vendor's A2 table (Vector instructions' theoretical performance, its layout-conversion table)
            // gives Transpose of 16-bit data 128 elements a cycle: a 16 x 16 repeat is 512 bytes, two of the
            // vector unit's 256-byte repeat times.
            const uint64_t bank = ub_conflict_cycles(in, p);
            return {rep * ceil_div64(16 * 16 * 2, 256) * p.vec_cycles_per_repeat + bank, p.vec_startup, bank};
        }
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
