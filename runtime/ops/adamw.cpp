// AdamWUpdate(W, G, M, V): the AdamW optimizer step (decoupled weight decay; Loshchilov & Hutter)
// as one fused vector kernel, a sfumato-only node op of `sfumato train-step --optimizer adamw`.
// W and G are a weight and its (all-reduced) gradient in the weight's type (fp16, bf16 or fp32);
// M and V, the first and second moments, are fp32 and are updated in place:
//   m = b1 m + (1 - b1) g,   v = b2 v + (1 - b2) g^2,
//   w = w - lr (m / c1 / (sqrt(v / c2) + eps) + wd w),   c1 = 1 - b1^t, c2 = 1 - b2^t
// (attributes lr, beta1, beta2, epsilon, weight_decay and step t >= 1; the bias corrections are
// plan-time scalars). Output 0 is the updated W (written over W's bytes by the caller's plan);
// M and V are rewritten at their input addresses. Each block takes a contiguous range of
// elements in tiles: W, G, M, V in (MTE2), the arithmetic in fp32 on the vector unit, W, M, V
// out (MTE3): every tensor read once and written once, as the vendor's fused ApplyAdamW.
#include <cmath>

#include "runtime/kernel/api.h"
#include "runtime/ops/node_op.h"
#include "runtime/ops/norm/common.h"
#include "runtime/ref/adamw.h"
#include "runtime/ref/ref_ops.h"
#include "sim/error.h"

namespace sfumato::ops {

namespace {

using namespace sfumato::kernel;

struct AdamWPlan {
    uint64_t w = 0, g = 0, m = 0, v = 0, out = 0;
    uint64_t n = 0, per_block = 0;
    uint32_t tile = 0;
    float lr = 0, b1 = 0, b2 = 0, eps = 0, wd = 0, c1 = 1, c2 = 1;
};

// One tile: x (fp32 in UB) from a T tile.
template <class T>
void to_f32(const LocalTensor<float>& d, const LocalTensor<T>& s, uint32_t len) {
    if constexpr (std::is_same_v<T, float>) {
        Adds(d, s, 0.0f, len);
    } else {
        Cast(d, s, RoundMode::RINT, len);
    }
}

template <class T>
void adamw_kernel(isa::IInstrSink& sink, const AdamWPlan& p) {
    KernelContext ctx(sink);
    const uint64_t start = ctx.block_idx() * p.per_block;
    if (start >= p.n) return;
    const uint64_t count = std::min(p.per_block, p.n - start);
    GlobalTensor<T> gw, gg, go;
    GlobalTensor<float> gm, gv;
    gw.SetGlobalBuffer(p.w + start * sizeof(T), count);
    gg.SetGlobalBuffer(p.g + start * sizeof(T), count);
    go.SetGlobalBuffer(p.out + start * sizeof(T), count);
    gm.SetGlobalBuffer(p.m + start * 4, count);
    gv.SetGlobalBuffer(p.v + start * 4, count);
    TPipe pipe(ctx);
    TQue<TPosition::VECIN> in_w, in_g, in_m, in_v;
    TQue<TPosition::VECOUT> out_w, out_m, out_v;
    TBuf<TPosition::VECCALC> calc;
    const uint32_t tb = p.tile * sizeof(T), fb = p.tile * 4;
    pipe.InitBuffer(in_w, 1, tb);
    pipe.InitBuffer(in_g, 1, tb);
    pipe.InitBuffer(in_m, 1, fb);
    pipe.InitBuffer(in_v, 1, fb);
    pipe.InitBuffer(out_w, 1, tb);
    pipe.InitBuffer(out_m, 1, fb);
    pipe.InitBuffer(out_v, 1, fb);
    pipe.InitBuffer(calc, 3 * fb);
    const LocalTensor<float> wf = calc.Get<float>(), gf = wf[p.tile], t = wf[2 * p.tile];
    for (uint64_t off = 0; off < count; off += p.tile) {
        const uint32_t len = static_cast<uint32_t>(std::min<uint64_t>(p.tile, count - off));
        LocalTensor<T> w = in_w.AllocTensor<T>(), g = in_g.AllocTensor<T>();
        LocalTensor<float> m = in_m.AllocTensor<float>(), v = in_v.AllocTensor<float>();
        DataCopy(w, gw[off], len);
        DataCopy(g, gg[off], len);
        DataCopy(m, gm[off], len);
        DataCopy(v, gv[off], len);
        in_w.EnQue(w), in_g.EnQue(g), in_m.EnQue(m), in_v.EnQue(v);
        w = in_w.DeQue<T>(), g = in_g.DeQue<T>(), m = in_m.DeQue<float>(), v = in_v.DeQue<float>();
        to_f32(wf, w, len);
        to_f32(gf, g, len);
        LocalTensor<float> mo = out_m.AllocTensor<float>(), vo = out_v.AllocTensor<float>();
        Muls(mo, m, p.b1, len);  // m = b1 m + (1 - b1) g
        Axpy(mo, gf, 1.0f - p.b1, len);
        Mul(t, gf, gf, len);  // v = b2 v + (1 - b2) g^2
        Muls(vo, v, p.b2, len);
        Axpy(vo, t, 1.0f - p.b2, len);
        Muls(t, vo, 1.0f / p.c2, len);  // t = m / c1 / (sqrt(v / c2) + eps)
        Sqrt(t, t, len);
        Adds(t, t, p.eps, len);
        Div(t, mo, t, len);
        Muls(t, t, 1.0f / p.c1, len);
        Axpy(t, wf, p.wd, len);  // + wd w
        Axpy(wf, t, -p.lr, len);  // w -= lr (...)
        in_w.FreeTensor(w), in_g.FreeTensor(g), in_m.FreeTensor(m), in_v.FreeTensor(v);
        LocalTensor<T> wo = out_w.AllocTensor<T>();
        if constexpr (std::is_same_v<T, float>) {
            Adds(wo, wf, 0.0f, len);
        } else {
            Cast(wo, wf, RoundMode::RINT, len);
        }
        out_w.EnQue(wo), out_m.EnQue(mo), out_v.EnQue(vo);
        wo = out_w.DeQue<T>(), mo = out_m.DeQue<float>(), vo = out_v.DeQue<float>();
        DataCopy(go[off], wo, len);
        DataCopy(gm[off], mo, len);
        DataCopy(gv[off], vo, len);
        out_w.FreeTensor(wo), out_m.FreeTensor(mo), out_v.FreeTensor(vo);
    }
}

class AdamWOp : public INodeOp {
public:
    AdamWOp(const NodeDesc& n, const DeviceInfo& dev) : m_n(n), m_dev(dev) {
        if (n.inputs.size() != 4) throw UnsupportedError(n, "needs inputs W, G, M, V");
        const TensorRef &w = n.inputs[0], &g = n.inputs[1], &m = n.inputs[2], &v = n.inputs[3];
        if (w.dtype != isa::DType::FP16 && w.dtype != isa::DType::BF16 && w.dtype != isa::DType::FP32)
            throw UnsupportedError(n, "W must be fp16, bf16 or fp32");
        if (g.dtype != w.dtype || m.dtype != isa::DType::FP32 || v.dtype != isa::DType::FP32)
            throw UnsupportedError(n, "G must have W's type, M and V must be fp32");
        for (const TensorRef* t : {&g, &m, &v})
            if (t->numel() != w.numel() || !t->contiguous() || !w.contiguous())
                throw UnsupportedError(n, "W, G, M and V must be contiguous tensors of one size");
        const ref::Attrs& a = n.attrs;
        AdamWPlan& p = m_plan;
        p.lr = static_cast<float>(a.get_float("lr", 1e-3));
        p.b1 = static_cast<float>(a.get_float("beta1", 0.9));
        p.b2 = static_cast<float>(a.get_float("beta2", 0.999));
        p.eps = static_cast<float>(a.get_float("epsilon", 1e-8));
        p.wd = static_cast<float>(a.get_float("weight_decay", 0.01));
        const int64_t step = a.get_int("step", 1);
        if (step < 1) throw UnsupportedError(n, "attribute 'step' must be at least 1");
        if (!(p.b1 >= 0 && p.b1 < 1 && p.b2 >= 0 && p.b2 < 1))
            throw UnsupportedError(n, "beta1 and beta2 must be in [0, 1)");
        p.c1 = static_cast<float>(1 - std::pow(static_cast<double>(p.b1), static_cast<double>(step)));
        p.c2 = static_cast<float>(1 - std::pow(static_cast<double>(p.b2), static_cast<double>(step)));
        p.n = w.numel();
        const uint32_t cores = std::max<uint32_t>(1, dev.vector_cores);
        p.per_block = (p.n + cores - 1) / cores;
        p.per_block = (p.per_block + 7) / 8 * 8;  // 32-byte fp32 ranges
        m_blocks = static_cast<uint32_t>(std::max<uint64_t>(1, (p.n + p.per_block - 1) / p.per_block));
        // UB: W, G, W out in T; M, V, M out, V out in fp32; three fp32 scratch tiles.
        const uint64_t per_elem = 3 * isa::dtype_size(w.dtype) + 7 * 4;
        const uint64_t fit = dev.ub_bytes / per_elem / 64 * 64;
        if (fit == 0) throw UnsupportedError(n, "UB too small for a tile");
        p.tile = static_cast<uint32_t>(std::min<uint64_t>({fit, 4096, std::max<uint64_t>(64, (p.per_block + 63) / 64 * 64)}));
    }

    std::vector<TensorRef> outputs() const override { return {norm::tensor_like(m_n.inputs[0], m_n.inputs[0].shape)}; }
    std::string describe() const override {
        return "fused AdamW: tiles of " + std::to_string(m_plan.tile) + " on " + std::to_string(m_blocks) + " cores";
    }

    std::vector<KernelDesc> launches(const std::vector<TensorRef>& in, const std::vector<TensorRef>& out,
                                     uint64_t) const override {
        if (m_plan.n == 0) return {};
        AdamWPlan p = m_plan;
        p.w = in[0].addr, p.g = in[1].addr, p.m = in[2].addr, p.v = in[3].addr, p.out = out[0].addr;
        const uint64_t es = isa::dtype_size(in[0].dtype);
        const uint64_t bytes = p.n * (3 * es + 4 * 4);
        std::function<void(isa::IInstrSink&)> body;
        switch (in[0].dtype) {
            case isa::DType::FP16: body = [p](isa::IInstrSink& s) { adamw_kernel<half>(s, p); }; break;
            case isa::DType::BF16: body = [p](isa::IInstrSink& s) { adamw_kernel<bfloat16>(s, p); }; break;
            default: body = [p](isa::IInstrSink& s) { adamw_kernel<float>(s, p); }; break;
        }
        return {norm::vector_launch(m_n.name, m_n.op_type, m_blocks, std::move(body), 14.0 * static_cast<double>(p.n),
                                    bytes, 16, p.n, m_dev)};
    }

private:
    NodeDesc m_n;
    DeviceInfo m_dev;
    AdamWPlan m_plan;
    uint32_t m_blocks = 1;
};

std::unique_ptr<INodeOp> make(const NodeDesc& n, const DeviceInfo& d) { return std::make_unique<AdamWOp>(n, d); }

// The host reference: the updated W (double; M and V as the kernel rewrites them are not
// outputs of the node).
std::vector<ref::HostTensor> adamw_ref(const ref::RefNode& n, const std::vector<const ref::HostTensor*>& in) {
    if (in.size() != 4 || !in[0] || !in[1] || !in[2] || !in[3])
        throw InputError("node '" + n.name + "' (AdamWUpdate): needs inputs W, G, M, V");
    const ref::AdamW h = ref::AdamW::of(n.attrs);
    ref::HostTensor w = *in[0];
    for (size_t i = 0; i < w.data.size(); ++i) {
        double m = in[2]->data[i], v = in[3]->data[i];
        w.data[i] = h.step(w.data[i], in[1]->data[i], m, v);
    }
    ref::round_to_type(w);
    return {w};
}

}  // namespace

SFUMATO_REGISTER_NODE_OP(adamw_update, "AdamWUpdate", make);
SFUMATO_REGISTER_REF(adamw_update, "AdamWUpdate", adamw_ref);

}  // namespace sfumato::ops
