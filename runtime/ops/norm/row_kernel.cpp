// Row kernel of Softmax, LogSoftmax, LayerNormalization and InstanceNormalization
// (runtime/ops/norm/row_kernel.h).
#include "runtime/ops/norm/row_kernel.h"

#include <algorithm>
#include <limits>

#include "runtime/kernel/api.h"
#include "runtime/ops/norm/row_layout.h"
#include "runtime/ops/norm/vec_nest.h"

namespace sfumato::ops::norm {

using isa::DType;
using isa::Opcode;
using namespace sfumato::kernel;

namespace {

class RowKernel {
public:
    RowKernel(KernelContext& ctx, const RowPlan& p) : m_ctx(ctx), m_p(p), m_pipe(ctx) {}

    void run() {
        const RowPlan& p = m_p;
        const uint64_t total = p.P * p.Q;
        const uint64_t w_begin = uint64_t{m_ctx.block_idx()} * p.per_block;
        if (w_begin >= total) return;
        const uint64_t w_end = std::min(total, w_begin + p.per_block);
        const Layout l = layout(p, p.k);
        if (!place(l)) init_sequential(l);
        for (uint64_t w = w_begin; p.nch > 1 && w < w_end; ++w) {
            m_ctx.scalar(4);
            if (p.kind == RowPlan::Kind::LayerNorm) chunked_layer_norm(w);
            else chunked_softmax(w);
        }
        for (uint64_t w = w_begin; p.nch == 1 && w < w_end;) {
            const uint64_t pi = w / p.Q, q0 = w % p.Q;
            const uint32_t len = static_cast<uint32_t>(std::min<uint64_t>({p.k, p.Q - q0, w_end - w}));
            m_ctx.scalar(4);  // tile bookkeeping
            tile(w, pi, q0, len);
            w += len;
        }
        m_in.drain();
        m_out.drain();
        if (l.par) m_par.drain();
        if (l.stat) m_stat.drain();
    }

private:
    // The buffers one after the other, each staggered (vec_nest.h).
    void init_sequential(const Layout& l) {
        const RowPlan& p = m_p;
        m_pipe.InitBuffer(m_in, p.buffers, static_cast<uint32_t>(l.in));
        m_pipe.InitBuffer(m_out, p.buffers, static_cast<uint32_t>(l.out));
        if (l.xf) m_pipe.InitBuffer(m_xf, static_cast<uint32_t>(l.xf));
        m_pipe.InitBuffer(m_t, static_cast<uint32_t>(l.t));
        m_pipe.InitBuffer(m_scr, static_cast<uint32_t>(l.scr));
        m_pipe.InitBuffer(m_e, static_cast<uint32_t>(l.e));
        m_pipe.InitBuffer(m_vals, static_cast<uint32_t>(l.vals));
        m_pipe.InitBuffer(m_blocks, static_cast<uint32_t>(l.blocks));
        if (l.gvec) {
            m_pipe.InitBuffer(m_gstage, 1, static_cast<uint32_t>(l.gstage));
            m_pipe.InitBuffer(m_gvec, static_cast<uint32_t>(l.gvec));
            if (p.nch == 1) load_lane_params();
        }
        if (l.par) m_pipe.InitBuffer(m_par, 2, static_cast<uint32_t>(l.par));
        if (l.stat) m_pipe.InitBuffer(m_stat, 2, static_cast<uint32_t>(l.stat));
    }

    // The buffers placed for the 220x bank rules (row_layout.h); false: not placed.
    bool place(const Layout& l) {
        const RowPlan& p = m_p;
        const RowPlacement at = place_row(p, l, m_ctx.sink().buffer_size(isa::Pos::UB));
        if (!at.placed) return false;
        const uint32_t base = m_pipe.Reserve(TPosition::VECCALC, static_cast<uint32_t>(at.reserve), "row kernel buffers");
        auto a = [&](uint64_t off) { return static_cast<uint32_t>(base + off); };
        m_pipe.InitBufferAt(m_in, 2, static_cast<uint32_t>(at.in_bytes), a(at.in[0]));
        m_pipe.SetBufferAddress(m_in, 1, a(at.in[1]));
        m_pipe.InitBufferAt(m_out, 2, static_cast<uint32_t>(at.out_bytes), a(at.out[0]));
        m_pipe.SetBufferAddress(m_out, 1, a(at.out[1]));
        if (l.xf) m_pipe.InitBufferAt(m_xf, static_cast<uint32_t>(at.f32_bytes), a(at.xf));
        m_pipe.InitBufferAt(m_t, static_cast<uint32_t>(at.f32_bytes), a(at.t));
        m_pipe.InitBufferAt(m_scr, static_cast<uint32_t>(at.scr_bytes), a(at.scr));
        m_pipe.InitBufferAt(m_e, static_cast<uint32_t>(at.e_bytes), a(at.e));
        m_pipe.InitBufferAt(m_vals, static_cast<uint32_t>(l.vals), a(at.vals));
        m_pipe.InitBufferAt(m_blocks, static_cast<uint32_t>(l.blocks), a(at.blocks));
        if (l.gvec) {
            m_pipe.InitBufferAt(m_gstage, 1, static_cast<uint32_t>(l.gstage), a(at.gstage));
            m_pipe.InitBufferAt(m_gvec, static_cast<uint32_t>(at.gvec_bytes), a(at.gvec));
            if (p.nch == 1) load_lane_params();
        }
        if (l.par) m_pipe.InitBufferAt(m_par, 2, static_cast<uint32_t>(l.par), a(at.par));
        if (l.stat) m_pipe.InitBufferAt(m_stat, 2, static_cast<uint32_t>(l.stat), a(at.stat));
        return true;
    }

    uint32_t vals(int i) const { return m_vals.Get<uint8_t>().address() + static_cast<uint32_t>(i * up(m_p.k, 64) * 4); }
    uint32_t blocks() const { return m_blocks.Get<uint8_t>().address(); }
    uint32_t param_blocks() const { return blocks() + static_cast<uint32_t>(up(m_p.k, 8) * kBlk); }
    uint32_t tbuf() const { return m_t.Get<uint8_t>().address(); }
    uint32_t ebuf() const { return m_e.Get<uint8_t>().address(); }
    // Spreads len per-row values (fp32 at v) over two 256-byte vectors per row in ebuf (row r
    // at ebuf + 512 r and + 256: one in each half of the UB bank groups, apply_rows); one
    // vector for a tile of one row.
    void per_row(uint32_t v, uint32_t len) {
        brcb(m_ctx, F32, blocks(), v, len);
        for (uint32_t h = 0; h < (len == 1 ? 1u : 2u); ++h)
            vrun(m_ctx, Opcode::VMULS, F32, vop(ebuf() + h * 256, 0, 512), vblock(blocks(), 0, kBlk), {}, 1, len, 64, 1.0);
    }

    // Gamma (and beta) as fp32 lane vectors of cp elements (once per block).
    void load_lane_params() {
        const RowPlan& p = m_p;
        const uint32_t g = m_gvec.Get<uint8_t>().address();
        auto one = [&](uint64_t gm, DType t, bool scalar, uint32_t dst) {
            LocalTensor<uint8_t> s = m_gstage.AllocTensor<uint8_t>();
            const uint64_t n = scalar ? 1 : p.cols;
            kernel::detail::copy_in(m_ctx, t, isa::Pos::UB, s.address(), gm,
                                    isa::CopyParams{1, static_cast<uint32_t>(n * isa::dtype_size(t)), 0, 0}, 0);
            m_gstage.EnQue(s);
            LocalTensor<uint8_t> d = m_gstage.DeQue<uint8_t>();
            if (scalar) {  // spread the value over the whole lane vector
                if (t != F32) vrun(m_ctx, Opcode::VCONV, F32, vop(vals(0)), vop(d.address()), {}, 1, 1, 1, 0, t);
                else vrun(m_ctx, Opcode::VMULS, F32, vop(vals(0)), vop(d.address()), {}, 1, 1, 1, 1.0);
                brcb(m_ctx, F32, blocks(), vals(0), 1);
                vrun(m_ctx, Opcode::VMULS, F32, vop(dst), vblock(blocks()), {}, 1, 1, p.cp, 1.0);
            } else if (t != F32) {
                vrun(m_ctx, Opcode::VCONV, F32, vop(dst), vop(d.address()), {}, 1, 1, n, 0, t);
            } else {
                vrun(m_ctx, Opcode::VMULS, F32, vop(dst), vop(d.address()), {}, 1, 1, n, 1.0);
            }
            m_gstage.FreeTensor(d);
        };
        one(p.gamma, p.gt, p.gamma_scalar, g);
        if (p.beta) one(p.beta, p.bt, p.beta_scalar, g + p.cp * 4);
        m_gstage.drain();
    }

    // Loads chunk c of work row w (one burst) and converts it to fp32; returns (addr, held).
    uint32_t load_chunk(uint64_t row0, uint64_t c, uint64_t cl, LocalTensor<uint8_t>& held) {
        const RowPlan& p = m_p;
        const uint32_t ex = isa::dtype_size(p.xt);
        LocalTensor<uint8_t> in = m_in.AllocTensor<uint8_t>();
        kernel::detail::copy_in(m_ctx, p.xt, isa::Pos::UB, in.address(), p.x + (row0 + c * p.cp) * ex,
                                isa::CopyParams{1, static_cast<uint32_t>(cl * ex), 0, 0}, 0);
        m_in.EnQue(in);
        LocalTensor<uint8_t> x = m_in.DeQue<uint8_t>();
        if (p.xt == F32) {
            held = x;
            return x.address();
        }
        const uint32_t xf = m_xf.Get<uint8_t>().address();
        vrun(m_ctx, Opcode::VCONV, F32, vop(xf), vop(x.address()), {}, 1, 1, up(cl, 64), 0, p.xt);
        m_in.FreeTensor(x);
        held = LocalTensor<uint8_t>();
        return xf;
    }

    // One value at v spread over the 256-byte row r of ebuf.
    void spread(uint32_t v, int r) {
        brcb(m_ctx, F32, blocks(), v, 1);
        expand_blocks(m_ctx, F32, ebuf() + static_cast<uint32_t>(r * 256), blocks(), 1);
    }

    // Sum or max of `units` 64-lane units of one row at src into vals(i).
    void reduce_units(Opcode op, Opcode red, uint32_t src, uint64_t units, int i) {
        if (units == 1) {
            lane_reduce(m_ctx, red, F32, src, vals(i), 1, 256, 64);
            return;
        }
        const uint32_t scr = m_scr.Get<uint8_t>().address();
        fold(m_ctx, op, F32, src, scr, 1, 0, 0, units, 256, 64);
        lane_reduce(m_ctx, red, F32, scr, vals(i), 1, 256, 64);
    }

    void chunked_softmax(uint64_t w) {
        const RowPlan& p = m_p;
        const uint64_t row0 = (w / p.Q) * p.sp + (w % p.Q) * p.sq;
        const uint32_t ey = isa::dtype_size(p.yt), t = tbuf();
        const double inf = kInf;
        auto one = [&](Opcode op, int d, int a, int b, double s = 0) {
            vrun(m_ctx, op, F32, vop(vals(d)), vop(vals(a)), vop(vals(b)), 1, 1, 1, s);
        };
        vrun(m_ctx, Opcode::VDUP, F32, vop(vals(2)), {}, {}, 1, 1, 1, -inf);  // M
        vrun(m_ctx, Opcode::VDUP, F32, vop(vals(3)), {}, {}, 1, 1, 1, 0.0);   // S
        for (uint64_t c = 0; c < p.nch; ++c) {
            const uint64_t cl = std::min<uint64_t>(p.cp, p.cols - c * p.cp), units = cdiv(cl, 64);
            LocalTensor<uint8_t> held;
            const uint32_t xf = load_chunk(row0, c, cl, held);
            if (cl % 64) fill_tail(m_ctx, F32, xf + static_cast<uint32_t>((units - 1) * 256), 1, 256,
                                   static_cast<uint32_t>(cl % 64), -inf);
            reduce_units(Opcode::VMAX, Opcode::VRED_MAX, xf, units, 0);  // chunk max
            one(Opcode::VMAX, 1, 2, 0);                                  // M' = max(M, chunk max)
            one(Opcode::VSUB, 0, 2, 1);                                  // M - M'
            one(Opcode::VEXP, 0, 0, 0);                                  // alpha
            spread(vals(1), 0);
            vrun(m_ctx, Opcode::VSUB, F32, vop(t), vop(xf), vrow(ebuf()), 1, 1, units * 64);
            vrun(m_ctx, Opcode::VEXP, F32, vop(xf), vop(t), {}, 1, 1, units * 64);
            reduce_units(Opcode::VADD, Opcode::VRED_SUM, xf, units, 4);  // chunk sum
            one(Opcode::VMUL, 3, 3, 0);
            one(Opcode::VADD, 3, 3, 4);                                  // S = S alpha + chunk sum
            one(Opcode::VMULS, 2, 1, 1, 1.0);                            // M = M'
            if (held.GetSize()) m_in.FreeTensor(held);
        }
        const bool soft = p.kind == RowPlan::Kind::Softmax;
        one(soft ? Opcode::VREC : Opcode::VLN, 3, 3, 3);
        spread(vals(2), 0);
        spread(vals(3), 1);
        for (uint64_t c = 0; c < p.nch; ++c) {
            const uint64_t cl = std::min<uint64_t>(p.cp, p.cols - c * p.cp), n = up(cl, 64);
            LocalTensor<uint8_t> held;
            const uint32_t xf = load_chunk(row0, c, cl, held);
            LocalTensor<uint8_t> out = m_out.AllocTensor<uint8_t>();
            const uint32_t y = p.yt == F32 ? out.address() : xf;
            vrun(m_ctx, Opcode::VSUB, F32, vop(t), vop(xf), vrow(ebuf()), 1, 1, n);
            if (soft) {
                vrun(m_ctx, Opcode::VEXP, F32, vop(xf), vop(t), {}, 1, 1, n);
                vrun(m_ctx, Opcode::VMUL, F32, vop(y == xf ? t : y), vop(xf), vrow(ebuf() + 256), 1, 1, n);
                if (p.yt != F32) vrun(m_ctx, Opcode::VCONV, p.yt, vop(out.address()), vop(t), {}, 1, 1, n, 0, F32);
            } else {
                vrun(m_ctx, Opcode::VSUB, F32, vop(y), vop(t), vrow(ebuf() + 256), 1, 1, n);
                if (p.yt != F32) vrun(m_ctx, Opcode::VCONV, p.yt, vop(out.address()), vop(xf), {}, 1, 1, n, 0, F32);
            }
            if (held.GetSize()) m_in.FreeTensor(held);
            m_out.EnQue(out);
            LocalTensor<uint8_t> o = m_out.DeQue<uint8_t>();
            kernel::detail::copy_out(m_ctx, p.yt, p.y + (row0 + c * p.cp) * ey, isa::Pos::UB, o.address(),
                                     isa::CopyParams{1, static_cast<uint32_t>(cl * ey), 0, 0});
            m_out.FreeTensor(o);
        }
    }

    // Lane parameter chunk c (gamma, then beta) as fp32 vectors in gvec (scalars: spread).
    void load_param_chunk(uint64_t c, uint64_t cl) {
        const RowPlan& p = m_p;
        const uint32_t g = m_gvec.Get<uint8_t>().address();
        auto one = [&](uint64_t gm, DType t, bool scalar, uint32_t dst) {
            const uint32_t es = isa::dtype_size(t);
            LocalTensor<uint8_t> st = m_gstage.AllocTensor<uint8_t>();
            kernel::detail::copy_in(m_ctx, t, isa::Pos::UB, st.address(), gm + (scalar ? 0 : c * p.cp * es),
                                    isa::CopyParams{1, static_cast<uint32_t>((scalar ? 1 : cl) * es), 0, 0}, 0);
            m_gstage.EnQue(st);
            LocalTensor<uint8_t> d = m_gstage.DeQue<uint8_t>();
            const uint64_t n = scalar ? 1 : cl;
            if (t != F32) vrun(m_ctx, Opcode::VCONV, F32, vop(scalar ? vals(5) : dst), vop(d.address()), {}, 1, 1, n, 0, t);
            else vrun(m_ctx, Opcode::VMULS, F32, vop(scalar ? vals(5) : dst), vop(d.address()), {}, 1, 1, n, 1.0);
            m_gstage.FreeTensor(d);
            if (scalar) {
                brcb(m_ctx, F32, blocks(), vals(5), 1);
                vrun(m_ctx, Opcode::VMULS, F32, vop(dst), vblock(blocks()), {}, 1, 1, up(cl, 64), 1.0);
            }
        };
        one(p.gamma, p.gt, p.gamma_scalar, g);
        if (p.beta) one(p.beta, p.bt, p.beta_scalar, g + p.cp * 4);
    }

    // LayerNorm / InstanceNorm of a row longer than UB: pass 1 merges per-chunk mean and sum of
    // squared deviations (Chan et al.: M2 = M2a + M2b + delta^2 na nb / n), pass 2 normalises.
    void chunked_layer_norm(uint64_t w) {
        const RowPlan& p = m_p;
        const uint64_t pi = w / p.Q, row0 = pi * p.sp + (w % p.Q) * p.sq;
        const uint32_t ey = isa::dtype_size(p.yt), t = tbuf();
        auto one = [&](Opcode op, int d, int a, int b, double sc = 0) {
            vrun(m_ctx, op, F32, vop(vals(d)), vop(vals(a)), vop(vals(b)), 1, 1, 1, sc);
        };
        LocalTensor<uint8_t> par;
        if (p.affine == RowPlan::Affine::PerP) {
            par = m_par.AllocTensor<uint8_t>();
            kernel::detail::copy_in(m_ctx, p.gt, isa::Pos::UB, par.address(), p.gamma + pi * isa::dtype_size(p.gt),
                                    isa::CopyParams{1, isa::dtype_size(p.gt), 0, 0}, 0);
            if (p.beta)
                kernel::detail::copy_in(m_ctx, p.bt, isa::Pos::UB, par.address() + kBlk,
                                        p.beta + pi * isa::dtype_size(p.bt), isa::CopyParams{1, isa::dtype_size(p.bt), 0, 0}, 0);
            m_par.EnQue(par);
        }
        vrun(m_ctx, Opcode::VDUP, F32, vop(vals(2)), {}, {}, 1, 1, 1, 0.0);  // mean
        vrun(m_ctx, Opcode::VDUP, F32, vop(vals(3)), {}, {}, 1, 1, 1, 0.0);  // M2
        for (uint64_t c = 0; c < p.nch; ++c) {
            const uint64_t cl = std::min<uint64_t>(p.cp, p.cols - c * p.cp), units = cdiv(cl, 64);
            const double na = static_cast<double>(c * p.cp), nb = static_cast<double>(cl), n = na + nb;
            LocalTensor<uint8_t> held;
            const uint32_t xf = load_chunk(row0, c, cl, held);
            const uint32_t last = static_cast<uint32_t>((units - 1) * 256), valid = static_cast<uint32_t>(cl % 64);
            if (valid) fill_tail(m_ctx, F32, xf + last, 1, 256, valid, 0.0);
            reduce_units(Opcode::VADD, Opcode::VRED_SUM, xf, units, 0);
            one(Opcode::VMULS, 0, 0, 0, 1.0 / nb);  // chunk mean
            spread(vals(0), 0);
            vrun(m_ctx, Opcode::VSUB, F32, vop(t), vop(xf), vrow(ebuf()), 1, 1, units * 64);
            if (valid) fill_tail(m_ctx, F32, t + last, 1, 256, valid, 0.0);
            vrun(m_ctx, Opcode::VMUL, F32, vop(xf), vop(t), vop(t), 1, 1, units * 64);
            reduce_units(Opcode::VADD, Opcode::VRED_SUM, xf, units, 4);  // chunk M2
            if (held.GetSize()) m_in.FreeTensor(held);
            one(Opcode::VSUB, 5, 0, 2);              // delta
            one(Opcode::VMULS, 1, 5, 5, nb / n);
            one(Opcode::VADD, 2, 2, 1);              // mean += delta nb / n
            one(Opcode::VMUL, 5, 5, 5);
            one(Opcode::VMULS, 5, 5, 5, na * nb / n);
            one(Opcode::VADD, 3, 3, 5);
            one(Opcode::VADD, 3, 3, 4);              // M2 += M2b + delta^2 na nb / n
        }
        one(Opcode::VMULS, 3, 3, 3, 1.0 / static_cast<double>(p.cols));
        one(Opcode::VADDS, 3, 3, 3, p.eps);
        one(Opcode::VRSQRT, 3, 3, 3);                // rstd
        if (p.mean || p.rstd) {
            LocalTensor<uint8_t> st = m_stat.AllocTensor<uint8_t>();
            const uint32_t half = static_cast<uint32_t>(up(p.k, 8) * 4);
            vrun(m_ctx, Opcode::VMULS, F32, vop(st.address()), vop(vals(2)), {}, 1, 1, 1, 1.0);
            vrun(m_ctx, Opcode::VMULS, F32, vop(st.address() + half), vop(vals(3)), {}, 1, 1, 1, 1.0);
            m_stat.EnQue(st);
            LocalTensor<uint8_t> s = m_stat.DeQue<uint8_t>();
            if (p.mean) kernel::detail::copy_out(m_ctx, F32, p.mean + w * 4, isa::Pos::UB, s.address(), isa::CopyParams{1, 4, 0, 0});
            if (p.rstd)
                kernel::detail::copy_out(m_ctx, F32, p.rstd + w * 4, isa::Pos::UB, s.address() + half, isa::CopyParams{1, 4, 0, 0});
            m_stat.FreeTensor(s);
        }
        spread(vals(2), 0);
        if (p.affine == RowPlan::Affine::PerP) {
            LocalTensor<uint8_t> pv = m_par.DeQue<uint8_t>();
            if (p.gt != F32) vrun(m_ctx, Opcode::VCONV, F32, vop(vals(0)), vop(pv.address()), {}, 1, 1, 1, 0, p.gt);
            else vrun(m_ctx, Opcode::VMULS, F32, vop(vals(0)), vop(pv.address()), {}, 1, 1, 1, 1.0);
            if (p.bt != F32) vrun(m_ctx, Opcode::VCONV, F32, vop(vals(4)), vop(pv.address() + kBlk), {}, 1, 1, 1, 0, p.bt);
            else vrun(m_ctx, Opcode::VMULS, F32, vop(vals(4)), vop(pv.address() + kBlk), {}, 1, 1, 1, 1.0);
            m_par.FreeTensor(pv);
            one(Opcode::VMUL, 3, 3, 0);  // rstd * scale
            spread(vals(4), 2);
        }
        spread(vals(3), 1);
        const uint32_t g = p.affine == RowPlan::Affine::Lanes ? m_gvec.Get<uint8_t>().address() : 0;
        for (uint64_t c = 0; c < p.nch; ++c) {
            const uint64_t cl = std::min<uint64_t>(p.cp, p.cols - c * p.cp), n = up(cl, 64);
            if (p.affine == RowPlan::Affine::Lanes) load_param_chunk(c, cl);
            LocalTensor<uint8_t> held;
            const uint32_t xf = load_chunk(row0, c, cl, held);
            LocalTensor<uint8_t> out = m_out.AllocTensor<uint8_t>();
            vrun(m_ctx, Opcode::VSUB, F32, vop(t), vop(xf), vrow(ebuf()), 1, 1, n);
            vrun(m_ctx, Opcode::VMUL, F32, vop(xf), vop(t), vrow(ebuf() + 256), 1, 1, n);
            uint32_t res = xf;
            if (p.affine == RowPlan::Affine::Lanes) {
                vrun(m_ctx, Opcode::VMUL, F32, vop(t), vop(xf), vop(g), 1, 1, n);
                res = t;
                if (p.beta) vrun(m_ctx, Opcode::VADD, F32, vop(xf), vop(t), vop(g + p.cp * 4), 1, 1, n), res = xf;
            } else if (p.affine == RowPlan::Affine::PerP) {
                vrun(m_ctx, Opcode::VADD, F32, vop(t), vop(xf), vrow(ebuf() + 512), 1, 1, n);
                res = t;
            }
            if (p.yt != F32) vrun(m_ctx, Opcode::VCONV, p.yt, vop(out.address()), vop(res), {}, 1, 1, n, 0, F32);
            else vrun(m_ctx, Opcode::VMULS, F32, vop(out.address()), vop(res), {}, 1, 1, n, 1.0);
            if (held.GetSize()) m_in.FreeTensor(held);
            m_out.EnQue(out);
            LocalTensor<uint8_t> o = m_out.DeQue<uint8_t>();
            kernel::detail::copy_out(m_ctx, p.yt, p.y + (row0 + c * p.cp) * ey, isa::Pos::UB, o.address(),
                                     isa::CopyParams{1, static_cast<uint32_t>(cl * ey), 0, 0});
            m_out.FreeTensor(o);
        }
    }

    void tile(uint64_t w, uint64_t pi, uint64_t q0, uint32_t len) {
        const RowPlan& p = m_p;
        const uint32_t ex = isa::dtype_size(p.xt), ey = isa::dtype_size(p.yt);
        const uint64_t row0 = pi * p.sp + q0 * p.sq;
        // ---- MTE2: load
        LocalTensor<uint8_t> in = m_in.AllocTensor<uint8_t>();
        const uint32_t ingap = static_cast<uint32_t>((uint64_t{p.cp} * ex - up(p.cols * ex, kBlk)) / kBlk);
        kernel::detail::copy_in(m_ctx, p.xt, isa::Pos::UB, in.address(), p.x + row0 * ex,
                                isa::CopyParams{len, static_cast<uint32_t>(p.cols * ex),
                                                static_cast<uint32_t>((p.sq - p.cols) * ex), ingap},
                                0);
        m_in.EnQue(in);
        LocalTensor<uint8_t> par;
        if (p.affine == RowPlan::Affine::PerP) {
            par = m_par.AllocTensor<uint8_t>();
            kernel::detail::copy_in(m_ctx, p.gt, isa::Pos::UB, par.address(), p.gamma + pi * isa::dtype_size(p.gt),
                                    isa::CopyParams{1, isa::dtype_size(p.gt), 0, 0}, 0);
            if (p.beta)
                kernel::detail::copy_in(m_ctx, p.bt, isa::Pos::UB, par.address() + kBlk,
                                        p.beta + pi * isa::dtype_size(p.bt),
                                        isa::CopyParams{1, isa::dtype_size(p.bt), 0, 0}, 0);
            m_par.EnQue(par);
        }
        // ---- V
        LocalTensor<uint8_t> xin = m_in.DeQue<uint8_t>();
        const uint32_t xf = p.xt == F32 ? xin.address() : m_xf.Get<uint8_t>().address();
        const uint64_t n = uint64_t{len} * p.cp;
        if (p.xt != F32) {
            vrun(m_ctx, Opcode::VCONV, F32, vop(xf), vop(xin.address()), {}, 1, 1, n, 0, p.xt);
            m_in.FreeTensor(xin);
        }
        LocalTensor<uint8_t> out = m_out.AllocTensor<uint8_t>();
        const uint32_t oaddr = p.yt == F32 ? out.address() : 0;  // fp32 output: the last op writes it
        m_out_addr = out.address(), m_out_bytes = up(uint64_t{p.k} * p.cp * isa::dtype_size(p.yt), kBlk);
        LocalTensor<uint8_t> stat, pv;
        if (p.mean || p.rstd) stat = m_stat.AllocTensor<uint8_t>();
        if (p.affine == RowPlan::Affine::PerP) pv = m_par.DeQue<uint8_t>();
        const uint32_t res = p.kind == RowPlan::Kind::LayerNorm ? layer_norm(xf, oaddr, len, pv, stat)
                                                                : softmax(xf, oaddr, len);
        m_out_addr = 0;
        if (p.yt != F32) vrun(m_ctx, Opcode::VCONV, p.yt, vop(out.address()), vop(res), {}, 1, 1, n, 0, F32);
        if (p.xt == F32) m_in.FreeTensor(xin);
        if (p.affine == RowPlan::Affine::PerP) m_par.FreeTensor(pv);
        m_out.EnQue(out);
        if (p.mean || p.rstd) m_stat.EnQue(stat);
        // ---- MTE3: store
        LocalTensor<uint8_t> o = m_out.DeQue<uint8_t>();
        const uint32_t outgap = static_cast<uint32_t>((uint64_t{p.cp} * ey - up(p.cols * ey, kBlk)) / kBlk);
        kernel::detail::copy_out(m_ctx, p.yt, p.y + row0 * ey, isa::Pos::UB, o.address(),
                                 isa::CopyParams{len, static_cast<uint32_t>(p.cols * ey), outgap,
                                                 static_cast<uint32_t>((p.sq - p.cols) * ey)});
        m_out.FreeTensor(o);
        if (p.mean || p.rstd) {
            LocalTensor<uint8_t> s = m_stat.DeQue<uint8_t>();
            const uint32_t half = static_cast<uint32_t>(up(p.k, 8) * 4);
            if (p.mean)
                kernel::detail::copy_out(m_ctx, F32, p.mean + w * 4, isa::Pos::UB, s.address(),
                                         isa::CopyParams{1, len * 4u, 0, 0});
            if (p.rstd)
                kernel::detail::copy_out(m_ctx, F32, p.rstd + w * 4, isa::Pos::UB, s.address() + half,
                                         isa::CopyParams{1, len * 4u, 0, 0});
            m_stat.FreeTensor(s);
        }
    }

    // Sum or max of each of len rows at src (fp32, row stride cp) into vals(i).
    void row_reduce(Opcode op, Opcode red, uint32_t src, uint32_t len, int i) {
        const RowPlan& p = m_p;
        const uint64_t c = p.cp / 64, keep = cdiv(c, 2);
        if (c == 1) {
            lane_reduce(m_ctx, red, F32, src, vals(i), len, int64_t{p.cp} * 4, 64);
            return;
        }
        const uint32_t scr = m_scr.Get<uint8_t>().address();
        const int64_t gs = static_cast<int64_t>(keep * 256);
        const Folded r = fold_alt(m_ctx, op, F32, src, scr, len, int64_t{p.cp} * 4, gs, c, 256, 64, alt(len, keep),
                                  alt_gs(keep), alt_gs(keep) * len, gs * len);
        lane_reduce(m_ctx, red, F32, r.addr, vals(i), len, r.gs, 64);
    }

    // The second buffer of a fold whose first level writes `units` units a row into scr: the
    // tile's output buffer (free until the tile's last instruction), when it holds half of them
    // for each of len rows; 0 = none (the fold stays in place).
    int64_t alt_gs(uint64_t units) const { return static_cast<int64_t>(cdiv(units, 2) * 256); }
    uint32_t alt(uint32_t len, uint64_t units) const {
        return m_out_addr && uint64_t{len} * alt_gs(units) <= m_out_bytes ? m_out_addr : 0;
    }

    // Rows at a (fp32) op the per-row vectors in ebuf into dst. A per-row vector is read again
    // for every 256-byte unit of its row, and consecutive units of a sit in alternate halves of
    // the UB bank groups: the even units and the odd units go as two instructions, each with
    // the copy of the vector in the other half than its units (two reads in one group would
    // conflict every other repeat). A tile of one row keeps one instruction: its vector chain
    // is short enough that two more instructions (the split and the second copy) cost more
    // time than the conflicts (layernorm 4096 x 4096 fp16 on 910B-like: 57.814 us split,
    // 56.599 us not; docs/fidelity.md).
    void apply_rows(Opcode op, uint32_t dst, uint32_t a, uint32_t len) {
        const int64_t rs = int64_t{m_p.cp} * 4;
        const uint64_t c = m_p.cp / 64;
        const bool same = (rs / 256) % 2 == 0;  // every row's unit 0 in the same half
        if (len == 1) {
            vrun(m_ctx, op, F32, vop(dst), vop(a), vrow(ebuf()), 1, 1, m_p.cp);
            return;
        }
        for (uint32_t r0 = 0; r0 < len; r0 += same ? len : 1) {
            const uint32_t rows = same ? len : 1;
            const uint64_t ar = a + uint64_t{r0} * rs, dr = dst + uint64_t{r0} * rs, er = ebuf() + uint64_t{r0} * 512;
            for (uint64_t q = 0; q < 2 && q < c; ++q) {
                const uint64_t half = (ar / 256 + q) % 2, e = er + ((er / 256) % 2 == half ? 256 : 0);
                vrun(m_ctx, op, F32, vop(static_cast<uint32_t>(dr + q * 256), rs, 512),
                     vop(static_cast<uint32_t>(ar + q * 256), rs, 512), vrow(static_cast<uint32_t>(e), 512, 0), rows,
                     (c - q + 1) / 2, 64);
            }
        }
    }

    // t = x - max; xf = exp(t); y = xf / sum (Softmax) or t - ln(sum) (LogSoftmax), into oaddr
    // when set, else into a free buffer; returns where y is.
    uint32_t softmax(uint32_t xf, uint32_t oaddr, uint32_t len) {
        const RowPlan& p = m_p;
        const int64_t rs = int64_t{p.cp} * 4;
        const uint32_t valid = static_cast<uint32_t>(p.cols % 64), t = tbuf();
        if (valid) fill_tail(m_ctx, F32, xf + p.cp * 4 - 256, len, rs, valid, -kInf);
        row_reduce(Opcode::VMAX, Opcode::VRED_MAX, xf, len, 0);
        per_row(vals(0), len);
        apply_rows(Opcode::VSUB, t, xf, len);
        const uint64_t n = uint64_t{len} * p.cp;
        vrun(m_ctx, Opcode::VEXP, F32, vop(xf), vop(t), {}, 1, 1, n);
        row_reduce(Opcode::VADD, Opcode::VRED_SUM, xf, len, 1);
        const bool soft = p.kind == RowPlan::Kind::Softmax;
        vrun(m_ctx, soft ? Opcode::VREC : Opcode::VLN, F32, vop(vals(1)), vop(vals(1)), {}, 1, 1, len);
        per_row(vals(1), len);
        const uint32_t ydst = oaddr ? oaddr : soft ? t : xf;
        apply_rows(soft ? Opcode::VMUL : Opcode::VSUB, ydst, soft ? xf : t, len);
        return ydst;
    }

    // t = x - mean; var from t; y = t * rstd [* gamma + beta | * scale + B], into oaddr when
    // set, else into a free buffer; returns where y is.
    uint32_t layer_norm(uint32_t xf, uint32_t oaddr, uint32_t len, const LocalTensor<uint8_t>& par,
                    const LocalTensor<uint8_t>& stat) {
        const RowPlan& p = m_p;
        const int64_t rs = int64_t{p.cp} * 4;
        const uint32_t valid = static_cast<uint32_t>(p.cols % 64), t = tbuf();
        const uint64_t c = p.cp / 64, keep = cdiv(c, 2), pairs = c / 2;
        const double inv_n = 1.0 / static_cast<double>(p.cols);
        if (valid) fill_tail(m_ctx, F32, xf + p.cp * 4 - 256, len, rs, valid, 0.0);
        row_reduce(Opcode::VADD, Opcode::VRED_SUM, xf, len, 0);
        vrun(m_ctx, Opcode::VMULS, F32, vop(vals(0)), vop(vals(0)), {}, 1, 1, len, inv_n);
        const uint32_t half = static_cast<uint32_t>(up(p.k, 8) * 4);
        if (p.mean) vrun(m_ctx, Opcode::VMULS, F32, vop(stat.address()), vop(vals(0)), {}, 1, 1, len, 1.0);
        per_row(vals(0), len);
        apply_rows(Opcode::VSUB, t, xf, len);
        if (valid) fill_tail(m_ctx, F32, t + p.cp * 4 - 256, len, rs, valid, 0.0);
        // Sum of squares: the first fold level squares adjacent units (x*x, then += x*x).
        const uint32_t scr = m_scr.Get<uint8_t>().address();
        const int64_t gs = static_cast<int64_t>(keep * 256);
        Folded sq{scr, gs};
        if (c == 1) {
            vrun(m_ctx, Opcode::VMUL, F32, vop(scr, 0, gs), vop(t, 0, rs), vop(t, 0, rs), 1, len, 64);
        } else {
            vrun(m_ctx, Opcode::VMUL, F32, vop(scr, gs, 256), vop(t, rs, 512), vop(t, rs, 512), len, pairs, 64);
            vrun(m_ctx, Opcode::VMLA, F32, vop(scr, gs, 256), vop(t + 256, rs, 512), vop(t + 256, rs, 512), len, pairs, 64);
            if (c % 2)
                vrun(m_ctx, Opcode::VMUL, F32, vop(static_cast<uint32_t>(scr + pairs * 256), gs),
                     vop(static_cast<uint32_t>(t + 2 * pairs * 256), rs), vop(static_cast<uint32_t>(t + 2 * pairs * 256), rs),
                     len, 1, 64);
            // Out of place from the first level (scr into the output buffer and back).
            const uint32_t a = alt(len, keep);
            if (a && keep > 1 && spans_apart(a, alt_gs(keep) * len, scr, gs * len))
                sq = fold_alt(m_ctx, Opcode::VADD, F32, scr, a, len, gs, alt_gs(keep), keep, 256, 64, scr, gs, gs * len,
                              alt_gs(keep) * len);
            else fold(m_ctx, Opcode::VADD, F32, scr, scr, len, gs, gs, keep, 256, 64);
        }
        lane_reduce(m_ctx, Opcode::VRED_SUM, F32, sq.addr, vals(1), len, sq.gs, 64);
        vrun(m_ctx, Opcode::VMULS, F32, vop(vals(1)), vop(vals(1)), {}, 1, 1, len, inv_n);
        vrun(m_ctx, Opcode::VADDS, F32, vop(vals(1)), vop(vals(1)), {}, 1, 1, len, p.eps);
        vrun(m_ctx, Opcode::VRSQRT, F32, vop(vals(1)), vop(vals(1)), {}, 1, 1, len);
        if (p.rstd) vrun(m_ctx, Opcode::VMULS, F32, vop(stat.address() + half), vop(vals(1)), {}, 1, 1, len, 1.0);
        if (p.affine == RowPlan::Affine::PerP) {
            // Per tile: y = t * (rstd * scale) + B, scale and B one value each.
            const uint32_t pv = vals(0);  // the mean is no longer needed
            if (p.gt != F32) vrun(m_ctx, Opcode::VCONV, F32, vop(pv), vop(par.address()), {}, 1, 1, 1, 0, p.gt);
            else vrun(m_ctx, Opcode::VMULS, F32, vop(pv), vop(par.address()), {}, 1, 1, 1, 1.0);
            if (p.beta) {
                if (p.bt != F32)
                    vrun(m_ctx, Opcode::VCONV, F32, vop(pv + kBlk), vop(par.address() + kBlk), {}, 1, 1, 1, 0, p.bt);
                else vrun(m_ctx, Opcode::VMULS, F32, vop(pv + kBlk), vop(par.address() + kBlk), {}, 1, 1, 1, 1.0);
            }
            const uint32_t pb = param_blocks();  // block 0 = scale, block 8 = B
            brcb(m_ctx, F32, pb, pv, 1);
            vrun(m_ctx, Opcode::VMUL, F32, vop(vals(1)), vop(vals(1)), vblock(pb), 1, 1, len);
            per_row(vals(1), len);
            if (!p.beta) {
                const uint32_t y = oaddr ? oaddr : xf;
                apply_rows(Opcode::VMUL, y, t, len);
                return y;
            }
            apply_rows(Opcode::VMUL, xf, t, len);
            brcb(m_ctx, F32, pb + 8 * kBlk, pv + kBlk, 1);
            expand_blocks(m_ctx, F32, ebuf(), pb + 8 * kBlk, 1);
            const uint32_t y = oaddr ? oaddr : t;
            vrun(m_ctx, Opcode::VADD, F32, vop(y, 0, rs), vop(xf, 0, rs), vrow(ebuf(), 0, 0), 1, len, p.cp);
            return y;
        }
        per_row(vals(1), len);
        if (p.affine != RowPlan::Affine::Lanes) {
            const uint32_t y = oaddr ? oaddr : xf;
            apply_rows(Opcode::VMUL, y, t, len);
            return y;
        }
        apply_rows(Opcode::VMUL, xf, t, len);
        const uint32_t g = m_gvec.Get<uint8_t>().address();
        if (!p.beta) {
            const uint32_t y = oaddr ? oaddr : t;
            vrun(m_ctx, Opcode::VMUL, F32, vop(y, 0, rs), vop(xf, 0, rs), vop(g, 0, 0), 1, len, p.cp);
            return y;
        }
        vrun(m_ctx, Opcode::VMUL, F32, vop(t, 0, rs), vop(xf, 0, rs), vop(g, 0, 0), 1, len, p.cp);
        const uint32_t y = oaddr ? oaddr : xf;
        vrun(m_ctx, Opcode::VADD, F32, vop(y, 0, rs), vop(t, 0, rs), vop(g + p.cp * 4, 0, 0), 1, len, p.cp);
        return y;
    }

    KernelContext& m_ctx;
    const RowPlan& m_p;
    TPipe m_pipe;
    TQue<TPosition::VECIN> m_in, m_gstage, m_par;
    TQue<TPosition::VECOUT> m_out, m_stat;
    TBuf<TPosition::VECCALC> m_xf, m_scr, m_vals, m_blocks, m_gvec, m_t, m_e;
    uint32_t m_out_addr = 0;  // the tile's output buffer while its vector work runs (fold_alt)
    uint64_t m_out_bytes = 0;
};

}  // namespace

void row_kernel(isa::IInstrSink& sink, const RowPlan& p) {
    KernelContext ctx(sink);
    RowKernel k(ctx, p);
    k.run();
}

}  // namespace sfumato::ops::norm
