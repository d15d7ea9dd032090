// SwiGlu kernel, tiling and graph-node face (runtime/ops/llm/swiglu.h).
#include "runtime/ops/llm/swiglu.h"

#include <algorithm>

#include "runtime/kernel/api.h"
#include "runtime/ops/llm/llm_common.h"
#include "runtime/ops/norm/common.h"
#include "runtime/ops/norm/vec_nest.h"

namespace sfumato::ops::llm {

using isa::Opcode;
using namespace sfumato::kernel;
using norm::cdiv;
using norm::up;
using norm::vop;

uint64_t swiglu_ub_bytes(const SwiGluPlan& p, uint32_t k, uint32_t cw) {
    const uint64_t io = stag(uint64_t{k} * cw * isa::dtype_size(p.t)), f = stag(uint64_t{k} * cw * 4);
    return 2 * 3 * io + 2 * f + 1024;
}

bool plan_swiglu(SwiGluPlan& p, const DeviceInfo& dev) {
    const uint64_t full = up(std::max<uint64_t>(p.inter, 1), 64);
    uint64_t cw = std::min<uint64_t>(full, 8192);
    while (cw > 64 && swiglu_ub_bytes(p, 1, u32(cw)) > dev.ub_bytes) cw -= 64;
    if (swiglu_ub_bytes(p, 1, u32(cw)) > dev.ub_bytes) return false;
    p.cw = u32(cw);
    p.nch = cdiv(p.inter, cw);
    const norm::WorkSplit w = norm::split_work(p.rows * p.nch, dev.vector_cores);
    p.per_block = w.per_block;
    p.blocks = w.blocks;
    uint32_t k = 1;
    if (p.nch == 1) {
        const uint64_t cap = std::min<uint64_t>(
            {std::max<uint64_t>(1, p.per_block / 4), std::max<uint64_t>(1, 32768 / cw), 255});
        while (k < cap && swiglu_ub_bytes(p, k + 1, p.cw) <= dev.ub_bytes) ++k;
    }
    p.k = k;
    return true;
}

namespace {

class SwiGluKernel {
public:
    SwiGluKernel(KernelContext& ctx, const SwiGluPlan& p) : m_ctx(ctx), m_p(p), m_pipe(ctx) {}

    void run() {
        const SwiGluPlan& p = m_p;
        const uint64_t u0 = uint64_t{m_ctx.block_idx()} * p.per_block, total = p.rows * p.nch;
        if (u0 >= total) return;
        const uint64_t u1 = std::min(total, u0 + p.per_block);
        const uint32_t io = u32(stag(uint64_t{p.k} * p.cw * isa::dtype_size(p.t)));
        const uint32_t f = u32(stag(uint64_t{p.k} * p.cw * 4));
        m_pipe.InitBuffer(m_g, 2, io);
        m_pipe.InitBuffer(m_u, 2, io);
        m_pipe.InitBuffer(m_out, 2, io);
        m_pipe.InitBuffer(m_gf, f);
        m_pipe.InitBuffer(m_uf, f);
        for (uint64_t u = u0; u < u1;) {
            const uint64_t r = u / p.nch, c = u % p.nch;
            const uint32_t len = p.nch == 1 ? u32(std::min<uint64_t>(p.k, u1 - u)) : 1;
            m_ctx.scalar(4);
            tile(r, c, len);
            u += len;
        }
        m_g.drain();
        m_u.drain();
        m_out.drain();
    }

private:
    void tile(uint64_t r, uint64_t c, uint32_t len) {
        const SwiGluPlan& p = m_p;
        const uint32_t es = isa::dtype_size(p.t);
        const uint64_t c0 = c * p.cw, cv = std::min<uint64_t>(p.cw, p.inter - c0);
        const isa::CopyParams in{len, u32(cv * es), u32((2 * p.inter - cv) * es), gap_blocks(p.cw, cv, es)};
        const uint64_t row = p.x + (r * 2 * p.inter + c0) * es;
        LocalTensor<uint8_t> g = m_g.AllocTensor<uint8_t>();
        kernel::detail::copy_in(m_ctx, p.t, isa::Pos::UB, g.address(), row, in, 0);
        m_g.EnQue(g);
        LocalTensor<uint8_t> uu = m_u.AllocTensor<uint8_t>();
        kernel::detail::copy_in(m_ctx, p.t, isa::Pos::UB, uu.address(), row + p.inter * es, in, 0);
        m_u.EnQue(uu);
        const uint64_t n = uint64_t{len} * p.cw;
        const uint32_t gf = m_gf.Get<uint8_t>().address(), uf = m_uf.Get<uint8_t>().address();
        LocalTensor<uint8_t> gd = m_g.DeQue<uint8_t>();
        to_f32(m_ctx, gf, gd.address(), p.t, n);
        m_g.FreeTensor(gd);
        LocalTensor<uint8_t> ud = m_u.DeQue<uint8_t>();
        to_f32(m_ctx, uf, ud.address(), p.t, n);
        m_u.FreeTensor(ud);
        // silu(g) * u = g u / (1 + exp(-g)): exp(-g) overflowing to inf gives 0, as
        // silu tends to.
        norm::vrun(m_ctx, Opcode::VMUL, F32, vop(uf), vop(uf), vop(gf), 1, 1, n);
        norm::vrun(m_ctx, Opcode::VMULS, F32, vop(gf), vop(gf), {}, 1, 1, n, -1.0);
        norm::vrun(m_ctx, Opcode::VEXP, F32, vop(gf), vop(gf), {}, 1, 1, n);
        norm::vrun(m_ctx, Opcode::VADDS, F32, vop(gf), vop(gf), {}, 1, 1, n, 1.0);
        norm::vrun(m_ctx, Opcode::VDIV, F32, vop(uf), vop(uf), vop(gf), 1, 1, n);
        LocalTensor<uint8_t> o = m_out.AllocTensor<uint8_t>();
        from_f32(m_ctx, o.address(), uf, p.t, n);
        m_out.EnQue(o);
        LocalTensor<uint8_t> od = m_out.DeQue<uint8_t>();
        kernel::detail::copy_out(
            m_ctx, p.t, p.y + (r * p.inter + c0) * es, isa::Pos::UB, od.address(),
            isa::CopyParams{len, u32(cv * es), gap_blocks(p.cw, cv, es), u32((p.inter - cv) * es)});
        m_out.FreeTensor(od);
    }

    KernelContext& m_ctx;
    const SwiGluPlan& m_p;
    TPipe m_pipe;
    TQue<TPosition::VECIN> m_g, m_u;
    TQue<TPosition::VECOUT> m_out;
    TBuf<TPosition::VECCALC> m_gf, m_uf;
};

class SwiGluOp : public INodeOp {
public:
    SwiGluOp(const NodeDesc& n, const DeviceInfo& dev) : m_node(n), m_dev(dev) {
        SwiGluPlan& p = m_plan;
        p.t = act_input(n, 0, "gate_up");
        const TensorRef& x = n.inputs[0];
        if (x.shape.empty() || x.shape.back() % 2 != 0)
            throw UnsupportedError(
                n, "gate_up " + ref::shape_str(x.shape) + ": the last dimension must be even (gate, up)");
        p.inter = static_cast<uint64_t>(x.shape.back() / 2);
        p.rows = p.inter ? x.numel() / (2 * p.inter) : 0;
        std::vector<int64_t> os = x.shape;
        os.back() /= 2;
        m_out = norm::tensor_like(x, os);
        if (m_out.numel() && !plan_swiglu(p, dev)) throw UnsupportedError(n, "not even 64 columns fit in UB");
        m_form = p.nch == 1 ? std::to_string(p.k) + " rows per tile"
                            : std::to_string(p.nch) + " chunks of " + std::to_string(p.cw) + " per row";
    }
    std::vector<TensorRef> outputs() const override { return {m_out}; }
    std::string describe() const override { return m_form; }
    std::vector<KernelDesc> launches(const std::vector<TensorRef>& in, const std::vector<TensorRef>& out,
                                     uint64_t) const override {
        const uint64_t n = m_out.numel();
        if (n == 0) return {};
        SwiGluPlan p = m_plan;
        p.x = in[0].addr, p.y = out[0].addr;
        const uint64_t bytes = 3 * n * isa::dtype_size(p.t);
        // fp32 passes per output element: 2 converts, mul, neg, exp, add, div,
        // convert back.
        return {norm::vector_launch(
            m_node.name, m_node.op_type, p.blocks, [p](isa::IInstrSink& s) { swiglu_kernel(s, p); },
            5.0 * static_cast<double>(n), bytes, 8, n, m_dev)};
    }

private:
    NodeDesc m_node;
    DeviceInfo m_dev;
    SwiGluPlan m_plan;
    TensorRef m_out;
    std::string m_form;
};

std::unique_ptr<INodeOp> make_swiglu(const NodeDesc& n, const DeviceInfo& d) {
    return std::make_unique<SwiGluOp>(n, d);
}

}  // namespace

void swiglu_kernel(isa::IInstrSink& sink, const SwiGluPlan& p) {
    KernelContext ctx(sink);
    SwiGluKernel k(ctx, p);
    k.run();
}

SFUMATO_REGISTER_NODE_OP(swiglu, "SwiGlu", make_swiglu);

}  // namespace sfumato::ops::llm
