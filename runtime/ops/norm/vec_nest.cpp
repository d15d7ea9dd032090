// Vector loop nests (runtime/ops/norm/vec_nest.h).
#include "runtime/ops/norm/vec_nest.h"

#include <algorithm>
#include <limits>

#include "runtime/kernel/vec_api.h"
#include "sim/error.h"

namespace sfumato::ops::norm {

using isa::Opcode;

namespace {

constexpr uint64_t kMaxRep = 255;
constexpr uint64_t kNone = std::numeric_limits<uint64_t>::max();

isa::VecParams mask_params(uint64_t count, uint32_t lanes) {
    isa::VecParams v;
    const kernel::VecMask m(lanes > 128 ? count / 2 : count);
    v.mask_lo = m.lo, v.mask_hi = m.hi;
    return v;
}

bool rep_ok(int64_t stride) { return stride >= 0 && stride % kBlk == 0 && stride / kBlk <= 65535; }

}  // namespace

void vnest(uint32_t lanes, const VOp in_ops[3], const uint32_t es[3], uint64_t nA, uint64_t nB, uint64_t n,
           const std::function<void(const VPiece&)>& emit) {
    if (nA == 0 || nB == 0 || n == 0) return;
    VOp ops[3] = {in_ops[0], in_ops[1], in_ops[2]};
    // Merge contiguous levels: B into the lanes, A into B.
    auto merge_b = [&]() {
        if (nB <= 1) return;
        for (int i = 0; i < 3; ++i) {
            if (!ops[i].used) continue;
            const int64_t want = ops[i].block ? 0 : static_cast<int64_t>(n * es[i]);
            if (ops[i].sb != want || (ops[i].rep0 && n != lanes)) return;
        }
        for (auto& o : ops) o.rep0 = false;  // one repeat per row: rows are consecutive repeats
        n *= nB;
        nB = 1;
    };
    if (nB == 1 && nA > 1) {  // a lone A level walks as B
        for (auto& o : ops) o.sb = o.sa;
        nB = nA;
        nA = 1;
    }
    merge_b();
    if (nA > 1) {
        bool ok = true;
        for (int i = 0; i < 3; ++i)
            if (ops[i].used && ops[i].sa != static_cast<int64_t>(nB) * ops[i].sb) ok = false;
        if (ok) {
            nB *= nA;
            nA = 1;
            merge_b();
        }
    }
    const uint64_t full = n / lanes, tail = n % lanes, chunks = full + (tail ? 1 : 0);
    auto cost_lanes = nA * nB * (cdiv(full, kMaxRep) + (tail ? 1 : 0));
    bool okB = nB > 1, okA = nA > 1;
    for (int i = 0; i < 3; ++i) {
        if (!ops[i].used) continue;
        okB = okB && rep_ok(ops[i].sb);
        okA = okA && rep_ok(ops[i].sa);
    }
    const uint64_t cost_b = okB ? nA * chunks * cdiv(nB, kMaxRep) : kNone;
    const uint64_t cost_a = okA ? nB * chunks * cdiv(nA, kMaxRep) : kNone;
    auto lane_rep = [&](int i) -> uint16_t {
        return ops[i].block || ops[i].rep0 ? 0 : static_cast<uint16_t>(uint64_t{lanes} * es[i] / kBlk);
    };
    auto set_strides = [&](isa::VecParams& v, const uint16_t rep[3]) {
        v.dst_blk_stride = ops[0].block ? 0 : 1;
        v.src0_blk_stride = ops[1].block ? 0 : 1;
        v.src1_blk_stride = ops[2].block ? 0 : 1;
        v.dst_rep_stride = rep[0], v.src0_rep_stride = rep[1], v.src1_rep_stride = rep[2];
    };
    auto lane_off = [&](int i, uint64_t chunk) -> uint64_t {
        return ops[i].block || ops[i].rep0 ? 0 : chunk * lanes * es[i];
    };
    if (cost_lanes <= cost_b && cost_lanes <= cost_a) {
        const uint16_t rep[3] = {lane_rep(0), lane_rep(1), lane_rep(2)};
        for (uint64_t a = 0; a < nA; ++a)
            for (uint64_t b = 0; b < nB; ++b) {
                uint64_t done = 0;
                while (done < chunks) {
                    const bool is_tail = tail && done == full;
                    const uint64_t reps = is_tail ? 1 : std::min(kMaxRep, full - done);
                    VPiece p;
                    p.v = is_tail ? mask_params(tail, lanes) : isa::VecParams{};
                    p.v.repeat = static_cast<uint16_t>(reps);
                    set_strides(p.v, rep);
                    for (int i = 0; i < 3; ++i)
                        p.off[i] = static_cast<uint64_t>(a * ops[i].sa + b * ops[i].sb) + lane_off(i, done);
                    emit(p);
                    done += reps;
                }
            }
        return;
    }
    const bool walk_b = cost_b <= cost_a;
    const uint64_t outer = walk_b ? nA : nB, inner = walk_b ? nB : nA;
    uint16_t rep[3];
    for (int i = 0; i < 3; ++i) rep[i] = static_cast<uint16_t>((walk_b ? ops[i].sb : ops[i].sa) / kBlk);
    for (uint64_t o = 0; o < outer; ++o)
        for (uint64_t c = 0; c < chunks; ++c) {
            const uint64_t cnt = c == full ? tail : lanes;
            for (uint64_t done = 0; done < inner; done += kMaxRep) {
                VPiece p;
                p.v = cnt == lanes ? isa::VecParams{} : mask_params(cnt, lanes);
                p.v.repeat = static_cast<uint16_t>(std::min(kMaxRep, inner - done));
                set_strides(p.v, rep);
                for (int i = 0; i < 3; ++i) {
                    const int64_t so = walk_b ? ops[i].sa : ops[i].sb, si = walk_b ? ops[i].sb : ops[i].sa;
                    p.off[i] = static_cast<uint64_t>(static_cast<int64_t>(o) * so + static_cast<int64_t>(done) * si) +
                               lane_off(i, c);
                }
                emit(p);
            }
        }
}

namespace {
uint32_t src_es(Opcode op, isa::DType dt, isa::DType st) {
    return isa::dtype_size(op == Opcode::VCONV ? st : dt);
}
bool has_src1(Opcode op) {
    switch (op) {
        case Opcode::VADD: case Opcode::VSUB: case Opcode::VMUL: case Opcode::VDIV: case Opcode::VMAX:
        case Opcode::VMIN: case Opcode::VAND: case Opcode::VOR: case Opcode::VMADD: case Opcode::VMLA:
        case Opcode::VADDRELU: return true;
        default: return false;
    }
}
isa::Instr make(Opcode op, isa::DType dt, uint32_t d, uint32_t a, uint32_t b, const isa::VecParams& v, double s) {
    isa::Instr in = isa::make_instr(op);
    in.dtype = dt;
    in.dst = {d, isa::Pos::UB};
    in.src0 = {a, isa::Pos::UB};
    in.src1 = {b, isa::Pos::UB};
    in.vec = v;
    in.scalar = s;
    return in;
}
}  // namespace

void vrun(kernel::KernelContext& ctx, Opcode op, isa::DType dt, VOp dst, VOp a, VOp b, uint64_t nA, uint64_t nB,
          uint64_t n, double scalar, isa::DType st, isa::RoundMode round) {
    const bool two = has_src1(op);
    if (op == Opcode::VDUP) a.used = false;
    if (!two) b.used = false;
    dst.used = true;
    const uint32_t esd = isa::dtype_size(dt), ess = src_es(op, dt, st);
    const VOp ops[3] = {dst, a, b};
    const uint32_t es[3] = {esd, ess, esd};
    const uint32_t lanes = 256 / std::max(esd, ess);
    vnest(lanes, ops, es, nA, nB, n, [&](const VPiece& p) {
        isa::VecParams v = p.v;
        if (op == Opcode::VCONV) v.src_dtype = st, v.round = round;
        ctx.issue(make(op, dt, static_cast<uint32_t>(dst.addr + p.off[0]), static_cast<uint32_t>(a.addr + p.off[1]),
                       static_cast<uint32_t>(b.addr + p.off[2]), v, scalar));
    });
}

void vselect_cmp(kernel::KernelContext& ctx, isa::DType cmp_dt, isa::CmpMode cmp, VOp a, VOp b, isa::DType dt,
                 VOp dst, VOp x, VOp y, uint32_t bits, uint64_t nA, uint64_t nB, uint64_t n) {
    if (isa::dtype_size(cmp_dt) != isa::dtype_size(dt))
        throw InputError("vselect_cmp: compare and select types must have one element size");
    const uint32_t es = isa::dtype_size(dt), lanes = 256 / es;
    // Two nests with one decomposition: the operands of both share strides where they share a
    // slot, so decompose over (dst, a, b) and (dst, x, y) together by checking both agree.
    VOp o1[3] = {dst, a, b}, o2[3] = {dst, x, y};
    o1[0].used = o2[0].used = true;
    const uint32_t ess[3] = {es, es, es};
    std::vector<VPiece> p1, p2;
    vnest(lanes, o1, ess, nA, nB, n, [&](const VPiece& p) { p1.push_back(p); });
    vnest(lanes, o2, ess, nA, nB, n, [&](const VPiece& p) { p2.push_back(p); });
    bool same = p1.size() == p2.size();
    for (size_t i = 0; same && i < p1.size(); ++i)
        same = p1[i].off[0] == p2[i].off[0] && p1[i].v.repeat == p2[i].v.repeat && p1[i].v.mask_lo == p2[i].v.mask_lo &&
               p1[i].v.mask_hi == p2[i].v.mask_hi && p1[i].v.dst_rep_stride == p2[i].v.dst_rep_stride;
    if (!same) {
        // Decompositions differ (different merges): fall back to one lane-walk per (A, B).
        p1.clear(), p2.clear();
        for (uint64_t ia = 0; ia < nA; ++ia)
            for (uint64_t ib = 0; ib < nB; ++ib) {
                auto at = [&](const VOp& o) {
                    VOp r = o;
                    r.addr = static_cast<uint32_t>(o.addr + ia * o.sa + ib * o.sb);
                    r.sa = r.sb = 0;
                    return r;
                };
                VOp q1[3] = {at(o1[0]), at(o1[1]), at(o1[2])}, q2[3] = {at(o2[0]), at(o2[1]), at(o2[2])};
                auto push = [&](std::vector<VPiece>& out, const VOp* q, const VOp* base) {
                    vnest(lanes, q, ess, 1, 1, n, [&](const VPiece& p) {
                        VPiece r = p;
                        for (int i = 0; i < 3; ++i) r.off[i] += q[i].addr - base[i].addr;
                        out.push_back(r);
                    });
                };
                push(p1, q1, o1);
                push(p2, q2, o2);
            }
    }
    for (size_t i = 0; i < p1.size(); ++i) {
        isa::VecParams vc = p1[i].v;
        vc.cmp = cmp;
        if (uint64_t{vc.repeat} * (lanes / 8) > kBitsScratch) throw InputError("vselect_cmp: bitmask scratch too small");
        ctx.issue(make(Opcode::VCMP, cmp_dt, bits, static_cast<uint32_t>(a.addr + p1[i].off[1]),
                       static_cast<uint32_t>(b.addr + p1[i].off[2]), vc, 0));
        isa::Instr s = make(Opcode::VSEL, dt, static_cast<uint32_t>(dst.addr + p2[i].off[0]),
                            static_cast<uint32_t>(x.addr + p2[i].off[1]), static_cast<uint32_t>(y.addr + p2[i].off[2]),
                            p2[i].v, 0);
        s.src2 = {bits, isa::Pos::UB};
        ctx.issue(s);
    }
}

void fold(kernel::KernelContext& ctx, Opcode op, isa::DType dt, uint32_t src, uint32_t dst, uint64_t groups,
          int64_t gs_src, int64_t gs_dst, uint64_t units, int64_t us, uint64_t n) {
    if (units == 0 || groups == 0) return;
    if (units == 1) {
        if (src != dst) vrun(ctx, Opcode::VMULS, dt, vop(dst, gs_dst), vop(src, gs_src), {}, groups, 1, n, 1.0);
        return;
    }
    // Adjacent pairs (unit 2j with 2j + 1 into unit j): the two sources of a repeat sit one
    // unit apart, never a multiple of the UB bank period apart as halves of a long row would.
    // In place is safe: repeat j writes unit j after unit j was read by an earlier repeat.
    uint32_t from = src;
    int64_t gs_from = gs_src;
    uint64_t cur = units;
    while (cur > 1) {
        const uint64_t pairs = cur / 2;
        vrun(ctx, op, dt, vop(dst, gs_dst, us), vop(from, gs_from, 2 * us),
             vop(static_cast<uint32_t>(from + us), gs_from, 2 * us), groups, pairs, n);
        if (cur % 2)  // odd: the last unit moves as is
            vrun(ctx, Opcode::VMULS, dt, vop(static_cast<uint32_t>(dst + pairs * us), gs_dst),
                 vop(static_cast<uint32_t>(from + 2 * pairs * us), gs_from), {}, groups, 1, n, 1.0);
        from = dst;
        gs_from = gs_dst;
        cur = cdiv(cur, 2);
    }
}

Folded fold_alt(kernel::KernelContext& ctx, Opcode op, isa::DType dt, uint32_t src, uint32_t dst, uint64_t groups,
                int64_t gs_src, int64_t gs_dst, uint64_t units, int64_t us, uint64_t n, uint32_t alt, int64_t gs_alt,
                uint64_t alt_bytes, uint64_t dst_bytes) {
    if (units <= 2 || alt == 0 || !spans_apart(dst, dst_bytes, alt, alt_bytes)) {
        fold(ctx, op, dt, src, dst, groups, gs_src, gs_dst, units, us, n);
        return {dst, gs_dst};
    }
    uint32_t from = src, to = dst;
    int64_t gs_from = gs_src, gs_to = gs_dst;
    for (uint64_t cur = units; cur > 1; cur = cdiv(cur, 2)) {
        const uint64_t pairs = cur / 2;
        vrun(ctx, op, dt, vop(to, gs_to, us), vop(from, gs_from, 2 * us),
             vop(static_cast<uint32_t>(from + us), gs_from, 2 * us), groups, pairs, n);
        if (cur % 2)
            vrun(ctx, Opcode::VMULS, dt, vop(static_cast<uint32_t>(to + pairs * us), gs_to),
                 vop(static_cast<uint32_t>(from + 2 * pairs * us), gs_from), {}, groups, 1, n, 1.0);
        from = to, gs_from = gs_to;
        const bool at_dst = to == dst;
        to = at_dst ? alt : dst;
        gs_to = at_dst ? gs_alt : gs_dst;
    }
    return {from, gs_from};
}

void expand_blocks(kernel::KernelContext& ctx, isa::DType dt, uint32_t dst, uint32_t blocks, uint64_t count) {
    vrun(ctx, Opcode::VMULS, dt, vop(dst, 0, 256), vblock(blocks, 0, kBlk), {}, 1, count, 256 / isa::dtype_size(dt),
         1.0);
}

void lane_reduce(kernel::KernelContext& ctx, Opcode red, isa::DType dt, uint32_t src, uint32_t dst, uint64_t groups,
                 int64_t gs, uint64_t n) {
    const uint32_t es = isa::dtype_size(dt), lanes = 256 / es;
    if (n == 0 || n > lanes) throw InputError("lane_reduce: " + std::to_string(n) + " lanes");
    if (!rep_ok(gs) && groups > 1) throw InputError("lane_reduce: group stride " + std::to_string(gs));
    constexpr uint64_t kStep = 240;  // results per instruction: keeps each dst 32-byte aligned
    for (uint64_t g = 0; g < groups; g += kStep) {
        isa::VecParams v = n == lanes ? isa::VecParams{} : mask_params(n, lanes);
        v.repeat = static_cast<uint16_t>(std::min(kStep, groups - g));
        v.dst_rep_stride = 1;
        v.src0_blk_stride = 1;
        v.src0_rep_stride = static_cast<uint16_t>(gs / kBlk);
        ctx.issue(make(red, dt, static_cast<uint32_t>(dst + g * es), static_cast<uint32_t>(src + g * gs), 0, v, 0));
    }
}

void brcb(kernel::KernelContext& ctx, isa::DType dt, uint32_t dst, uint32_t src, uint64_t count) {
    const uint32_t es = isa::dtype_size(dt);
    // Each instruction's source must be 32-byte aligned: a split advances it by whole blocks.
    const uint64_t unit = 8 * es >= kBlk ? 1 : kBlk / (8 * es);
    const uint64_t max_reps = kMaxRep / unit * unit;
    for (uint64_t done = 0; done < count; done += 8 * max_reps) {
        const uint64_t reps = std::min(max_reps, cdiv(count - done, 8));
        isa::VecParams v;
        v.repeat = static_cast<uint16_t>(reps);
        v.dst_blk_stride = 1, v.dst_rep_stride = 8;
        ctx.issue(make(Opcode::VBRCB, dt, static_cast<uint32_t>(dst + done * kBlk), static_cast<uint32_t>(src + done * es),
                       0, v, 0));
    }
}

void fill_tail(kernel::KernelContext& ctx, isa::DType dt, uint32_t addr, uint64_t rows, int64_t rs, uint32_t valid,
               double value) {
    const uint32_t lanes = 256 / isa::dtype_size(dt);
    if (valid >= lanes || rows == 0) return;
    uint64_t lo = 0, hi = 0;
    for (uint32_t l = valid; l < lanes; ++l) (l < 64 ? lo : hi) |= 1ull << (l % 64);
    for (uint64_t r = 0; r < rows; r += kMaxRep) {
        isa::VecParams v;
        v.mask_lo = lo, v.mask_hi = hi;
        v.repeat = static_cast<uint16_t>(std::min(kMaxRep, rows - r));
        v.dst_blk_stride = 1;
        v.dst_rep_stride = static_cast<uint16_t>(rs / kBlk);
        if (!rep_ok(rs) && rows > 1) throw InputError("fill_tail: row stride " + std::to_string(rs));
        ctx.issue(make(Opcode::VDUP, dt, static_cast<uint32_t>(addr + r * rs), 0, 0, v, value));
    }
}

void iota(kernel::KernelContext& ctx, isa::DType dt, uint32_t dst, uint64_t n) {
    const uint32_t es = isa::dtype_size(dt), lanes = 256 / es;
    isa::VecParams all;
    ctx.issue(make(Opcode::VDUP, dt, dst, 0, 0, all, 0.0));
    for (uint32_t bit = 1; bit < lanes; bit <<= 1) {
        isa::VecParams v;
        v.mask_lo = v.mask_hi = 0;
        for (uint32_t l = 0; l < lanes; ++l)
            if (l & bit) (l < 64 ? v.mask_lo : v.mask_hi) |= 1ull << (l % 64);
        ctx.issue(make(Opcode::VADDS, dt, dst, dst, 0, v, static_cast<double>(bit)));
    }
    for (uint64_t have = lanes; have < n; have *= 2) {
        const uint64_t cnt = std::min(have, up(n, lanes) - have);
        vrun(ctx, Opcode::VADDS, dt, vop(static_cast<uint32_t>(dst + have * es)), vop(dst), {}, 1, 1, cnt,
             static_cast<double>(have));
    }
}

}  // namespace sfumato::ops::norm
