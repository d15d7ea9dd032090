// SwiGlu kernel, tiling and graph-node face (runtime/ops/llm/swiglu.h).
#include "runtime/ops/llm/swiglu.h"

#include <algorithm>

#include "runtime/kernel/api.h"
#include "runtime/ops/llm/llm_common.h"
#include "runtime/ops/norm/common.h"
#include "runtime/ops/norm/ub_place.h"
#include "runtime/ops/norm/vec_nest.h"

namespace sfumato::ops::llm {

using isa::Opcode;
using namespace sfumato::kernel;
using norm::cdiv;
using norm::up;
using norm::vop;

uint64_t swiglu_ub_bytes(const SwiGluPlan& p, uint32_t k, uint32_t cw) {
    const uint64_t io = stag(uint64_t{k} * cw * isa::dtype_size(p.t)), f = stag(uint64_t{k} * cw * 4);
    return 2 * 3 * io + 3 * f + 1024;  // gate, up and out queues; three fp32 buffers (out of place)
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
        if (!place()) {
            m_pipe.InitBuffer(m_g, 2, io);
            m_pipe.InitBuffer(m_u, 2, io);
            m_pipe.InitBuffer(m_out, 2, io);
            m_pipe.InitBuffer(m_gf, f);
            m_pipe.InitBuffer(m_uf, f);
            m_pipe.InitBuffer(m_pf, f);
        }
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
    // The buffers placed for the 220x UB bank rules (runtime/ops/norm/ub_place.h): the three
    // fp32 buffers, each written from the others, in three different bank spans; the gate
    // and up buffers away from the fp32 buffer they convert into, the output away from the
    // one it converts from; gf and uf in different halves of the bank groups (read together).
    // false when they do not fit whole inside spans (then one after the other).
    bool place() {
        const SwiGluPlan& p = m_p;
        const uint64_t ub = m_ctx.sink().buffer_size(isa::Pos::UB);
        const uint64_t io = up(uint64_t{p.k} * p.cw * isa::dtype_size(p.t), 32), f = uint64_t{p.k} * p.cw * 4;
        enum { G0, G1, U0, U1, O0, O1, Gf, Uf, Pf, N };
        std::vector<norm::UbItem> it(N, norm::UbItem{io, 0});
        it[Gf] = {f, 0}, it[Uf] = {f, 256}, it[Pf] = {f, 0};
        const uint32_t w = p.cw / 64;  // repeats per row
        const std::vector<norm::UbApart> apart = {{Gf, Uf, 2 * w}, {Gf, Pf, 2 * w}, {Uf, Pf, w}, {G0, Gf, w},
                                                  {G1, Gf, w},     {U0, Uf, w},     {U1, Uf, w}, {O0, Gf, w},
                                                  {O1, Gf, w}};
        const std::vector<uint64_t> at = norm::place_apart(it, apart, ub, norm::kBankSpan);
        if (at.empty()) return false;
        const uint32_t base = m_pipe.Reserve(TPosition::VECCALC, u32(ub), "swiglu buffers");
        auto a = [&](int i) { return u32(base + at[i]); };
        m_pipe.InitBufferAt(m_g, 2, u32(io), a(G0));
        m_pipe.SetBufferAddress(m_g, 1, a(G1));
        m_pipe.InitBufferAt(m_u, 2, u32(io), a(U0));
        m_pipe.SetBufferAddress(m_u, 1, a(U1));
        m_pipe.InitBufferAt(m_out, 2, u32(io), a(O0));
        m_pipe.SetBufferAddress(m_out, 1, a(O1));
        m_pipe.InitBufferAt(m_gf, u32(f), a(Gf));
        m_pipe.InitBufferAt(m_uf, u32(f), a(Uf));
        m_pipe.InitBufferAt(m_pf, u32(f), a(Pf));
        return true;
    }

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
        // silu tends to. Out of place, ping-ponging over three buffers (an in-place
        // instruction writes every block in the bank it reads: a conflict each repeat).
        const uint32_t pf = m_pf.Get<uint8_t>().address();
        norm::vrun(m_ctx, Opcode::VMUL, F32, vop(pf), vop(uf), vop(gf), 1, 1, n);        // p = u g
        norm::vrun(m_ctx, Opcode::VMULS, F32, vop(uf), vop(gf), {}, 1, 1, n, -1.0);      // -g
        norm::vrun(m_ctx, Opcode::VEXP, F32, vop(gf), vop(uf), {}, 1, 1, n);             // exp(-g)
        norm::vrun(m_ctx, Opcode::VADDS, F32, vop(uf), vop(gf), {}, 1, 1, n, 1.0);       // 1 + exp(-g)
        norm::vrun(m_ctx, Opcode::VDIV, F32, vop(gf), vop(pf), vop(uf), 1, 1, n);        // p / (1 + exp(-g))
        LocalTensor<uint8_t> o = m_out.AllocTensor<uint8_t>();
        from_f32(m_ctx, o.address(), gf, p.t, n);
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
    TBuf<TPosition::VECCALC> m_gf, m_uf, m_pf;
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
