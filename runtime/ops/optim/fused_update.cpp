// The optimizer updates of `sfumato train-step` as fused vector kernels (sfumato-only node ops):
//   SgdMasterUpdate(W, G, P)          SGD on fp32 master weights (plain SGD without them is the
//                                     elementwise SgdUpdate, runtime/ops/ew);
//   MomentumUpdate(W, G, B[, P])      SGD with momentum, B the fp32 momentum buffer;
//   AdamWUpdate(W, G, M, V[, P])      AdamW, M and V the fp32 moments;
//   LambUpdate(W, G, M, V[, P])       LAMB: AdamW's direction scaled per tensor by |w| / |r|.
// The rules and their defaults are runtime/ref/optimizer.h. W and G are a weight and its
// all-reduced gradient in the weight's type (fp16, bf16 or fp32); with P (fp32 master weights,
// mixed precision) the rule updates P and W becomes P rounded to W's type; without it W itself
// is updated (through fp32 in UB). The gradient is multiplied by the attribute inv_scale first:
// the unscale of loss scaling, fused into the update as the frameworks' fused optimizers do.
// States and P are rewritten at their input addresses; output 0 is the updated W (the caller's
// plan places it over W's bytes).
// Each block takes a contiguous range of elements in tiles: every input read once (MTE2), the
// arithmetic in fp32 on the vector unit, every output written once (MTE3), as the vendor's fused
// ApplyAdamW / ApplyMomentum. LAMB needs the norms of the whole tensor, so it is two launches on
// the same split: the first updates the moments, writes the direction r (fp32, into the
// workspace) and per block the partial sums of w^2 and r^2 (vector reductions); the second reads
// the partial sums on each block's scalar unit (after invalidating its data cache), forms the
// trust ratio and applies w -= lr ratio r. In timing mode the scalar loads read zeros and the
// ratio is 1: the instructions, and so the cycles, are the same in both modes.
#include <cmath>

#include "runtime/kernel/api.h"
#include "runtime/ops/node_op.h"
#include "runtime/ops/norm/common.h"
#include "runtime/ref/optimizer.h"
#include "runtime/ref/ref_ops.h"
#include "sim/error.h"

namespace sfumato::ops {

namespace {

using namespace sfumato::kernel;
using Kind = ref::OptimizerRule::Kind;

enum class UpdPhase : uint8_t { Update, LambPrepare, LambApply };

struct UpdatePlan {
    Kind kind = Kind::Sgd;
    UpdPhase phase = UpdPhase::Update;
    bool master = false;
    int states = 0;
    uint64_t w = 0, g = 0, out = 0, p = 0, s[2] = {0, 0};
    uint64_t r = 0, part = 0;  // LAMB workspace: the direction (fp32) and the per-block sums (64 B per block)
    uint64_t n = 0, per_block = 0;
    uint32_t blocks = 1, tile = 0;
    float lr = 0, wd = 0, mu = 0, b1 = 0, b2 = 0, eps = 0, c1 = 1, c2 = 1, inv_scale = 1;
};

template <class T>
void upd_to_f32(const LocalTensor<float>& d, const LocalTensor<T>& s, uint32_t len) {
    if constexpr (std::is_same_v<T, float>) {
        Adds(d, s, 0.0f, len);
    } else {
        Cast(d, s, RoundMode::RINT, len);
    }
}
template <class T>
void upd_from_f32(const LocalTensor<T>& d, const LocalTensor<float>& s, uint32_t len) {
    if constexpr (std::is_same_v<T, float>) {
        Adds(d, s, 0.0f, len);
    } else {
        Cast(d, s, RoundMode::RINT, len);
    }
}

// The LAMB trust ratio from the first launch's per-block sums, on the scalar unit.
float trust_ratio(KernelContext& ctx, const UpdatePlan& p) {
    GlobalTensor<float> part;
    part.SetGlobalBuffer(ctx, p.part, uint64_t{p.blocks} * 16);
    DataCacheCleanAndInvalid<float, CacheLine::ENTIRE_DATA_CACHE>(part);
    float sw = 0, sr = 0;
    for (uint32_t b = 0; b < p.blocks; ++b) {
        sw += part.GetValue(uint64_t{b} * 16);
        sr += part.GetValue(uint64_t{b} * 16 + 8);
    }
    return sw > 0 && sr > 0 ? std::sqrt(sw) / std::sqrt(sr) : 1.0f;
}

// m = b1 m + (1 - b1) g, v = b2 v + (1 - b2) g^2, d = m / c1 / (sqrt(v / c2) + eps) + wd w.
void adam_direction(const UpdatePlan& p, const LocalTensor<float>& mo, const LocalTensor<float>& vo,
                    const LocalTensor<float>& m, const LocalTensor<float>& v, const LocalTensor<float>& gf,
                    const LocalTensor<float>& wf, const LocalTensor<float>& d, uint32_t len) {
    Muls(mo, m, p.b1, len);
    Axpy(mo, gf, 1.0f - p.b1, len);
    Mul(d, gf, gf, len);
    Muls(vo, v, p.b2, len);
    Axpy(vo, d, 1.0f - p.b2, len);
    Muls(d, vo, 1.0f / p.c2, len);
    Sqrt(d, d, len);
    Adds(d, d, p.eps, len);
    Div(d, mo, d, len);
    Muls(d, d, 1.0f / p.c1, len);
    if (p.wd != 0) Axpy(d, wf, p.wd, len);
}

// One block's share of an update: its queues and scratch tiles; per tile load(), compute() and
// store(), then finish() (LAMB's first launch: the block's sums).
template <class T>
class UpdateBlock {
public:
    UpdateBlock(KernelContext& ctx, const UpdatePlan& p, uint64_t start, uint64_t count)
        : m_p(p), m_pipe(ctx), m_prep(p.phase == UpdPhase::LambPrepare), m_apply(p.phase == UpdPhase::LambApply) {
        m_gw.SetGlobalBuffer(p.w + start * sizeof(T), count);
        m_gg.SetGlobalBuffer(p.g + start * sizeof(T), count);
        m_go.SetGlobalBuffer(p.out + start * sizeof(T), count);
        m_gp.SetGlobalBuffer(p.p + start * 4, count);
        for (int k = 0; k < p.states; ++k) m_gs[k].SetGlobalBuffer(p.s[k] + start * 4, count);
        m_gr.SetGlobalBuffer(p.r + start * 4, count);
        m_gpart.SetGlobalBuffer(p.part + uint64_t{ctx.block_idx()} * 64, 16);
        const uint32_t tb = p.tile * sizeof(T), fb = p.tile * 4;
        m_pipe.InitBuffer(m_qw, 1, p.master ? fb : tb);
        if (!m_apply) m_pipe.InitBuffer(m_qg, 1, tb);
        for (int k = 0; k < p.states && !m_apply; ++k) {
            m_pipe.InitBuffer(m_qs[k], 1, fb);
            m_pipe.InitBuffer(m_qso[k], 1, fb);
        }
        if (m_apply) m_pipe.InitBuffer(m_qr, 1, fb);
        if (!m_prep) m_pipe.InitBuffer(m_qwo, 1, tb);
        if (!m_prep && p.master) m_pipe.InitBuffer(m_qpo, 1, fb);
        if (m_prep) {
            m_pipe.InitBuffer(m_qro, 1, fb);
            m_pipe.InitBuffer(m_qslot, 1, 64);
        }
        m_pipe.InitBuffer(m_calc, (m_prep ? 5 : 3) * fb);
        m_wf = m_calc.Get<float>(), m_gf = m_wf[p.tile], m_d = m_wf[2 * p.tile];
        m_accw = m_wf[3 * p.tile], m_accr = m_wf[4 * p.tile];
        if (m_prep) {
            Duplicate(m_accw, 0.0f, p.tile);
            Duplicate(m_accr, 0.0f, p.tile);
        }
    }

    // W (or the master copy), and G and the states, or LAMB's direction, into UB; W and G as fp32.
    void load(uint64_t off, uint32_t len) {
        if (m_p.master) {
            LocalTensor<float> wm = m_qw.AllocTensor<float>();
            DataCopy(wm, m_gp[off], len);
            m_qw.EnQue(wm);
        } else {
            LocalTensor<T> wt = m_qw.AllocTensor<T>();
            DataCopy(wt, m_gw[off], len);
            m_qw.EnQue(wt);
        }
        if (m_apply) {
            m_r = m_qr.AllocTensor<float>();
            DataCopy(m_r, m_gr[off], len);
            m_qr.EnQue(m_r);
        } else {
            LocalTensor<T> g = m_qg.AllocTensor<T>();
            DataCopy(g, m_gg[off], len);
            m_qg.EnQue(g);
            for (int k = 0; k < m_p.states; ++k) {
                m_s[k] = m_qs[k].AllocTensor<float>();
                DataCopy(m_s[k], m_gs[k][off], len);
                m_qs[k].EnQue(m_s[k]);
            }
        }
        if (m_p.master) {
            LocalTensor<float> wm = m_qw.DeQue<float>();
            Adds(m_wf, wm, 0.0f, len);
            m_qw.FreeTensor(wm);
        } else {
            LocalTensor<T> wt = m_qw.DeQue<T>();
            upd_to_f32(m_wf, wt, len);
            m_qw.FreeTensor(wt);
        }
        if (m_apply) return;
        LocalTensor<T> g = m_qg.DeQue<T>();
        upd_to_f32(m_gf, g, len);
        m_qg.FreeTensor(g);
        if (m_p.inv_scale != 1.0f) Muls(m_gf, m_gf, m_p.inv_scale, len);  // the unscale
        for (int k = 0; k < m_p.states; ++k) {
            m_s[k] = m_qs[k].DeQue<float>();
            m_so[k] = m_qso[k].AllocTensor<float>();
        }
    }

    // The rule on the tile: the new weights in m_wf, the new states in m_so (LAMB's first launch:
    // the direction out to GM and the sums of squares accumulated).
    void compute(uint64_t off, uint32_t len, float ratio) {
        const UpdatePlan& p = m_p;
        if (m_apply) {
            m_r = m_qr.DeQue<float>();
            Axpy(m_wf, m_r, -p.lr * ratio, len);
            m_qr.FreeTensor(m_r);
        } else if (m_prep) {
            LocalTensor<float> ro = m_qro.AllocTensor<float>();
            adam_direction(p, m_so[0], m_so[1], m_s[0], m_s[1], m_gf, m_wf, ro, len);
            Mul(m_gf, m_wf, m_wf, len);
            Add(m_accw, m_accw, m_gf, len);
            Mul(m_gf, ro, ro, len);
            Add(m_accr, m_accr, m_gf, len);
            m_qro.EnQue(ro);
            ro = m_qro.DeQue<float>();
            DataCopy(m_gr[off], ro, len);
            m_qro.FreeTensor(ro);
        } else if (p.kind == Kind::AdamW) {
            adam_direction(p, m_so[0], m_so[1], m_s[0], m_s[1], m_gf, m_wf, m_d, len);
            Axpy(m_wf, m_d, -p.lr, len);
        } else {
            if (p.wd != 0) Axpy(m_gf, m_wf, p.wd, len);  // g + wd w
            if (p.kind == Kind::Momentum) {
                Muls(m_so[0], m_s[0], p.mu, len);  // b = mu b + g
                Add(m_so[0], m_so[0], m_gf, len);
                Axpy(m_wf, m_so[0], -p.lr, len);
            } else {
                Axpy(m_wf, m_gf, -p.lr, len);
            }
        }
    }

    // The states, the master copy and W (rounded to its type) out.
    void store(uint64_t off, uint32_t len) {
        for (int k = 0; k < m_p.states && !m_apply; ++k) {
            m_qs[k].FreeTensor(m_s[k]);
            m_qso[k].EnQue(m_so[k]);
            m_so[k] = m_qso[k].DeQue<float>();
            DataCopy(m_gs[k][off], m_so[k], len);
            m_qso[k].FreeTensor(m_so[k]);
        }
        if (m_prep) return;
        LocalTensor<T> wo = m_qwo.AllocTensor<T>();
        upd_from_f32(wo, m_wf, len);
        m_qwo.EnQue(wo);
        if (m_p.master) {
            LocalTensor<float> po = m_qpo.AllocTensor<float>();
            Adds(po, m_wf, 0.0f, len);
            m_qpo.EnQue(po);
            po = m_qpo.DeQue<float>();
            DataCopy(m_gp[off], po, len);
            m_qpo.FreeTensor(po);
        }
        wo = m_qwo.DeQue<T>();
        DataCopy(m_go[off], wo, len);
        m_qwo.FreeTensor(wo);
    }

    // LAMB's first launch: this block's sums of w^2 and r^2 as [sw, 0 x 7, sr, 0 x 7].
    void finish() {
        if (!m_prep) return;
        LocalTensor<float> sl = m_qslot.AllocTensor<float>();
        Duplicate(sl, 0.0f, 16);
        ReduceSum(sl, m_accw, m_p.tile);
        ReduceSum(sl[8], m_accr, m_p.tile);
        m_qslot.EnQue(sl);
        sl = m_qslot.DeQue<float>();
        DataCopy(m_gpart, sl, 16);
        m_qslot.FreeTensor(sl);
    }

private:
    const UpdatePlan& m_p;
    TPipe m_pipe;
    const bool m_prep, m_apply;
    GlobalTensor<T> m_gw, m_gg, m_go;
    GlobalTensor<float> m_gp, m_gs[2], m_gr, m_gpart;
    TQue<TPosition::VECIN> m_qw, m_qg, m_qs[2], m_qr;
    TQue<TPosition::VECOUT> m_qwo, m_qpo, m_qso[2], m_qro, m_qslot;
    TBuf<TPosition::VECCALC> m_calc;
    LocalTensor<float> m_wf, m_gf, m_d, m_accw, m_accr, m_r, m_s[2], m_so[2];
};

template <class T>
void update_kernel(isa::IInstrSink& sink, const UpdatePlan& p) {
    KernelContext ctx(sink);
    const uint64_t start = ctx.block_idx() * p.per_block;
    if (start >= p.n) return;
    const uint64_t count = std::min(p.per_block, p.n - start);
    const float ratio = p.phase == UpdPhase::LambApply ? trust_ratio(ctx, p) : 1.0f;
    UpdateBlock<T> b(ctx, p, start, count);
    for (uint64_t off = 0; off < count; off += p.tile) {
        const uint32_t len = static_cast<uint32_t>(std::min<uint64_t>(p.tile, count - off));
        b.load(off, len);
        b.compute(off, len, ratio);
        b.store(off, len);
    }
    b.finish();
}

const char* update_op_name(Kind k) {
    switch (k) {
        case Kind::Sgd: return "SgdMasterUpdate";
        case Kind::Momentum: return "MomentumUpdate";
        case Kind::AdamW: return "AdamWUpdate";
        default: return "LambUpdate";
    }
}

class FusedUpdateOp : public INodeOp {
public:
    FusedUpdateOp(Kind kind, const NodeDesc& n, const DeviceInfo& dev) : m_n(n), m_dev(dev) {
        UpdatePlan& p = m_plan;
        p.kind = kind;
        p.states = ref::OptimizerRule::states(kind);
        const size_t base = 2 + static_cast<size_t>(p.states);
        p.master = kind == Kind::Sgd || n.inputs.size() == base + 1;
        if (n.inputs.size() != base + (p.master ? 1 : 0))
            throw UnsupportedError(n, std::string("needs inputs ") + inputs_text(kind));
        const TensorRef& w = n.inputs[0];
        if (w.dtype != isa::DType::FP16 && w.dtype != isa::DType::BF16 && w.dtype != isa::DType::FP32)
            throw UnsupportedError(n, "W must be fp16, bf16 or fp32");
        if (n.inputs[1].dtype != w.dtype) throw UnsupportedError(n, "G must have W's type");
        for (size_t i = 0; i < n.inputs.size(); ++i) {
            const TensorRef& t = n.inputs[i];
            if (i >= 2 && t.dtype != isa::DType::FP32)
                throw UnsupportedError(n, "the optimizer states and master weights must be fp32");
            if (t.numel() != w.numel() || !t.contiguous())
                throw UnsupportedError(n, "W, G and the states must be contiguous tensors of one size");
        }
        set_rule(n.attrs);
        p.n = w.numel();
        const uint32_t cores = std::max<uint32_t>(1, dev.vector_cores);
        p.per_block = (p.n + cores - 1) / cores;
        p.per_block = (p.per_block + 15) / 16 * 16;  // 32-byte ranges of every type
        p.blocks = static_cast<uint32_t>(std::max<uint64_t>(1, (p.n + p.per_block - 1) / p.per_block));
        // UB per element, the larger of the two LAMB phases: W in, G in, W out (T); master in and
        // out, two states in and out, r (fp32); five fp32 scratch tiles.
        const uint64_t per_elem = 3 * isa::dtype_size(w.dtype) + 2 * 4 + 4 * 4 + 4 + 5 * 4;
        const uint64_t fit = dev.ub_bytes > 256 ? (dev.ub_bytes - 256) / per_elem / 64 * 64 : 0;
        if (fit == 0) throw UnsupportedError(n, "UB too small for a tile");
        p.tile = static_cast<uint32_t>(
            std::min<uint64_t>({fit, 4096, std::max<uint64_t>(64, (p.per_block + 63) / 64 * 64)}));
    }

    std::vector<TensorRef> outputs() const override {
        return {norm::tensor_like(m_n.inputs[0], m_n.inputs[0].shape)};
    }
    uint64_t workspace_bytes() const override {
        return m_plan.kind == Kind::Lamb ? m_plan.n * 4 + 64 * uint64_t{m_plan.blocks} + 512 : 0;
    }
    std::string describe() const override {
        return std::string("fused ") + update_op_name(m_plan.kind) + (m_plan.master ? " on fp32 master weights" : "") +
               ": tiles of " + std::to_string(m_plan.tile) + " on " + std::to_string(m_plan.blocks) + " cores";
    }

    std::vector<KernelDesc> launches(const std::vector<TensorRef>& in, const std::vector<TensorRef>& out,
                                     uint64_t ws) const override {
        if (m_plan.n == 0) return {};
        UpdatePlan p = m_plan;
        p.w = in[0].addr, p.g = in[1].addr, p.out = out[0].addr;
        for (int k = 0; k < p.states; ++k) p.s[k] = in[2 + static_cast<size_t>(k)].addr;
        if (p.master) p.p = in.back().addr;
        p.r = ws;
        p.part = ws + (p.n * 4 + 511) / 512 * 512;
        const uint64_t es = isa::dtype_size(in[0].dtype), ns = static_cast<uint64_t>(p.states);
        // Bytes: W or P in, G in, the states in and out, W (and P) out.
        const uint64_t bytes = p.n * ((p.master ? 4 : es) + es + 8 * ns + es + (p.master ? 4 : 0));
        const double flops = static_cast<double>(p.n) * (p.kind == Kind::Sgd ? 3 : p.kind == Kind::Momentum ? 5 : 14);
        if (p.kind != Kind::Lamb)
            return {launch(p, m_n.name, flops, bytes, 2.0 + 3.0 * static_cast<double>(ns))};
        p.phase = UpdPhase::LambPrepare;
        KernelDesc a = launch(p, m_n.name + "#prepare", flops, bytes - p.n * es + p.n * 4, 12);
        p.phase = UpdPhase::LambApply;
        KernelDesc b = launch(p, m_n.name + "#apply", 2.0 * static_cast<double>(p.n),
                              p.n * ((p.master ? 8 : 2 * es) + 4 + es), 3);
        return {a, b};
    }

private:
    static const char* inputs_text(Kind k) {
        switch (k) {
            case Kind::Sgd: return "W, G, P (fp32 master weights)";
            case Kind::Momentum: return "W, G, B (and P, fp32 master weights)";
            default: return "W, G, M, V (and P, fp32 master weights)";
        }
    }
    void set_rule(const ref::Attrs& a) {
        const ref::OptimizerRule h = ref::OptimizerRule::of(m_plan.kind, a);
        if (h.t < 1) throw UnsupportedError(m_n, "attribute 'step' must be at least 1");
        if (!(h.b1 >= 0 && h.b1 < 1 && h.b2 >= 0 && h.b2 < 1 && h.mu >= 0 && h.mu < 1))
            throw UnsupportedError(m_n, "beta1, beta2 and momentum must be in [0, 1)");
        if (!std::isfinite(h.inv_scale) || !std::isfinite(h.lr) || !std::isfinite(h.wd))
            throw UnsupportedError(m_n, "lr, weight_decay and inv_scale must be finite");
        UpdatePlan& p = m_plan;
        p.lr = static_cast<float>(h.lr), p.wd = static_cast<float>(h.wd), p.mu = static_cast<float>(h.mu);
        p.b1 = static_cast<float>(h.b1), p.b2 = static_cast<float>(h.b2), p.eps = static_cast<float>(h.eps);
        p.inv_scale = static_cast<float>(h.inv_scale);
        p.c1 = static_cast<float>(1 - std::pow(h.b1, static_cast<double>(h.t)));
        p.c2 = static_cast<float>(1 - std::pow(h.b2, static_cast<double>(h.t)));
    }
    KernelDesc launch(const UpdatePlan& p, const std::string& name, double flops, uint64_t bytes,
                      double passes) const {
        std::function<void(isa::IInstrSink&)> body;
        switch (m_n.inputs[0].dtype) {
            case isa::DType::FP16: body = [p](isa::IInstrSink& s) { update_kernel<half>(s, p); }; break;
            case isa::DType::BF16: body = [p](isa::IInstrSink& s) { update_kernel<bfloat16>(s, p); }; break;
            default: body = [p](isa::IInstrSink& s) { update_kernel<float>(s, p); }; break;
        }
        return norm::vector_launch(name, m_n.op_type, p.blocks, std::move(body), flops, bytes, passes, p.n,
                                   m_dev);
    }

    NodeDesc m_n;
    DeviceInfo m_dev;
    UpdatePlan m_plan;
};

template <Kind K>
std::unique_ptr<INodeOp> make_update(const NodeDesc& n, const DeviceInfo& d) {
    return std::make_unique<FusedUpdateOp>(K, n, d);
}

// The host reference: the updated W (double, rounded to W's type). The states and the master
// weights the kernel rewrites are not outputs of the node.
template <Kind K>
std::vector<ref::HostTensor> update_ref(const ref::RefNode& n, const std::vector<const ref::HostTensor*>& in) {
    const size_t ns = static_cast<size_t>(ref::OptimizerRule::states(K));
    const bool master = K == Kind::Sgd || in.size() == 3 + ns;
    if (in.size() != 2 + ns + (master ? 1 : 0))
        throw InputError("node '" + n.name + "' (" + update_op_name(K) + "): wrong number of inputs");
    for (const ref::HostTensor* t : in)
        if (!t) throw InputError("node '" + n.name + "' (" + update_op_name(K) + "): an input is missing");
    const ref::OptimizerRule h = ref::OptimizerRule::of(K, n.attrs);
    std::vector<double> w = master ? in.back()->data : in[0]->data;
    std::vector<double> s0 = ns > 0 ? in[2]->data : std::vector<double>{};
    std::vector<double> s1 = ns > 1 ? in[3]->data : std::vector<double>{};
    h.apply(w, in[1]->data, &s0, &s1);
    ref::HostTensor out = *in[0];
    out.data = std::move(w);
    ref::round_to_type(out);
    return {out};
}

}  // namespace

SFUMATO_REGISTER_NODE_OP(sgd_master_update, "SgdMasterUpdate", make_update<Kind::Sgd>);
SFUMATO_REGISTER_NODE_OP(momentum_update, "MomentumUpdate", make_update<Kind::Momentum>);
SFUMATO_REGISTER_NODE_OP(adamw_update, "AdamWUpdate", make_update<Kind::AdamW>);
SFUMATO_REGISTER_NODE_OP(lamb_update, "LambUpdate", make_update<Kind::Lamb>);
SFUMATO_REGISTER_REF(sgd_master_update, "SgdMasterUpdate", update_ref<Kind::Sgd>);
SFUMATO_REGISTER_REF(momentum_update, "MomentumUpdate", update_ref<Kind::Momentum>);
SFUMATO_REGISTER_REF(adamw_update, "AdamWUpdate", update_ref<Kind::AdamW>);
SFUMATO_REGISTER_REF(lamb_update, "LambUpdate", update_ref<Kind::Lamb>);

}  // namespace sfumato::ops
