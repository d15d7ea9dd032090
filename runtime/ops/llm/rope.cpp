// Rope kernel, tiling and graph-node face (runtime/ops/llm/rope.h).
#include "runtime/ops/llm/rope.h"

#include <algorithm>

#include "runtime/kernel/api.h"
#include "runtime/ops/ew/kernel.h"
#include "runtime/ops/llm/llm_common.h"
#include "runtime/ops/norm/common.h"
#include "runtime/ops/norm/ub_place.h"
#include "runtime/ops/norm/vec_nest.h"

namespace sfumato::ops::llm {

using isa::DType;
using isa::Opcode;
using isa::Pos;
using namespace sfumato::kernel;
using norm::vop;

namespace {

constexpr uint64_t kEven = 0x5555555555555555ull, kOdd = 0xaaaaaaaaaaaaaaaaull;

struct RopeLayout {
    uint64_t io, cs, f, r, off;
};
RopeLayout rope_layout(const RopePlan& p, uint32_t k) {
    const uint64_t row = p.N * p.D;
    return {stag(k * row * isa::dtype_size(p.xt)), stag(k * p.R * isa::dtype_size(p.ct)), stag(k * row * 4),
            stag(k * p.R * 4), stag(k * row * 4)};
}

// op (VADDS or VDUP) on the lanes of `pattern` among the first n 32-bit lanes
// at addr.
void masked(KernelContext& ctx, Opcode op, DType dt, uint32_t addr, uint64_t n, uint64_t pattern,
            double scalar) {
    for (uint64_t l = 0; l < n; l += 64) {
        const uint64_t valid = n - l >= 64 ? ~0ull : (1ull << (n - l)) - 1;
        isa::Instr in = isa::make_instr(op);
        in.dtype = dt;
        in.dst = {addr + l * 4, Pos::UB};
        if (op != Opcode::VDUP) in.src0 = in.dst;
        in.vec.mask_lo = pattern & valid;
        in.vec.mask_hi = 0;
        in.scalar = scalar;
        ctx.issue(in);
    }
}

// Repeats the first `width` int32 lanes at a over `rows` rows, row r adding r *
// step.
void replicate(KernelContext& ctx, uint32_t a, uint64_t width, uint64_t rows, int64_t step) {
    for (uint64_t have = 1; have < rows; have *= 2) {
        const uint64_t c = std::min(have, rows - have);
        ew::vloop(ctx, Opcode::VADDS, I32, I32, ew::vo(u32(a + have * width * 4)), ew::vo(a), {}, {},
                  c * width, static_cast<double>(static_cast<int64_t>(have) * step));
    }
}

void vgather(KernelContext& ctx, uint32_t dst, uint32_t src, uint32_t offs, uint64_t n) {
    isa::VecParams v;
    v.gather_span = u32(n * 4);
    kernel::detail::vec_count(ctx, Opcode::VGATHER, F32, F32,
                              {{dst, Pos::UB}, {src, Pos::UB}, {offs, Pos::UB}, {}}, n, v, 0);
}

}  // namespace

uint64_t rope_ub_bytes(const RopePlan& p, uint32_t k) {
    const RopeLayout l = rope_layout(p, k);
    return 4 * l.io + 2 * l.cs + 4 * l.f + 5 * l.r + stag(p.R * 4) + 1024;  // xf, xs, xc, offsets
}

bool plan_rope(RopePlan& p, const DeviceInfo& dev) {
    if (rope_ub_bytes(p, 1) > dev.ub_bytes) return false;
    const norm::WorkSplit w = norm::split_work(p.T, dev.vector_cores);
    p.per_block = w.per_block;
    p.blocks = w.blocks;
    const uint64_t cap = std::min<uint64_t>(std::max<uint64_t>(1, p.per_block / 4), 64);
    uint32_t k = 1;
    while (k < cap && rope_ub_bytes(p, k + 1) <= dev.ub_bytes) ++k;
    p.k = k;
    return true;
}

namespace {

class RopeKernel {
public:
    RopeKernel(KernelContext& ctx, const RopePlan& p) : m_ctx(ctx), m_p(p), m_pipe(ctx) {}

    void run() {
        const RopePlan& p = m_p;
        const uint64_t t0 = uint64_t{m_ctx.block_idx()} * p.per_block;
        if (t0 >= p.T) return;
        const uint64_t t1 = std::min(p.T, t0 + p.per_block);
        const RopeLayout l = rope_layout(p, p.k);
        if (!place()) {
            m_pipe.InitBuffer(m_qx, 2, u32(l.io));
            m_pipe.InitBuffer(m_qo, 2, u32(l.io));
            m_pipe.InitBuffer(m_qcs, 2, u32(l.cs));
            m_pipe.InitBuffer(m_xf, u32(l.f));
            m_pipe.InitBuffer(m_xs, u32(l.f));
            m_pipe.InitBuffer(m_xc, u32(l.f));
            m_pipe.InitBuffer(m_poff, u32(l.off));
            m_pipe.InitBuffer(m_csf, u32(l.r));
            m_pipe.InitBuffer(m_cx, u32(l.r));
            m_pipe.InitBuffer(m_sx, u32(l.r));
            m_pipe.InitBuffer(m_coff, u32(l.r));
            m_pipe.InitBuffer(m_soff, u32(l.r));
            m_pipe.InitBuffer(m_sign, u32(stag(p.R * 4)));
        }
        m_positions.SetGlobalBuffer(m_ctx, p.pos, p.T);
        build_offsets();
        for (uint64_t t = t0; t < t1;) {
            const uint32_t len = u32(std::min<uint64_t>(p.k, t1 - t));
            m_ctx.scalar(4);
            tile(t, len);
            t += len;
        }
        m_qx.drain();
        m_qcs.drain();
        m_qo.drain();
    }

private:
    uint32_t a(TBuf<TPosition::VECCALC>& b) { return b.Get<uint8_t>().address(); }

    // The buffers placed for the 220x UB bank rules (runtime/ops/norm/ub_place.h): the three
    // fp32 row buffers (xf, the gathered partner xs, the sine product xc), each written from
    // the others, in three bank spans; the input and output queues away from xf; the cos and
    // sin rows (read beside the row buffers, repeat stride 0 over the heads) in the other half
    // of the groups than xf and xs, and xc in the other half than xs (read together) and away
    // from the sines it is written from. false when they do not fit whole inside spans.
    bool place() {
        const RopePlan& p = m_p;
        const RopeLayout l = rope_layout(p, p.k);
        const uint64_t ub = m_ctx.sink().buffer_size(Pos::UB), row = p.N * p.D;
        const uint64_t io = up32(uint64_t{p.k} * row * isa::dtype_size(p.xt)), f = uint64_t{p.k} * row * 4;
        const uint64_t cs = up32(uint64_t{p.k} * p.R * isa::dtype_size(p.ct)), r = up32(uint64_t{p.k} * p.R * 4);
        enum { X0, X1, O0, O1, C0, C1, Xf, Xs, Xc, Off, Csf, Cx, Sx, Coff, Soff, Sign, N };
        std::vector<norm::UbItem> it(N, norm::UbItem{r, 0});
        it[X0] = it[X1] = it[O0] = it[O1] = {io, 0};
        it[C0] = it[C1] = {cs, 0};
        it[Xf] = it[Xs] = {f, 0};
        it[Xc] = {f, 256};
        it[Off] = {up32(l.off - 256), 0};
        it[Cx] = it[Sx] = {r, 256};
        it[Sign] = {up32(p.R * 4), 0};
        const uint32_t w = u32(std::max<uint64_t>(1, row / 64));  // repeats per row
        const std::vector<norm::UbApart> apart = {{Xf, Xs, 2 * w}, {Xf, Xc, w}, {Xs, Xc, 2 * w}, {X0, Xf, w},
                                                  {X1, Xf, w},     {O0, Xf, w}, {O1, Xf, w},     {Xc, Sx, w}};
        const std::vector<uint64_t> at = norm::place_apart(it, apart, ub, norm::kBankSpan);
        if (at.empty()) return false;
        const uint32_t base = m_pipe.Reserve(TPosition::VECCALC, u32(ub), "rope buffers");
        auto ad = [&](int i) { return u32(base + at[i]); };
        m_pipe.InitBufferAt(m_qx, 2, u32(io), ad(X0));
        m_pipe.SetBufferAddress(m_qx, 1, ad(X1));
        m_pipe.InitBufferAt(m_qo, 2, u32(io), ad(O0));
        m_pipe.SetBufferAddress(m_qo, 1, ad(O1));
        m_pipe.InitBufferAt(m_qcs, 2, u32(cs), ad(C0));
        m_pipe.SetBufferAddress(m_qcs, 1, ad(C1));
        m_pipe.InitBufferAt(m_xf, u32(f), ad(Xf));
        m_pipe.InitBufferAt(m_xs, u32(f), ad(Xs));
        m_pipe.InitBufferAt(m_xc, u32(f), ad(Xc));
        m_pipe.InitBufferAt(m_poff, u32(it[Off].bytes), ad(Off));
        m_pipe.InitBufferAt(m_csf, u32(r), ad(Csf));
        m_pipe.InitBufferAt(m_cx, u32(r), ad(Cx));
        m_pipe.InitBufferAt(m_sx, u32(r), ad(Sx));
        m_pipe.InitBufferAt(m_coff, u32(r), ad(Coff));
        m_pipe.InitBufferAt(m_soff, u32(r), ad(Soff));
        m_pipe.InitBufferAt(m_sign, u32(it[Sign].bytes), ad(Sign));
        return true;
    }
    static uint64_t up32(uint64_t b) { return (b + 31) / 32 * 32; }

    void build_offsets() {
        const RopePlan& p = m_p;
        const uint64_t h2 = p.R / 2;
        const uint32_t po = a(m_poff), co = a(m_coff), so = a(m_soff), sg = a(m_sign);
        ew::iota_i32(m_ctx, po, u32(p.D), 4);
        if (p.interleaved) {
            masked(m_ctx, Opcode::VADDS, I32, po, p.R, kEven, 4);
            masked(m_ctx, Opcode::VADDS, I32, po, p.R, kOdd, -4);
            ew::iota_i32(m_ctx, co, u32(p.R), 2);
            masked(m_ctx, Opcode::VADDS, I32, co, p.R, kOdd, -2);
            norm::vrun(m_ctx, Opcode::VDUP, F32, vop(sg), {}, {}, 1, 1, p.R, 1.0);
            masked(m_ctx, Opcode::VDUP, F32, sg, p.R, kEven, -1.0);
        } else {
            ew::vloop(m_ctx, Opcode::VADDS, I32, I32, ew::vo(po), ew::vo(po), {}, {}, h2,
                      static_cast<double>(h2 * 4));
            ew::vloop(m_ctx, Opcode::VADDS, I32, I32, ew::vo(u32(po + h2 * 4)), ew::vo(u32(po + h2 * 4)), {},
                      {}, h2, -static_cast<double>(h2 * 4));
            ew::iota_i32(m_ctx, co, u32(h2), 4);
            ew::vloop(m_ctx, Opcode::VADDS, I32, I32, ew::vo(u32(co + h2 * 4)), ew::vo(co), {}, {}, h2, 0);
            norm::vrun(m_ctx, Opcode::VDUP, F32, vop(sg), {}, {}, 1, 1, h2, -1.0);
            norm::vrun(m_ctx, Opcode::VDUP, F32, vop(u32(sg + h2 * 4)), {}, {}, 1, 1, h2, 1.0);
        }
        replicate(m_ctx, po, p.D, uint64_t{p.k} * p.N, static_cast<int64_t>(p.D * 4));
        replicate(m_ctx, co, p.R, p.k, static_cast<int64_t>(p.R * 4));
        ew::vloop(m_ctx, Opcode::VADDS, I32, I32, ew::vo(so), ew::vo(co), {}, {}, uint64_t{p.k} * p.R,
                  static_cast<double>(h2 * 4));
    }

    void load(uint64_t t, uint32_t len) {
        const RopePlan& p = m_p;
        const uint64_t row = p.N * p.D, ex = isa::dtype_size(p.xt), ec = isa::dtype_size(p.ct);
        LocalTensor<uint8_t> x = m_qx.AllocTensor<uint8_t>();
        kernel::detail::copy_in(m_ctx, p.xt, Pos::UB, x.address(), p.x + t * row * ex,
                                isa::CopyParams{1, u32(len * row * ex), 0, 0}, 0);
        m_qx.EnQue(x);
        LocalTensor<uint8_t> cs = m_qcs.AllocTensor<uint8_t>();
        for (uint32_t j = 0; j < len; ++j) {
            int64_t pos = m_positions.GetValue(t + j);
            m_ctx.scalar(2);  // clamp into the table
            if (!p.host_pos.empty()) pos = p.host_pos[t + j];
            pos = std::clamp<int64_t>(pos, 0, static_cast<int64_t>(p.P) - 1);
            kernel::detail::copy_in(m_ctx, p.ct, Pos::UB, u32(cs.address() + j * p.R * ec),
                                    p.cs + static_cast<uint64_t>(pos) * p.R * ec,
                                    isa::CopyParams{1, u32(p.R * ec), 0, 0}, 0);
        }
        m_qcs.EnQue(cs);
    }

    void tile(uint64_t t, uint32_t len) {
        const RopePlan& p = m_p;
        const uint64_t row = p.N * p.D, ex = isa::dtype_size(p.xt);
        load(t, len);
        const uint32_t xf = a(m_xf), xs = a(m_xs), csf = a(m_csf), cx = a(m_cx), sx = a(m_sx);
        LocalTensor<uint8_t> x = m_qx.DeQue<uint8_t>();
        to_f32(m_ctx, xf, x.address(), p.xt, len * row);
        m_qx.FreeTensor(x);
        LocalTensor<uint8_t> cs = m_qcs.DeQue<uint8_t>();
        to_f32(m_ctx, csf, cs.address(), p.ct, len * p.R);
        m_qcs.FreeTensor(cs);
        vgather(m_ctx, cx, csf, a(m_coff), len * p.R);
        vgather(m_ctx, sx, csf, a(m_soff), len * p.R);
        const int64_t rr = static_cast<int64_t>(p.R * 4), rs = static_cast<int64_t>(row * 4),
                      hs = static_cast<int64_t>(p.D * 4);
        norm::vrun(m_ctx, Opcode::VMUL, F32, vop(sx, 0, rr), vop(sx, 0, rr), vop(a(m_sign), 0, 0), 1, len,
                   p.R);
        vgather(m_ctx, xs, xf, a(m_poff), len * row);
        // Out of place over three buffers (an in-place product writes every block in the bank
        // it reads): xc = xs sin, xs = x cos, x = xs + xc (the rotated lanes; the rest keep x).
        const uint32_t xc = a(m_xc);
        norm::vrun(m_ctx, Opcode::VMUL, F32, vop(xc, rs, hs), vop(xs, rs, hs), vop(sx, rr, 0), len, p.N, p.R);
        norm::vrun(m_ctx, Opcode::VMUL, F32, vop(xs, rs, hs), vop(xf, rs, hs), vop(cx, rr, 0), len, p.N, p.R);
        norm::vrun(m_ctx, Opcode::VADD, F32, vop(xf, rs, hs), vop(xs, rs, hs), vop(xc, rs, hs), len, p.N,
                   p.R);
        LocalTensor<uint8_t> o = m_qo.AllocTensor<uint8_t>();
        from_f32(m_ctx, o.address(), xf, p.xt, len * row);
        m_qo.EnQue(o);
        LocalTensor<uint8_t> od = m_qo.DeQue<uint8_t>();
        kernel::detail::copy_out(m_ctx, p.xt, p.y + t * row * ex, Pos::UB, od.address(),
                                 isa::CopyParams{1, u32(len * row * ex), 0, 0});
        m_qo.FreeTensor(od);
    }

    KernelContext& m_ctx;
    const RopePlan& m_p;
    TPipe m_pipe;
    TQue<TPosition::VECIN> m_qx, m_qcs;
    TQue<TPosition::VECOUT> m_qo;
    TBuf<TPosition::VECCALC> m_xf, m_xs, m_xc, m_poff, m_csf, m_cx, m_sx, m_coff, m_soff, m_sign;
    GlobalTensor<int32_t> m_positions;
};

class RopeOp : public INodeOp {
public:
    RopeOp(const NodeDesc& n, const DeviceInfo& dev) : m_node(n), m_dev(dev) {
        RopePlan& p = m_plan;
        p.xt = act_input(n, 0, "x");
        const TensorRef& x = n.inputs[0];
        if (x.shape.size() != 3)
            throw UnsupportedError(n, "x must be [T, N, D], got " + ref::shape_str(x.shape));
        p.T = static_cast<uint64_t>(x.shape[0]), p.N = static_cast<uint64_t>(x.shape[1]),
        p.D = static_cast<uint64_t>(x.shape[2]);
        const TensorRef& pos = index_input(n, 1, "positions");
        if (pos.numel() != p.T)
            throw UnsupportedError(n, "positions " + ref::shape_str(pos.shape) +
                                          " must have T = " + std::to_string(p.T) + " entries");
        p.ct = act_input(n, 2, "cos_sin");
        const TensorRef& cs = n.inputs[2];
        if (cs.shape.size() != 2)
            throw UnsupportedError(n, "cos_sin must be [P, R], got " + ref::shape_str(cs.shape));
        p.P = static_cast<uint64_t>(cs.shape[0]), p.R = static_cast<uint64_t>(cs.shape[1]);
        const int64_t rd = n.attrs.get_int("rotary_dim", static_cast<int64_t>(p.R));
        if (rd != static_cast<int64_t>(p.R))
            throw UnsupportedError(n, "attribute 'rotary_dim' = " + std::to_string(rd) +
                                          " differs from cos_sin's width " + std::to_string(p.R));
        if (p.R == 0 || p.R > p.D || p.R % 16 || p.D % 16)
            throw UnsupportedError(n, "rotary_dim " + std::to_string(p.R) + " and head_dim " +
                                          std::to_string(p.D) +
                                          " must be multiples of 16 with rotary_dim <= head_dim");
        if (p.P == 0) throw UnsupportedError(n, "cos_sin has no rows");
        const std::string style = n.attrs.get_string("style", "half");
        if (style != "half" && style != "interleaved")
            throw UnsupportedError(n, "attribute 'style' = '" + style + "' (valid: half, interleaved)");
        p.interleaved = style == "interleaved";
        if (n.attrs.has("host_positions")) {
            p.host_pos = n.attrs.get_ints("host_positions", {});
            if (p.host_pos.size() != p.T)
                throw UnsupportedError(n, "attribute 'host_positions' has " +
                                              std::to_string(p.host_pos.size()) + " entries for " +
                                              std::to_string(p.T) + " tokens");
            for (size_t i = 0; i < p.host_pos.size(); ++i)
                if (p.host_pos[i] < 0 || p.host_pos[i] >= static_cast<int64_t>(p.P))
                    throw UnsupportedError(n, "attribute 'host_positions': token " + std::to_string(i) +
                                                  " has position " + std::to_string(p.host_pos[i]) +
                                                  " outside the table's " + std::to_string(p.P) + " rows");
        }
        m_out = norm::tensor_like(x, x.shape);
        if (x.numel() && !plan_rope(p, dev))
            throw UnsupportedError(n, "one token's " + std::to_string(p.N) + " heads of " +
                                          std::to_string(p.D) + " do not fit in UB");
        m_form = style + ": " + std::to_string(p.k) + " tokens per tile" +
                 (p.host_pos.empty() ? ", positions read from GM" : ", host-known positions");
    }
    std::vector<TensorRef> outputs() const override { return {m_out}; }
    std::string describe() const override { return m_form; }
    std::vector<KernelDesc> launches(const std::vector<TensorRef>& in, const std::vector<TensorRef>& out,
                                     uint64_t) const override {
        const uint64_t n = m_out.numel();
        if (n == 0) return {};
        RopePlan p = m_plan;
        p.x = in[0].addr, p.pos = in[1].addr, p.cs = in[2].addr, p.y = out[0].addr;
        const uint64_t bytes = 2 * n * isa::dtype_size(p.xt) + p.T * (4 + p.R * isa::dtype_size(p.ct));
        // fp32 passes per element: convert, gather, 2 multiplies, add, convert
        // back.
        return {norm::vector_launch(
            m_node.name, m_node.op_type, p.blocks, [p](isa::IInstrSink& s) { rope_kernel(s, p); },
            3.0 * static_cast<double>(p.T * p.N * p.R), bytes, 6, n, m_dev)};
    }

private:
    NodeDesc m_node;
    DeviceInfo m_dev;
    RopePlan m_plan;
    TensorRef m_out;
    std::string m_form;
};

std::unique_ptr<INodeOp> make_rope(const NodeDesc& n, const DeviceInfo& d) {
    return std::make_unique<RopeOp>(n, d);
}

}  // namespace

void rope_kernel(isa::IInstrSink& sink, const RopePlan& p) {
    KernelContext ctx(sink);
    RopeKernel k(ctx, p);
    k.run();
}

SFUMATO_REGISTER_NODE_OP(rope, "Rope", make_rope);

}  // namespace sfumato::ops::llm
