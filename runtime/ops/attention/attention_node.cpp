// FusedAttention as a graph node (inputs Q, K, V; attributes scale, causal; see node_op.h) and
// `sfumato kernel attention`: the host tiling (plan_attention) and the Mix launch of the
// kernel in attention_kernel.cpp.
//
// Tiling: br query rows per item (a multiple of 16 per vector part), bc key columns per step
// (64, 128 or 256: whole 64-lane fp32 units, folded pairwise), the largest that fit L0A (Q or
// P tiles), L0B (K^T or V tiles), L0C (two fp32 tiles: S and O in flight), L1 (Q, two K, two
// V, two P) and UB (attention_ub_bytes), preferring double buffers; no larger than the
// sequence needs. fp16 inputs pass S and O_j through the workspace in fp16 (the precision the
// unfused fp16 MatMul -> Softmax -> MatMul holds them in) and run the softmax on fp16 lanes
// where the tile is a whole repeat wide; bf16 inputs keep them in fp32. The standalone check's
// tolerance (make_standalone_attention) follows from those roundings.
#include <algorithm>
#include <cmath>

#include "runtime/ops/attention/attention.h"
#include "runtime/ops/i_op.h"
#include "runtime/ops/node_op.h"
#include "runtime/ops/standalone.h"

namespace sfumato::ops::attention {

uint64_t attention_ub_bytes(const AttnPlan& p) {
    auto a = [](uint64_t b) { return (b + 31) / 32 * 32; };
    const uint64_t h = p.h, es = isa::dtype_size(p.dt);
    uint64_t n = 0;
    const uint64_t ws = p.split ? isa::dtype_size(p.wt) : 4;
    n += (p.split ? p.s_bufs : 1) * a(h * p.bc * ws);  // S tiles
    n += a(h * p.Dv * ws);                             // O_j tile
    if (ws != 4) n += a(h * std::max(p.bc, p.Dv) * 4);  // fp32 work tile
    n += p.p_bufs * a(h * std::max(p.bc, p.Dv) * es); // P / output tiles
    n += a(h * p.Dv * 4);                             // accumulator
    n += a(h * 256) + a((h + 7) / 8 * 8 * 32) + a(8 * ((h + 63) / 64 * 64) * 4);
    if (p.causal) n += 2 * a(p.bc * 4) + a((h + 7) / 8 * 8 * 32 + 32) + 4096;
    return n;
}

bool plan_attention(AttnPlan& p, const DeviceInfo& dev, std::string& why) {
    p.split = dev.arch == "split";
    p.nd2nz = p.split;
    p.aiv = p.split ? std::max(1u, dev.aiv_per_aic) : 1;
    if (p.aiv > isa::kMaxCrossFlag - 2) {
        why = "more vector parts per block than cross-core flag ids";
        return false;
    }
    const uint64_t es = isa::dtype_size(p.dt);
    const uint32_t unit = 16 * p.aiv;
    const uint32_t br_max = std::max(unit, (p.Sq + unit - 1) / unit * unit);
    const uint32_t bc_max = std::max(64u, (p.Sk + 63) / 64 * 64);
    for (uint32_t br : {256u, 128u, 64u, 32u, 16u}) {
        if (br % unit || br > br_max) continue;
        for (uint32_t bc : {256u, 128u, 64u}) {
            if (bc > bc_max && bc != 64) continue;
            if (p.kv_block && p.kv_block % bc) continue;  // a step's keys in one cache block
            for (int buf = 0; buf < 3; ++buf)
                for (int l0 = 0; l0 < 2; ++l0) {
                    AttnPlan t = p;
                    t.br = br, t.bc = bc, t.h = br / p.aiv;
                    t.s_bufs = buf == 0 ? 2 : 1, t.p_bufs = buf == 2 ? 1 : 2;
                    t.a2_bufs = t.b2_bufs = l0 == 0 ? 2 : 1;
                    const uint64_t mp = (br + 15) / 16 * 16;
                    if (t.a2_bufs * mp * std::max(p.D, bc) * es > dev.l0a_bytes) continue;
                    if (t.b2_bufs * bc * std::max(p.D, p.Dv) * es > dev.l0b_bytes) continue;
                    if (2 * mp * std::max(bc, p.Dv) * 4 > dev.l0c_bytes) continue;
                    // S two steps ahead of O on split parts when L1 holds a third K/V buffer
                    // and the MTE2 -> MTE1 events suffice (Q, K/V, P queues).
                    auto l1 = [&](uint32_t kv) { return (mp * p.D + kv * bc * (p.D + p.Dv) + 2 * mp * bc) * es; };
                    t.ahead = p.split && dev.event_ids >= 6 && l1(3) <= dev.l1_bytes ? 2 : 1;
                    if (l1(t.ahead + 1) > dev.l1_bytes) continue;
                    if (attention_ub_bytes(t) > dev.ub_bytes) continue;
                    t.blocks = static_cast<uint32_t>(std::min<uint64_t>(t.items(), std::max(1u, dev.cube_cores)));
                    p = t;
                    return true;
                }
        }
    }
    why = "no tiling of head dims " + std::to_string(p.D) + "/" + std::to_string(p.Dv) +
          " fits the core's buffers (L0A " + std::to_string(dev.l0a_bytes) + ", L0B " + std::to_string(dev.l0b_bytes) +
          ", L0C " + std::to_string(dev.l0c_bytes) + ", UB " + std::to_string(dev.ub_bytes) + " bytes)";
    return false;
}

namespace {

class AttentionNode : public INodeOp {
public:
    AttentionNode(const NodeDesc& n, const DeviceInfo& dev) : m_node(n), m_dev(dev) {
        if (!n.has_input(0) || !n.has_input(1) || !n.has_input(2)) throw UnsupportedError(n, "needs inputs Q, K and V");
        if (n.has_input(3)) throw UnsupportedError(n, "an additive mask input (only the causal attribute)");
        const TensorRef &q = n.inputs[0], &k = n.inputs[1], &v = n.inputs[2];
        const char* names[] = {"Q", "K", "V"};
        for (int i = 0; i < 3; ++i) {
            const TensorRef& t = n.inputs[static_cast<size_t>(i)];
            if (t.format != Format::ND || !t.contiguous())
                throw UnsupportedError(n, std::string("input ") + names[i] + " must be a contiguous ND tensor");
            if (t.dtype != isa::DType::FP16 && t.dtype != isa::DType::BF16 && t.dtype != isa::DType::FP32)
                throw UnsupportedError(n, std::string("input ") + names[i] + " has dtype " + isa::dtype_name(t.dtype) +
                                              " (supported: fp16, bf16, fp32)");
            if (t.dtype != q.dtype) throw UnsupportedError(n, "Q, K and V must have one dtype");
        }
        const size_t r = q.shape.size();
        if (r < 2 || k.shape.size() != r || v.shape.size() != r)
            throw UnsupportedError(n, "Q, K and V must have the same rank >= 2");
        uint64_t G = 1;
        for (size_t a = 0; a + 2 < r; ++a) {
            if (k.shape[a] != q.shape[a] || v.shape[a] != q.shape[a])
                throw UnsupportedError(n, "leading dimensions of Q, K and V differ (no broadcast across heads)");
            G *= static_cast<uint64_t>(q.shape[a]);
        }
        const int64_t Sq = q.shape[r - 2], D = q.shape[r - 1], Sk = k.shape[r - 2], Dv = v.shape[r - 1];
        if (k.shape[r - 1] != D) throw UnsupportedError(n, "Q and K head dimensions differ");
        if (v.shape[r - 2] != Sk) throw UnsupportedError(n, "K and V key counts differ");
        if (D % 16 || Dv % 16 || D > 512 || Dv > 512)
            throw UnsupportedError(n, "head dimensions " + std::to_string(D) + "/" + std::to_string(Dv) +
                                          " (supported: multiples of 16 up to 512)");
        if (Sq > (1 << 24) || Sk > (1 << 24) || G > (1u << 30)) throw UnsupportedError(n, "sequence too long");
        m_out.shape = q.shape;
        m_out.shape.back() = Dv;
        m_out.dtype = q.dtype;
        m_out.elem = q.elem;
        if (Sq == 0 || Sk == 0 || G == 0) throw UnsupportedError(n, "empty Q or K");
        AttnPlan& p = m_plan;
        // fp32: Q, K, V cast to fp16 into the workspace (what the cube multiplies anyway), the
        // fp16 result cast back; the graph's tolerance for FusedAttention assumes this.
        m_wide_io = q.dtype == isa::DType::FP32;
        p.dt = m_wide_io ? isa::DType::FP16 : q.dtype;
        p.G = static_cast<uint32_t>(G), p.Sq = static_cast<uint32_t>(Sq), p.Sk = static_cast<uint32_t>(Sk);
        p.D = static_cast<uint32_t>(D), p.Dv = static_cast<uint32_t>(Dv);
        p.scale = n.attrs.get_float("scale", 1.0);
        p.causal = n.attrs.get_int("causal", 0) != 0;
        // Scores and partial outputs cross the workspace in fp16 for fp16 inputs (what the
        // unfused fp16 graph holds between its MatMuls and Softmax), in fp32 for bf16 ones.
        p.wt = p.dt == isa::DType::FP16 ? isa::DType::FP16 : isa::DType::FP32;
        if (!std::isfinite(p.scale)) throw UnsupportedError(n, "scale is not finite");
        std::string why;
        if (!plan_attention(p, dev, why)) throw UnsupportedError(n, why);
        if (m_wide_io) {
            for (int i = 0; i < 4; ++i) {
                NodeDesc c;
                c.name = n.name + (i < 3 ? std::string(".cast_") + "qkv"[i] : std::string(".cast_out"));
                c.op_type = "Cast";
                c.opset = 13;
                c.attrs.set_owner(c.name);
                c.attrs.set("to", ref::Attr::of_int(static_cast<int64_t>(i < 3 ? ref::ElemType::Float16 : m_out.elem)));
                TensorRef in = i < 3 ? n.inputs[static_cast<size_t>(i)] : m_out;
                if (i == 3) in.dtype = isa::DType::FP16, in.elem = ref::ElemType::Float16;
                c.inputs = {in};
                m_casts.push_back(make_node_op(c, dev));
                m_cast_in.push_back(in);
                m_cast_out.push_back(m_casts.back()->outputs().at(0));
                m_ws_off.push_back(m_ws_total);
                m_ws_total += (std::max<uint64_t>(i < 3 ? m_cast_out.back().storage_bytes() : in.storage_bytes(), 1) + 511) /
                              512 * 512;
                m_ws_total += (m_casts.back()->workspace_bytes() + 511) / 512 * 512;
            }
        }
    }

    std::vector<TensorRef> outputs() const override { return {m_out}; }
    uint64_t workspace_bytes() const override { return m_ws_total + m_plan.ws_bytes(); }
    std::string describe() const override {
        const AttnPlan& p = m_plan;
        return "flash attention: " + std::to_string(p.br) + " query rows x " + std::to_string(p.bc) +
               " keys per step, " +
               (p.split ? "AIC + " + std::to_string(p.aiv) + " AIV per block through a GM workspace"
                        : std::string("coupled cores, UB <-> L1")) +
               (p.causal ? ", causal" : "");
    }

    std::vector<KernelDesc> launches(const std::vector<TensorRef>& in, const std::vector<TensorRef>& out,
                                     uint64_t workspace) const override {
        AttnPlan p = m_plan;
        p.q = in[0].addr, p.k = in[1].addr, p.v = in[2].addr, p.o = out[0].addr, p.ws = workspace + m_ws_total;
        std::vector<KernelDesc> ks;
        if (m_wide_io) {  // cast inputs into the workspace, attention there, cast the result out
            auto at = [&](size_t i) {
                const uint64_t a = workspace + m_ws_off[i];
                const uint64_t data = (std::max<uint64_t>(i < 3 ? m_cast_out[i].storage_bytes() : m_cast_in[i].storage_bytes(), 1) + 511) / 512 * 512;
                return std::make_pair(a, a + data);  // tensor, the cast's own workspace
            };
            for (size_t i = 0; i < 3; ++i) {
                TensorRef o = m_cast_out[i];
                o.addr = at(i).first;
                for (auto& k : m_casts[i]->launches({in[i]}, {o}, at(i).second)) ks.push_back(std::move(k));
            }
            p.q = at(0).first, p.k = at(1).first, p.v = at(2).first, p.o = at(3).first;
        }
        KernelDesc kd;
        kd.name = m_node.name;
        kd.type = m_node.op_type;
        kd.kind = KernelKind::Mix;
        kd.block_dim = p.blocks;
        kd.body = [p](isa::IInstrSink& s) { attention_kernel(s, p); };
        kd.flops = p.flops();
        kd.bytes = in[0].storage_bytes() + in[1].storage_bytes() + in[2].storage_bytes() + out[0].storage_bytes();
        // Cube: the two products' MACs; vector: ~6 fp32 passes over the visible scores.
        const double pairs = double(p.G) * p.visible_pairs();
        double lb = 0;
        if (m_dev.cube_macs_fp16 > 0) lb = pairs * (p.D + p.Dv) / (m_dev.cube_macs_fp16 * p.blocks);
        if (m_dev.vector_bytes_per_cycle > 0)
            lb = std::max(lb, 6.0 * pairs * 4 / (m_dev.vector_bytes_per_cycle * p.blocks * p.aiv));
        kd.min_compute_cycles = lb;
        ks.push_back(std::move(kd));
        if (m_wide_io) {
            TensorRef i16 = m_cast_in[3];
            i16.addr = p.o;
            const uint64_t cw = workspace + m_ws_off[3] +
                                (std::max<uint64_t>(m_cast_in[3].storage_bytes(), 1) + 511) / 512 * 512;
            for (auto& k : m_casts[3]->launches({i16}, {out[0]}, cw)) ks.push_back(std::move(k));
        }
        return ks;
    }

private:
    NodeDesc m_node;
    DeviceInfo m_dev;
    TensorRef m_out;
    AttnPlan m_plan;
    bool m_wide_io = false;
    std::vector<std::unique_ptr<INodeOp>> m_casts;  // fp32 I/O: Q, K, V to fp16, the output back
    std::vector<TensorRef> m_cast_in, m_cast_out;
    std::vector<uint64_t> m_ws_off;
    uint64_t m_ws_total = 0;
};

std::unique_ptr<INodeOp> make_attention(const NodeDesc& n, const DeviceInfo& dev) {
    return std::make_unique<AttentionNode>(n, dev);
}

std::unique_ptr<IOp> make_standalone_attention(const OpArgs& a, const DeviceInfo& dev) {
    const std::string op = "attention";
    const int64_t b = static_cast<int64_t>(arg_u64(a, op, "batch", 1, 1 << 16));
    const int64_t h = static_cast<int64_t>(arg_u64(a, op, "heads", 1, 1 << 16));
    const int64_t s = static_cast<int64_t>(arg_u64(a, op, "seq", 1, 1 << 20));
    const int64_t kv = a.at("kv_seq") == "0" ? s : static_cast<int64_t>(arg_u64(a, op, "kv_seq", 1, 1 << 20));
    const int64_t d = static_cast<int64_t>(arg_u64(a, op, "head_dim", 16, 512));
    const bool causal = arg_u64(a, op, "causal", 0, 1) != 0;
    if (d % 16) throw InputError("operator 'attention': argument 'head_dim' = " + std::to_string(d) + " is not a multiple of 16");
    const std::string dt = a.at("dtype");
    ref::ElemType t;
    if (dt == "fp16")
        t = ref::ElemType::Float16;
    else if (dt == "bf16")
        t = ref::ElemType::Bfloat16;
    else
        throw InputError("operator 'attention': argument 'dtype' = '" + dt + "' (valid: fp16, bf16)");
    StandaloneSpec spec;
    NodeDesc& node = spec.node;
    node.name = "attention";
    node.op_type = "FusedAttention";
    node.attrs.set_owner(node.name);
    node.attrs.set("scale", ref::Attr::of_float(1.0 / std::sqrt(double(d))));
    node.attrs.set("causal", ref::Attr::of_int(causal ? 1 : 0));
    node.inputs.push_back(make_tensor({b, h, s, d}, t));
    node.inputs.push_back(make_tensor({b, h, kv, d}, t));
    node.inputs.push_back(make_tensor({b, h, kv, d}, t));
    spec.gens.assign(3, uniform_input(-1, 1));
    // Inputs in [-1, 1]: |v| <= 1 and the scaled scores |s| <= scale * d = sqrt(d). P rounded to
    // the input type moves o by at most u; fp16 scores (fp16 inputs) move each weight by
    // exp(+-u |s|), o by at most 2 u sqrt(d); fp16 partial products O_j add u. Plus the output
    // rounding (rtol).
    const double u = t == ref::ElemType::Float16 ? 0x1p-11 : 0x1p-8;
    const double s_bound = std::sqrt(double(d));
    spec.tol.atol = t == ref::ElemType::Float16 ? u * (2 + 2 * s_bound + 1) : 2 * u;
    spec.tol.rtol = 2 * u;
    return make_standalone(std::move(spec), dev);
}

}  // namespace

SFUMATO_REGISTER_NODE_OP(fused_attention, "FusedAttention", make_attention);

SFUMATO_REGISTER_OP(attention, OpSpec{"attention",
                                      "FusedAttention node: softmax(Q K^T / sqrt(d) [causal]) V, FlashAttention-style "
                                      "(Cube products, Vector online softmax)",
                                      {{"batch", "1", "batch"},
                                       {"heads", "1", "heads"},
                                       {"seq", "", "query (and key) sequence length"},
                                       {"kv_seq", "0", "key/value sequence length (0 = seq)"},
                                       {"head_dim", "64", "head dimension (multiple of 16)"},
                                       {"causal", "0", "1 = causal mask (key j visible to query i when j <= i)"},
                                       {"dtype", "fp16", "fp16 | bf16"}},
                                      make_standalone_attention});
SFUMATO_OP_SAMPLE(attention, "attention", {{"heads", "2"}, {"seq", "72"}, {"kv_seq", "100"}, {"head_dim", "32"}, {"causal", "1"}});

}  // namespace sfumato::ops::attention
