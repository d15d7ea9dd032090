// RmsNorm kernel, tiling and graph-node face (runtime/ops/llm/rms_norm.h).
#include "runtime/ops/llm/rms_norm.h"

#include <algorithm>

#include "runtime/kernel/api.h"
#include "runtime/ops/llm/llm_common.h"
#include "runtime/ops/norm/common.h"
#include "runtime/ops/norm/vec_nest.h"

namespace sfumato::ops::llm {

using isa::DType;
using isa::Opcode;
using namespace sfumato::kernel;
using norm::cdiv;
using norm::up;
using norm::vop;
using norm::vrow;

namespace {

struct RmsLayout {
    uint64_t in, out, f32, g, vals, blocks, e;
};

RmsLayout rms_layout(const RmsPlan& p, uint32_t k) {
    const uint64_t ex = isa::dtype_size(p.xt);
    RmsLayout l{};
    // The weight passes through an input buffer once (no queue of its own:
    // 910-class parts have 4 event ids per pipe pair, which x and the residual
    // double-buffered take).
    l.in = stag(std::max<uint64_t>(uint64_t{k} * p.cp * ex, uint64_t{p.cp} * isa::dtype_size(p.wt)));
    l.out = stag(uint64_t{k} * p.cp * ex);
    l.f32 = stag(uint64_t{k} * p.cp * 4);
    l.g = stag(uint64_t{p.cp} * 4);
    l.vals = up(k, 64) * 4;
    l.blocks = up(k, 8) * 32;
    l.e = stag(uint64_t{k} * 256);
    return l;
}

}  // namespace

uint64_t rms_ub_bytes(const RmsPlan& p, uint32_t k) {
    const RmsLayout l = rms_layout(p, k);
    const uint64_t ins = p.has_res ? 2 : 1, outs = p.has_res_out ? 2 : 1;
    return p.buffers * (ins * l.in + outs * l.out) + 2 * l.f32 + l.g + l.vals + l.blocks + l.e + 1024;
}

bool plan_rms(RmsPlan& p, const DeviceInfo& dev) {
    p.cp = static_cast<uint32_t>(up(std::max<uint64_t>(p.cols, 1), 64));
    p.buffers = 2;
    if (rms_ub_bytes(p, 1) > dev.ub_bytes) p.buffers = 1;
    if (rms_ub_bytes(p, 1) > dev.ub_bytes) return false;
    const norm::WorkSplit w = norm::split_work(p.rows, dev.vector_cores);
    p.per_block = w.per_block;
    p.blocks = w.blocks;
    // Rows per tile: what fits, at least ~4 tiles per block so the pipes overlap.
    const uint64_t cap = std::min<uint64_t>(
        {std::max<uint64_t>(1, p.per_block / 4), std::max<uint64_t>(1, 65536 / p.cp), 255});
    uint32_t k = 1;
    while (k < cap && rms_ub_bytes(p, k + 1) <= dev.ub_bytes) ++k;
    p.k = k;
    return true;
}

namespace {

class RmsKernel {
public:
    RmsKernel(KernelContext& ctx, const RmsPlan& p) : m_ctx(ctx), m_p(p), m_pipe(ctx) {}

    void run() {
        const RmsPlan& p = m_p;
        const uint64_t r0 = uint64_t{m_ctx.block_idx()} * p.per_block;
        if (r0 >= p.rows) return;
        const uint64_t r1 = std::min(p.rows, r0 + p.per_block);
        const RmsLayout l = rms_layout(p, p.k);
        m_pipe.InitBuffer(m_in, p.buffers, u32(l.in));
        if (p.has_res) m_pipe.InitBuffer(m_rin, p.buffers, u32(l.in));
        m_pipe.InitBuffer(m_out, p.buffers, u32(l.out));
        if (p.has_res_out) m_pipe.InitBuffer(m_rout, p.buffers, u32(l.out));
        m_pipe.InitBuffer(m_s, u32(l.f32));
        m_pipe.InitBuffer(m_t, u32(l.f32));
        m_pipe.InitBuffer(m_g, u32(l.g));
        m_pipe.InitBuffer(m_vals, u32(l.vals));
        m_pipe.InitBuffer(m_blocks, u32(l.blocks));
        m_pipe.InitBuffer(m_e, u32(l.e));
        load_weight();
        for (uint64_t r = r0; r < r1;) {
            const uint32_t len = static_cast<uint32_t>(std::min<uint64_t>(p.k, r1 - r));
            m_ctx.scalar(4);  // tile bookkeeping
            tile(r, len);
            r += len;
        }
        m_in.drain();
        m_out.drain();
        if (p.has_res) m_rin.drain();
        if (p.has_res_out) m_rout.drain();
    }

private:
    void load_weight() {
        const RmsPlan& p = m_p;
        LocalTensor<uint8_t> s = m_in.AllocTensor<uint8_t>();
        kernel::detail::copy_in(m_ctx, p.wt, isa::Pos::UB, s.address(), p.w,
                                isa::CopyParams{1, u32(p.cols * isa::dtype_size(p.wt)), 0, 0}, 0);
        m_in.EnQue(s);
        LocalTensor<uint8_t> d = m_in.DeQue<uint8_t>();
        to_f32(m_ctx, m_g.Get<uint8_t>().address(), d.address(), p.wt, p.cols);
        m_in.FreeTensor(d);
    }

    void load_rows(TQue<TPosition::VECIN>& q, uint64_t gm, uint64_t r, uint32_t len) {
        const RmsPlan& p = m_p;
        const uint32_t ex = isa::dtype_size(p.xt);
        LocalTensor<uint8_t> in = q.AllocTensor<uint8_t>();
        kernel::detail::copy_in(m_ctx, p.xt, isa::Pos::UB, in.address(), gm + r * p.cols * ex,
                                isa::CopyParams{len, u32(p.cols * ex), 0, gap_blocks(p.cp, p.cols, ex)}, 0);
        q.EnQue(in);
    }

    void store_rows(TQue<TPosition::VECOUT>& q, uint64_t gm, uint64_t r, uint32_t len) {
        const RmsPlan& p = m_p;
        const uint32_t ex = isa::dtype_size(p.xt);
        LocalTensor<uint8_t> o = q.DeQue<uint8_t>();
        kernel::detail::copy_out(m_ctx, p.xt, gm + r * p.cols * ex, isa::Pos::UB, o.address(),
                                 isa::CopyParams{len, u32(p.cols * ex), gap_blocks(p.cp, p.cols, ex), 0});
        q.FreeTensor(o);
    }

    void tile(uint64_t r, uint32_t len) {
        const RmsPlan& p = m_p;
        load_rows(m_in, p.x, r, len);
        if (p.has_res) load_rows(m_rin, p.res, r, len);
        const uint32_t s = m_s.Get<uint8_t>().address(), t = m_t.Get<uint8_t>().address();
        const uint64_t n = uint64_t{len} * p.cp;
        const int64_t rs = int64_t{p.cp} * 4;
        LocalTensor<uint8_t> x = m_in.DeQue<uint8_t>();
        to_f32(m_ctx, s, x.address(), p.xt, n);
        m_in.FreeTensor(x);
        if (p.has_res) {
            LocalTensor<uint8_t> rr = m_rin.DeQue<uint8_t>();
            to_f32(m_ctx, t, rr.address(), p.xt, n);
            m_rin.FreeTensor(rr);
            norm::vrun(m_ctx, Opcode::VADD, F32, vop(s), vop(s), vop(t), 1, 1, n);
        }
        if (p.has_res_out) {
            LocalTensor<uint8_t> ro = m_rout.AllocTensor<uint8_t>();
            from_f32(m_ctx, ro.address(), s, p.xt, n);
            m_rout.EnQue(ro);
        }
        // Padding lanes take no part in the sum of squares.
        if (p.cols % 64) norm::fill_tail(m_ctx, F32, s + p.cp * 4 - 256, len, rs, u32(p.cols % 64), 0.0);
        norm::vrun(m_ctx, Opcode::VMUL, F32, vop(t), vop(s), vop(s), 1, 1, n);
        const uint32_t v = m_vals.Get<uint8_t>().address();
        const uint64_t units = p.cp / 64;
        // The fold's levels alternate between t and the output buffer (free until the last
        // conversion) when the two lie in different UB bank spans: an in-place level writes
        // every block in the bank it reads (norm::fold_alt).
        LocalTensor<uint8_t> y = m_out.AllocTensor<uint8_t>();
        const int64_t hs = rs / 2;  // a row's first level: half its units
        const uint64_t ybytes = uint64_t{len} * p.cp * isa::dtype_size(p.xt), tbytes = uint64_t{len} * rs;
        norm::Folded sq{t, rs};
        if (units > 1 && ybytes >= uint64_t(hs) * len && norm::spans_apart(y.address(), ybytes, t, tbytes))
            sq = norm::fold_alt(m_ctx, Opcode::VADD, F32, t, y.address(), len, rs, hs, units, 256, 64, t, rs, tbytes,
                                ybytes);
        else if (units > 1)
            norm::fold(m_ctx, Opcode::VADD, F32, t, t, len, rs, rs, units, 256, 64);
        norm::lane_reduce(m_ctx, Opcode::VRED_SUM, F32, sq.addr, v, len, sq.gs, 64);
        norm::vrun(m_ctx, Opcode::VMULS, F32, vop(v), vop(v), {}, 1, 1, len,
                   1.0 / static_cast<double>(p.cols));
        norm::vrun(m_ctx, Opcode::VADDS, F32, vop(v), vop(v), {}, 1, 1, len, p.eps);
        norm::vrun(m_ctx, Opcode::VRSQRT, F32, vop(v), vop(v), {}, 1, 1, len);
        const uint32_t b = m_blocks.Get<uint8_t>().address(), e = m_e.Get<uint8_t>().address();
        norm::brcb(m_ctx, F32, b, v, len);
        norm::expand_blocks(m_ctx, F32, e, b, len);
        norm::vrun(m_ctx, Opcode::VMUL, F32, vop(t, 0, rs), vop(s, 0, rs), vrow(e, 0, 256), 1, len, p.cp);
        // The weight's product goes back into s (no longer read): an in-place product would
        // write every block in the bank it reads (a UB read-write conflict each repeat).
        norm::vrun(m_ctx, Opcode::VMUL, F32, vop(s, 0, rs), vop(t, 0, rs),
                   vop(m_g.Get<uint8_t>().address(), 0, 0), 1, len, p.cp);
        from_f32(m_ctx, y.address(), s, p.xt, n);
        m_out.EnQue(y);
        store_rows(m_out, p.y, r, len);
        if (p.has_res_out) store_rows(m_rout, p.res_out, r, len);
    }

    KernelContext& m_ctx;
    const RmsPlan& m_p;
    TPipe m_pipe;
    TQue<TPosition::VECIN> m_in, m_rin;
    TQue<TPosition::VECOUT> m_out, m_rout;
    TBuf<TPosition::VECCALC> m_s, m_t, m_g, m_vals, m_blocks, m_e;
};

}  // namespace

void rms_norm_kernel(isa::IInstrSink& sink, const RmsPlan& p) {
    KernelContext ctx(sink);
    RmsKernel k(ctx, p);
    k.run();
}

namespace {

class RmsNormOp : public INodeOp {
public:
    RmsNormOp(const NodeDesc& n, const DeviceInfo& dev) : m_node(n), m_dev(dev) {
        RmsPlan& p = m_plan;
        p.xt = act_input(n, 0, "x");
        const TensorRef& x = n.inputs[0];
        if (x.shape.empty()) throw UnsupportedError(n, "x must have rank >= 1");
        p.cols = static_cast<uint64_t>(x.shape.back());
        p.rows = p.cols ? x.numel() / p.cols : 0;
        p.wt = norm::float_input(n, 1, "weight");
        if (n.inputs[1].numel() != p.cols)
            throw UnsupportedError(n, "weight " + ref::shape_str(n.inputs[1].shape) +
                                          " does not match H = " + std::to_string(p.cols));
        p.has_res = n.has_input(2);
        if (p.has_res) {
            if (act_input(n, 2, "residual") != p.xt || n.inputs[2].shape != x.shape)
                throw UnsupportedError(n, "residual must have x's shape and dtype");
        }
        p.eps = n.attrs.get_float("epsilon", 1e-6);
        if (!(p.eps >= 0)) throw UnsupportedError(n, "attribute 'epsilon' must be >= 0");
        m_outs.push_back(norm::tensor_like(x, x.shape));
        if (p.has_res && n.num_outputs != 1) m_outs.push_back(norm::tensor_like(x, x.shape));
        p.has_res_out = m_outs.size() > 1;
        if (x.numel() != 0 && !plan_rms(p, dev))
            throw UnsupportedError(n, "a row of " + std::to_string(p.cols) + " elements does not fit in UB");
        m_form = std::string(p.has_res ? "add + " : "") + "rows: " + std::to_string(p.k) + " per tile over " +
                 std::to_string(p.blocks) + " cores";
    }

    std::vector<TensorRef> outputs() const override { return m_outs; }
    std::string describe() const override { return m_form; }

    std::vector<KernelDesc> launches(const std::vector<TensorRef>& in, const std::vector<TensorRef>& out,
                                     uint64_t) const override {
        const uint64_t n = m_outs[0].numel();
        if (n == 0) return {};
        RmsPlan p = m_plan;
        p.x = in[0].addr, p.w = in[1].addr, p.y = out[0].addr;
        p.res = p.has_res ? in[2].addr : 0;
        p.has_res_out = out.size() > 1 && out[1].present;
        p.res_out = p.has_res_out ? out[1].addr : 0;
        const uint64_t es = isa::dtype_size(p.xt);
        const uint64_t bytes =
            (2 + (p.has_res ? 1 : 0) + (p.has_res_out ? 1 : 0)) * n * es + p.cols * isa::dtype_size(p.wt);
        // fp32 passes: convert, (add), square, fold, scale, weight, convert back.
        const double passes = 6 + (p.has_res ? 2 : 0) + (p.has_res_out ? 1 : 0);
        return {norm::vector_launch(
            m_node.name, m_node.op_type, p.blocks, [p](isa::IInstrSink& s) { rms_norm_kernel(s, p); },
            4.0 * static_cast<double>(n), bytes, passes, n, m_dev)};
    }

private:
    NodeDesc m_node;
    DeviceInfo m_dev;
    RmsPlan m_plan;
    std::vector<TensorRef> m_outs;
    std::string m_form;
};

std::unique_ptr<INodeOp> make_rms_norm(const NodeDesc& n, const DeviceInfo& d) {
    return std::make_unique<RmsNormOp>(n, d);
}

}  // namespace

SFUMATO_REGISTER_NODE_OP(rms_norm, "RmsNorm", make_rms_norm);

}  // namespace sfumato::ops::llm
