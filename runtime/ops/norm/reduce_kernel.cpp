// One reduction pass on the vector unit (runtime/ops/norm/reduce_kernel.h).
#include "runtime/ops/norm/reduce_kernel.h"

#include <algorithm>
#include <limits>

#include "runtime/kernel/api.h"
#include "runtime/ops/norm/common.h"
#include "runtime/ops/norm/reduce_layout.h"
#include "runtime/ops/norm/vec_nest.h"

namespace sfumato::ops::norm {

using isa::DType;
using isa::Opcode;
using namespace sfumato::kernel;

namespace {

Opcode fold_op(const ReducePlan& p) {
    switch (p.op) {
        case ReducePlan::Op::Max: return Opcode::VMAX;
        case ReducePlan::Op::Min: return Opcode::VMIN;
        case ReducePlan::Op::Prod: return Opcode::VMUL;
        default: return Opcode::VADD;
    }
}
Opcode red_op(const ReducePlan& p) {
    switch (p.op) {
        case ReducePlan::Op::Max: return Opcode::VRED_MAX;
        case ReducePlan::Op::Min: return Opcode::VRED_MIN;
        default: return Opcode::VRED_SUM;
    }
}
double neutral(const ReducePlan& p) {
    const bool i = p.ct == DType::INT32;
    switch (p.op) {
        case ReducePlan::Op::Max: return i ? std::numeric_limits<int32_t>::min() : -kInf;
        case ReducePlan::Op::Min: return i ? std::numeric_limits<int32_t>::max() : kInf;
        case ReducePlan::Op::Prod: return 1.0;
        default: return 0.0;
    }
}

}  // namespace

uint64_t ReducePlan::items() const {
    return rows ? outer : cdiv(outer, g) * cdiv(inner, ic);
}

uint64_t reduce_ub_bytes(const ReducePlan& p) {
    const RLayout l = rlayout(p);
    return p.buffers * (l.in + l.out) + l.xf + l.t + l.scr + l.acc + l.e + l.vals + l.blocks + l.cmp + l.pblk + l.iota +
           l.sent + l.bits + 1024;
}

bool plan_reduce(ReducePlan& p, uint64_t ub, uint32_t cores) {
    const bool lse = p.op == ReducePlan::Op::LogSumExp;
    p.buffers = 2;
    p.ub = ub;
    if (p.inner == 1) {
        p.rows = true;
        p.k = 1, p.nch = 1;
        p.cp = static_cast<uint32_t>(up(std::max<uint64_t>(p.len, 1), 64));
        if (reduce_ub_bytes(p) > ub) {
            if (lse || is_arg(p)) return false;
            // Chunks of the row; unit results accumulate.
            p.cp = 64;
            while (true) {
                const uint32_t next = p.cp * 2;
                ReducePlan q = p;
                q.cp = next, q.nch = 2;
                if (next >= up(p.len, 64) || reduce_ub_bytes(q) > ub) break;
                p.cp = next;
            }
            p.nch = cdiv(p.len, p.cp);
            if (reduce_ub_bytes(p) > ub) return false;
        }
        const WorkSplit w = split_work(p.outer, cores);
        p.per_block = w.per_block, p.blocks = w.blocks;
        if (p.nch == 1) {
            const uint64_t cap = std::min<uint64_t>({std::max<uint64_t>(1, p.per_block / 4), std::max<uint64_t>(1, 65536 / p.cp),
                                                     1024});
            while (p.k < cap) {
                ReducePlan q = p;
                ++q.k;
                if (reduce_ub_bytes(q) > ub) break;
                p.k = q.k;
            }
        }
        return true;
    }
    p.rows = false;
    p.g = 1, p.rc = p.len;
    const uint64_t icp_full = up(p.inner, 16);
    p.ic = p.inner, p.icp = static_cast<uint32_t>(icp_full);
    if (reduce_ub_bytes(p) <= ub) {
        const uint64_t want = std::max<uint64_t>(1, 4096 / icp_full);
        while (p.g < want && p.g < p.outer) {
            ReducePlan q = p;
            ++q.g;
            if (reduce_ub_bytes(q) > ub) break;
            p.g = q.g;
        }
    } else {
        // Inner chunks of 64 (or 16) lanes; rows in chunks when even that does not fit.
        for (uint64_t step : {uint64_t{64}, uint64_t{16}}) {
            p.ic = p.icp = static_cast<uint32_t>(std::min<uint64_t>(step, icp_full));
            if (p.ic > p.inner) p.ic = p.inner;
            if (reduce_ub_bytes(p) <= ub) break;
        }
        if (reduce_ub_bytes(p) <= ub) {
            while (p.icp + 64 <= icp_full) {
                ReducePlan q = p;
                q.icp += 64, q.ic = std::min<uint64_t>(q.icp, p.inner);
                if (reduce_ub_bytes(q) > ub) break;
                p = q;
            }
        } else {
            if (lse || is_arg(p)) return false;
            p.icp = 16, p.ic = std::min<uint64_t>(16, p.inner);
            p.rc = 2;
            if (reduce_ub_bytes(p) > ub) return false;
            while (p.rc * 2 < p.len) {
                ReducePlan q = p;
                q.rc *= 2;
                if (reduce_ub_bytes(q) > ub) break;
                p.rc = q.rc;
            }
        }
    }
    const WorkSplit w = split_work(p.items(), cores);
    p.per_block = w.per_block, p.blocks = w.blocks;
    return true;
}

namespace {

class ReduceKernel {
public:
    ReduceKernel(KernelContext& ctx, const ReducePlan& p) : m_ctx(ctx), m_p(p), m_pipe(ctx) {}

    void run() {
        const ReducePlan& p = m_p;
        const uint64_t items = p.items();
        const uint64_t i0 = uint64_t{m_ctx.block_idx()} * p.per_block;
        if (i0 >= items) return;
        const uint64_t i1 = std::min(items, i0 + p.per_block);
        const RLayout l = rlayout(p);
        const RPlace pl = place_reduce(p, l);
        if (pl.placed) {
            auto u = [](uint64_t v) { return static_cast<uint32_t>(v); };
            const uint32_t base = m_pipe.Reserve(TPosition::VECCALC, u(p.ub), "reduce buffers");
            auto sb = [&](uint64_t v) { return v ? v - pl.stagger : 0; };  // the placed size
            m_pipe.InitBufferAt(m_in, 2, u(sb(l.in)), base + u(pl.in[0]));
            m_pipe.SetBufferAddress(m_in, 1, base + u(pl.in[1]));
            m_pipe.InitBufferAt(m_out, 2, u(sb(l.out)), base + u(pl.out[0]));
            m_pipe.SetBufferAddress(m_out, 1, base + u(pl.out[1]));
            auto at = [&](TBuf<TPosition::VECCALC>& b, uint64_t bytes, uint64_t off) {
                if (bytes) m_pipe.InitBufferAt(b, u(bytes), base + u(off));
            };
            at(m_xf, sb(l.xf), pl.xf), at(m_t, sb(l.t), pl.t), at(m_scr, sb(l.scr), pl.scr), at(m_acc, sb(l.acc), pl.acc);
            at(m_e, sb(l.e), pl.e), at(m_vals, l.vals, pl.vals), at(m_blocks, l.blocks, pl.blocks);
            at(m_cmp, l.cmp, pl.cmp), at(m_pblk, sb(l.pblk), pl.pblk);
        } else {
            m_pipe.InitBuffer(m_in, p.buffers, static_cast<uint32_t>(l.in));
            m_pipe.InitBuffer(m_out, p.buffers, static_cast<uint32_t>(l.out));
            auto buf = [&](TBuf<TPosition::VECCALC>& b, uint64_t bytes) {
                if (bytes) m_pipe.InitBuffer(b, static_cast<uint32_t>(bytes));
            };
            buf(m_xf, l.xf), buf(m_t, l.t), buf(m_scr, l.scr), buf(m_acc, l.acc), buf(m_e, l.e), buf(m_vals, l.vals);
            buf(m_blocks, l.blocks), buf(m_cmp, l.cmp), buf(m_pblk, l.pblk), buf(m_iota, l.iota), buf(m_sent, l.sent);
            buf(m_bits, l.bits);
        }
        if (is_arg(p)) arg_setup();
        if (p.rows) {
            for (uint64_t o = i0; o < i1;) {
                const uint32_t len = static_cast<uint32_t>(std::min<uint64_t>(p.k, i1 - o));
                m_ctx.scalar(4);
                if (is_arg(p)) arg_rows(o, len);
                else row_tile(o, len);
                o += len;
            }
        } else {
            for (uint64_t it = i0; it < i1; ++it) {
                m_ctx.scalar(4);
                if (is_arg(p)) arg_cols(it);
                else col_tile(it);
            }
        }
        m_in.drain();
        m_out.drain();
    }

private:
    static uint32_t a(const TBuf<TPosition::VECCALC>& b) { return b.Get<uint8_t>().address(); }
    uint32_t vals(int i) const { return a(m_vals) + static_cast<uint32_t>(i * up(m_p.k, 64) * 4); }

    // Loads nburst bursts of cl elements (GM stride gstride elements) into a VECIN buffer padded
    // to lanes per burst; converts to the compute type; returns its address.
    uint32_t load(uint64_t src_elem, uint32_t nburst, uint64_t cl, uint64_t gstride, uint32_t lanes,
                  LocalTensor<uint8_t>& held) {
        const ReducePlan& p = m_p;
        const uint32_t ex = isa::dtype_size(p.xt);
        LocalTensor<uint8_t> in = m_in.AllocTensor<uint8_t>();
        detail::copy_in(m_ctx, p.xt, isa::Pos::UB, in.address(), p.x + src_elem * ex,
                        isa::CopyParams{nburst, static_cast<uint32_t>(cl * ex), static_cast<uint32_t>((gstride - cl) * ex),
                                        static_cast<uint32_t>((uint64_t{lanes} * ex - up(cl * ex, kBlk)) / kBlk)},
                        0);
        m_in.EnQue(in);
        LocalTensor<uint8_t> x = m_in.DeQue<uint8_t>();
        if (p.xt == p.ct) {
            held = x;
            return x.address();
        }
        vrun(m_ctx, Opcode::VCONV, p.ct, vop(a(m_xf)), vop(x.address()), {}, 1, 1, uint64_t{nburst} * lanes, 0, p.xt);
        m_in.FreeTensor(x);
        held = LocalTensor<uint8_t>();
        return a(m_xf);
    }

    // Square / abs into t.
    uint32_t pre(uint32_t x, uint64_t n) {
        switch (m_p.pre) {
            case ReducePlan::Pre::Square: vrun(m_ctx, Opcode::VMUL, m_p.ct, vop(a(m_t)), vop(x), vop(x), 1, 1, n); return a(m_t);
            case ReducePlan::Pre::Abs: vrun(m_ctx, Opcode::VABS, m_p.ct, vop(a(m_t)), vop(x), {}, 1, 1, n); return a(m_t);
            default: return x;
        }
    }

    // Post-op on n values at v (and the LSE shift in vals(0) when m != 0), in place.
    void post(uint32_t v, uint64_t nA, int64_t sa, uint64_t n, uint32_t shift, int64_t shift_sa) {
        const ReducePlan& p = m_p;
        if (p.op == ReducePlan::Op::LogSumExp) {
            vrun(m_ctx, Opcode::VLN, p.ct, vop(v, sa), vop(v, sa), {}, nA, 1, n);
            vrun(m_ctx, Opcode::VADD, p.ct, vop(v, sa), vop(v, sa), vop(shift, shift_sa), nA, 1, n);
        }
        switch (p.post) {
            case ReducePlan::Post::Scale: vrun(m_ctx, Opcode::VMULS, p.ct, vop(v, sa), vop(v, sa), {}, nA, 1, n, p.scale); break;
            case ReducePlan::Post::Sqrt: vrun(m_ctx, Opcode::VSQRT, p.ct, vop(v, sa), vop(v, sa), {}, nA, 1, n); break;
            case ReducePlan::Post::Ln: vrun(m_ctx, Opcode::VLN, p.ct, vop(v, sa), vop(v, sa), {}, nA, 1, n); break;
            default: break;
        }
    }

    // One 64-lane unit per row (stride gs) -> one value per row at dst.
    void finish_rows(uint32_t src, int64_t gs, uint32_t len, uint32_t dst) {
        const ReducePlan& p = m_p;
        if (p.op != ReducePlan::Op::Prod) {
            lane_reduce(m_ctx, red_op(p), p.ct, src, dst, len, gs, 64);
            return;
        }
        // No product reduction instruction: 64 -> 8 lanes by folds, then each row's 8 values
        // spread over 8 blocks (Brcb) and folded; lane 0 of each row taken by a 1-lane reduce.
        fold(m_ctx, Opcode::VMUL, p.ct, src, src, len, gs, gs, 8, 32, 8);
        vrun(m_ctx, Opcode::VMULS, p.ct, vop(a(m_cmp), 0, 32), vop(src, 0, gs), {}, 1, len, 8, 1.0);
        brcb(m_ctx, p.ct, a(m_pblk), a(m_cmp), uint64_t{len} * 8);
        fold(m_ctx, Opcode::VMUL, p.ct, a(m_pblk), a(m_pblk), len, 256, 256, 8, 32, 8);
        lane_reduce(m_ctx, Opcode::VRED_MAX, p.ct, a(m_pblk), dst, len, 256, 1);
    }

    // nburst rows of lanes values at src (row stride src_rs bytes) -> GM rows of cl elements.
    void store(uint64_t dst_elem, uint32_t nburst, uint64_t cl, uint64_t gstride, uint32_t lanes, uint32_t src,
               int64_t src_rs) {
        const ReducePlan& p = m_p;
        const uint32_t ey = isa::dtype_size(p.yt);
        LocalTensor<uint8_t> out = m_out.AllocTensor<uint8_t>();
        const int64_t ors = int64_t{lanes} * ey;
        if (p.yt != p.ct) {
            vrun(m_ctx, Opcode::VCONV, p.yt, vop(out.address(), 0, ors), vop(src, 0, src_rs), {}, 1, nburst, lanes, 0,
                 p.ct);
        } else {
            vrun(m_ctx, Opcode::VMULS, p.ct, vop(out.address(), 0, ors), vop(src, 0, src_rs), {}, 1, nburst, lanes, 1.0);
        }
        m_out.EnQue(out);
        LocalTensor<uint8_t> o = m_out.DeQue<uint8_t>();
        detail::copy_out(m_ctx, p.yt, p.y + dst_elem * ey, isa::Pos::UB, o.address(),
                         isa::CopyParams{nburst, static_cast<uint32_t>(cl * ey),
                                         static_cast<uint32_t>((uint64_t{lanes} * ey - up(cl * ey, kBlk)) / kBlk),
                                         static_cast<uint32_t>((gstride - cl) * ey)});
        m_out.FreeTensor(o);
    }

    void row_tile(uint64_t o0, uint32_t len) {
        const ReducePlan& p = m_p;
        const int64_t rs = int64_t{p.cp} * 4;
        const uint64_t keep = cdiv(p.cp / 64, 2);
        const int64_t gs = static_cast<int64_t>(keep * 256);
        const uint32_t scr = a(m_scr);
        uint32_t unit = scr;  // where each row's 64-lane result ends up
        int64_t unit_gs = gs;
        LocalTensor<uint8_t> held;  // the input buffer, when x is it (freed once nothing reads it)
        for (uint64_t c = 0; c < p.nch; ++c) {
            const uint64_t c0 = c * p.cp, cl = std::min<uint64_t>(p.cp, p.len - c0);
            uint32_t x = load(o0 * p.len + c0, len, cl, p.len, p.cp, held);
            const uint64_t units = cdiv(cl, 64);
            const uint32_t valid = static_cast<uint32_t>(cl % 64);
            const uint32_t last = x + static_cast<uint32_t>((units - 1) * 256);
            if (p.op == ReducePlan::Op::LogSumExp) {
                if (valid) fill_tail(m_ctx, p.ct, last, len, rs, valid, -kInf);
                // x is read again below: the maximum's fold alternates with t (free until then).
                const Folded m = fold_rows(Opcode::VMAX, x, len, units, rs, scr, gs, a(m_t));
                lane_reduce(m_ctx, Opcode::VRED_MAX, p.ct, m.addr, vals(0), len, m.gs, 64);
                brcb(m_ctx, p.ct, a(m_blocks), vals(0), len);
                expand_blocks(m_ctx, p.ct, a(m_e), a(m_blocks), len);
                vrun(m_ctx, Opcode::VSUB, p.ct, vop(a(m_t), 0, rs), vop(x, 0, rs), vrow(a(m_e), 0, 256), 1, len,
                     units * 64);
                vrun(m_ctx, Opcode::VEXP, p.ct, vop(x), vop(a(m_t)), {}, 1, 1, uint64_t{len} * p.cp);
            } else {
                x = pre(x, uint64_t{len} * p.cp);
                if (valid) fill_tail(m_ctx, p.ct, x + static_cast<uint32_t>((units - 1) * 256), len, rs, valid, neutral(p));
            }
            const Opcode op = p.op == ReducePlan::Op::LogSumExp ? Opcode::VADD : fold_op(p);
            const Folded r = fold_rows(op, x, len, units, rs, scr, gs, x);  // x is not read again
            unit = r.addr, unit_gs = r.gs;
            if (p.nch > 1) {
                if (c == 0) vrun(m_ctx, Opcode::VMULS, p.ct, vop(a(m_acc), 0, 256), vop(unit, 0, unit_gs), {}, 1, len, 64, 1.0);
                else vrun(m_ctx, op, p.ct, vop(a(m_acc), 0, 256), vop(a(m_acc), 0, 256), vop(unit, 0, unit_gs), 1, len, 64);
            }
            if (held.GetSize() && p.nch > 1) m_in.FreeTensor(held);
            if (c + 1 < p.nch) m_ctx.scalar(2);
        }
        if (p.nch > 1) unit = a(m_acc), unit_gs = 256;
        const uint32_t res = vals(1);
        finish_rows(unit, unit_gs, len, res);
        if (held.GetSize() && p.nch == 1) m_in.FreeTensor(held);
        post(res, 1, 0, len, vals(0), 0);
        store(o0, 1, len, len, static_cast<uint32_t>(up(len, 64)), res, 0);
    }

    // Folds `units` 64-lane units of each of len rows (stride rs) to one unit a row: the levels
    // alternate between scr (stride gs) and alt (stride rs, a tile like x) when they lie in
    // different bank spans (fold_alt), else fold in scr. Returns where the units are.
    Folded fold_rows(Opcode op, uint32_t x, uint32_t len, uint64_t units, int64_t rs, uint32_t scr, int64_t gs,
                     uint32_t alt) {
        if (units == 1) return {x, rs};
        return fold_alt(m_ctx, op, m_p.ct, x, scr, len, rs, gs, units, 256, 64, alt, rs, uint64_t{len} * rs,
                        uint64_t{len} * gs);
    }

    void col_tile(uint64_t it) {
        const ReducePlan& p = m_p;
        const uint64_t nch = cdiv(p.inner, p.ic);
        const uint64_t o0 = it / nch * p.g, ch = it % nch;
        const uint32_t g = static_cast<uint32_t>(std::min<uint64_t>(p.g, p.outer - o0));
        const uint64_t i0 = ch * p.ic, ic = std::min(p.ic, p.inner - i0);
        const int64_t rs = int64_t{p.icp} * 4;
        const uint32_t scr = a(m_scr);
        const Opcode op = p.op == ReducePlan::Op::LogSumExp ? Opcode::VADD : fold_op(p);
        uint32_t res = scr;
        int64_t res_gs = 0;
        LocalTensor<uint8_t> held;  // the input buffer, when x is it (freed once nothing reads it)
        for (uint64_t r0 = 0; r0 < p.len; r0 += p.rc) {
            const uint64_t rc = std::min(p.rc, p.len - r0);
            const int64_t gs = rs * static_cast<int64_t>(rc), sgs = rs * static_cast<int64_t>(cdiv(rc, 2));
            const uint32_t rows = static_cast<uint32_t>(g * rc);
            // g slices (each len x inner) of rc rows: bursts of ic elements, inner apart; slices
            // are consecutive when the rows are whole (rc == len).
            uint32_t x = load(o0 * p.len * p.inner + r0 * p.inner + i0, rows, ic, p.inner, p.icp, held);
            const uint64_t n = uint64_t{rows} * p.icp;
            if (p.op == ReducePlan::Op::LogSumExp) {
                fold(m_ctx, Opcode::VMAX, p.ct, x, scr, g, gs, sgs, rc, rs, p.icp);
                vrun(m_ctx, Opcode::VMULS, p.ct, vop(a(m_e), rs), vop(scr, sgs), {}, g, 1, p.icp, 1.0);
                vrun(m_ctx, Opcode::VSUB, p.ct, vop(a(m_t), gs, rs), vop(x, gs, rs), vop(scr, sgs, 0), g, rc, p.icp);
                vrun(m_ctx, Opcode::VEXP, p.ct, vop(a(m_t)), vop(a(m_t)), {}, 1, 1, n);
                x = a(m_t);
            } else {
                x = pre(x, n);
            }
            // x is not read again: the levels alternate between scr and x (fold_alt).
            const Folded f = fold_alt(m_ctx, op, p.ct, x, scr, g, gs, sgs, rc, rs, p.icp, x, gs, uint64_t{g} * gs,
                                      uint64_t{g} * sgs);
            res = f.addr, res_gs = f.gs;
            if (p.rc < p.len) {
                if (r0 == 0) vrun(m_ctx, Opcode::VMULS, p.ct, vop(a(m_acc)), vop(f.addr), {}, 1, 1, p.icp, 1.0);
                else vrun(m_ctx, op, p.ct, vop(a(m_acc)), vop(a(m_acc)), vop(f.addr), 1, 1, p.icp);
                res = a(m_acc), res_gs = rs;
                if (held.GetSize()) m_in.FreeTensor(held);
            }
        }
        // LSE keeps the maxima in e (one row per group, stride rs); results in res (stride res_gs).
        post(res, g, res_gs, p.icp, a(m_e), rs);
        store(o0 * p.inner + i0, g, ic, p.inner, p.icp, res, res_gs);
        if (held.GetSize() && p.rc >= p.len) m_in.FreeTensor(held);
    }

    // Positions as fp32 (rows form: 0..cp-1 along a row; columns form: one 32-byte block per
    // row position) and the sentinel block (never chosen unless every candidate is one).
    void arg_setup() {
        const ReducePlan& p = m_p;
        const isa::DType F = isa::DType::FP32;
        if (p.rows) {
            iota(m_ctx, F, a(m_iota), p.cp);
        } else {
            iota(m_ctx, F, a(m_iota), p.len);
            brcb(m_ctx, F, a(m_iota) + static_cast<uint32_t>(up(p.len, 64) * 4), a(m_iota), p.len);
        }
        vrun(m_ctx, Opcode::VDUP, F, vop(a(m_sent)), {}, {}, 1, 1, 64, p.select_last ? -1.0 : 2147483648.0);
    }
    Opcode arg_ext() const { return m_p.op == ReducePlan::Op::ArgMax ? Opcode::VMAX : Opcode::VMIN; }
    Opcode arg_pick() const { return m_p.select_last ? Opcode::VMAX : Opcode::VMIN; }
    Opcode red_of(Opcode op) const { return op == Opcode::VMAX ? Opcode::VRED_MAX : Opcode::VRED_MIN; }

    void arg_rows(uint64_t o0, uint32_t len) {
        const ReducePlan& p = m_p;
        const int64_t rs = int64_t{p.cp} * 4;
        const uint64_t units = p.cp / 64, keep = cdiv(units, 2);
        const int64_t gs = static_cast<int64_t>(keep * 256);
        const uint32_t scr = a(m_scr), t = a(m_t);
        LocalTensor<uint8_t> held;
        const uint32_t x = load(o0 * p.len, len, p.len, p.len, p.cp, held);
        const uint32_t valid = static_cast<uint32_t>(p.len % 64);
        // Padding lanes hold NaN: max/min skip it and it equals nothing.
        if (valid) fill_tail(m_ctx, isa::DType::FP32, x + static_cast<uint32_t>((units - 1) * 256), len, rs, valid,
                             std::numeric_limits<double>::quiet_NaN());
        auto reduce_rows = [&](Opcode op, uint32_t src, int i) {
            if (units == 1) {
                lane_reduce(m_ctx, red_of(op), isa::DType::FP32, src, vals(i), len, rs, 64);
                return;
            }
            fold(m_ctx, op, isa::DType::FP32, src, scr, len, rs, gs, units, 256, 64);
            lane_reduce(m_ctx, red_of(op), isa::DType::FP32, scr, vals(i), len, gs, 64);
        };
        reduce_rows(arg_ext(), x, 0);
        brcb(m_ctx, isa::DType::FP32, a(m_blocks), vals(0), len);
        expand_blocks(m_ctx, isa::DType::FP32, a(m_e), a(m_blocks), len);
        vselect_cmp(m_ctx, isa::DType::FP32, isa::CmpMode::EQ, vop(x, 0, rs), vrow(a(m_e), 0, 256), isa::DType::FP32,
                    vop(t, 0, rs), vop(a(m_iota), 0, 0), vblock(a(m_sent), 0, 0), a(m_bits), 1, len, p.cp);
        if (held.GetSize()) m_in.FreeTensor(held);
        reduce_rows(arg_pick(), t, 1);
        store(o0, 1, len, len, static_cast<uint32_t>(up(len, 64)), vals(1), 0);
    }

    void arg_cols(uint64_t it) {
        const ReducePlan& p = m_p;
        const uint64_t nch = cdiv(p.inner, p.ic);
        const uint64_t o0 = it / nch * p.g, ch = it % nch;
        const uint32_t g = static_cast<uint32_t>(std::min<uint64_t>(p.g, p.outer - o0));
        const uint64_t i0 = ch * p.ic, ic = std::min(p.ic, p.inner - i0);
        const int64_t rs = int64_t{p.icp} * 4, gs = rs * static_cast<int64_t>(p.len),
                      sgs = rs * static_cast<int64_t>(cdiv(p.len, 2));
        const uint32_t scr = a(m_scr), t = a(m_t);
        LocalTensor<uint8_t> held;
        const uint32_t x = load(o0 * p.len * p.inner + i0, static_cast<uint32_t>(g * p.len), ic, p.inner, p.icp, held);
        fold(m_ctx, arg_ext(), isa::DType::FP32, x, scr, g, gs, sgs, p.len, rs, p.icp);
        const uint32_t pos = a(m_iota) + static_cast<uint32_t>(up(p.len, 64) * 4);
        vselect_cmp(m_ctx, isa::DType::FP32, isa::CmpMode::EQ, vop(x, gs, rs), vop(scr, sgs, 0), isa::DType::FP32,
                    vop(t, gs, rs), vblock(pos, 0, kBlk), vblock(a(m_sent), 0, 0), a(m_bits), g, p.len, p.icp);
        if (held.GetSize()) m_in.FreeTensor(held);
        fold(m_ctx, arg_pick(), isa::DType::FP32, t, scr, g, gs, sgs, p.len, rs, p.icp);
        store(o0 * p.inner + i0, g, ic, p.inner, p.icp, scr, sgs);
    }

    KernelContext& m_ctx;
    const ReducePlan& m_p;
    TPipe m_pipe;
    TQue<TPosition::VECIN> m_in;
    TQue<TPosition::VECOUT> m_out;
    TBuf<TPosition::VECCALC> m_xf, m_t, m_scr, m_acc, m_e, m_vals, m_blocks, m_cmp, m_pblk, m_iota, m_sent, m_bits;
};

}  // namespace

void reduce_kernel(isa::IInstrSink& sink, const ReducePlan& p) {
    KernelContext ctx(sink);
    ReduceKernel(ctx, p).run();
}

}  // namespace sfumato::ops::norm
