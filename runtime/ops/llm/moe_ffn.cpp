// MoeFfn: a whole mixture-of-experts MLP as one graph node (contract: docs/llm.md, "Operators"),
// for step graphs that keep a layer's MoE block together and for `sfumato kernel moe`. Its
// launches are those of the parts, in order, on intermediates in the node's workspace:
// MoeRouter -> MoePermute (histogram, scatter) -> GroupedMatmul (gate/up) -> SwiGlu ->
// GroupedMatmul (down) -> MoeCombine. Inputs x [T, H], logits [T, E] (the router's gate
// projection, an ordinary MatMul in the graph), w_gate_up [E, H, 2I], w_down [E, I, H]; output
// y [T, H]. Attributes: `top_k`, `host_experts` (passed to the parts that address by routing).
#include <algorithm>

#include "runtime/ops/llm/llm_common.h"
#include "runtime/ops/llm/moe.h"
#include "runtime/ops/norm/common.h"

namespace sfumato::ops::llm {

namespace {

class MoeFfnOp : public INodeOp {
public:
    MoeFfnOp(const NodeDesc& n, const DeviceInfo& dev) : m_node(n) {
        act_input(n, 0, "x");
        act_input(n, 1, "logits");
        const TensorRef &x = n.inputs[0], &lg = n.inputs[1], &wgu = norm::need_input(n, 2, "w_gate_up"),
                        &wd = norm::need_input(n, 3, "w_down");
        if (x.shape.size() != 2) throw UnsupportedError(n, "x must be [T, H], got " + ref::shape_str(x.shape));
        if (lg.shape.size() != 2 || lg.shape[0] != x.shape[0])
            throw UnsupportedError(n, "logits " + ref::shape_str(lg.shape) + " must be [T, E] with x's T = " +
                                          std::to_string(x.shape[0]));
        const int64_t T = x.shape[0], H = x.shape[1], E = lg.shape[1];
        if (wgu.shape.size() != 3 || wgu.shape[0] != E || wgu.shape[1] != H || wgu.shape[2] % 2 != 0)
            throw UnsupportedError(n, "w_gate_up " + ref::shape_str(wgu.shape) + " must be [E, H, 2I] with E = " +
                                          std::to_string(E) + ", H = " + std::to_string(H));
        const int64_t I = wgu.shape[2] / 2;
        if (wd.shape != std::vector<int64_t>{E, I, H})
            throw UnsupportedError(n, "w_down " + ref::shape_str(wd.shape) + " must be [E, I, H] = " +
                                          ref::shape_str({E, I, H}));
        if (x.dtype != lg.dtype || wgu.dtype != x.dtype || wd.dtype != x.dtype)
            throw UnsupportedError(n, "x, logits, w_gate_up and w_down must have one dtype");
        const int64_t k = n.attrs.get_int("top_k", 2);
        auto sub = [&](const std::string& part, const std::string& type, std::vector<TensorRef> ins) {
            NodeDesc s;
            s.name = n.name + "/" + part;
            s.op_type = type;
            s.attrs.set_owner(s.name);
            s.inputs = std::move(ins);
            if (type == "MoeRouter") s.attrs.set("top_k", ref::Attr::of_int(k));
            if (type == "MoePermute" || type == "MoeCombine" || type == "GroupedMatmul") {
                s.attrs.set("num_experts", ref::Attr::of_int(E));
                if (n.attrs.has("host_experts"))
                    s.attrs.set("host_experts", ref::Attr::of_ints(n.attrs.get_ints("host_experts", {})));
            }
            try {
                m_ops.push_back(make_node_op(s, dev));
            } catch (const UnsupportedError& e) {
                throw UnsupportedError(n, e.what());
            }
            std::vector<TensorRef> o = m_ops.back()->outputs();
            m_ins.push_back(s.inputs);
            return o;
        };
        const std::vector<TensorRef> rt = sub("router", "MoeRouter", {lg});
        const std::vector<TensorRef> pm = sub("permute", "MoePermute", {x, rt[1]});
        const std::vector<TensorRef> h1 = sub("gate_up", "GroupedMatmul", {pm[0], wgu, pm[2]});
        const std::vector<TensorRef> h2 = sub("swiglu", "SwiGlu", {h1[0]});
        const std::vector<TensorRef> h3 = sub("down", "GroupedMatmul", {h2[0], wd, pm[2]});
        const std::vector<TensorRef> y = sub("combine", "MoeCombine", {h3[0], pm[1], rt[0]});
        m_out = y[0];
        // Workspace: the intermediates (router weights and experts, x_perm, rows, sizes, the
        // gate/up result, the SwiGlu result, the down result), then the parts' own scratch.
        for (const std::vector<TensorRef>* v : {&rt, &pm, &h1, &h2, &h3})
            for (const TensorRef& t : *v) m_inter.push_back(place(t.storage_bytes()));
        for (const auto& op : m_ops) m_scratch.push_back(place(op->workspace_bytes()));
        m_form = "router, permute, gate/up " + m_ops[2]->describe() + ", SwiGlu, down, combine";
        (void)T;
    }
    std::vector<TensorRef> outputs() const override { return {m_out}; }
    uint64_t workspace_bytes() const override { return m_ws; }
    std::string describe() const override { return m_form; }
    std::vector<KernelDesc> launches(const std::vector<TensorRef>& in, const std::vector<TensorRef>& out,
                                     uint64_t ws) const override {
        // Tensors by their place in the chain: 0-1 router out, 2-4 permute out, 5 gate/up,
        // 6 SwiGlu, 7 down.
        std::vector<TensorRef> outs;
        size_t at = 0;
        std::vector<std::vector<TensorRef>> o(m_ops.size());
        for (size_t i = 0; i + 1 < m_ops.size(); ++i) {
            o[i] = m_ops[i]->outputs();
            for (TensorRef& t : o[i]) t.addr = ws + m_inter[at++];
        }
        o.back() = out;
        auto with = [](std::vector<TensorRef> v, std::initializer_list<const TensorRef*> a) {
            size_t i = 0;
            for (const TensorRef* t : a) v[i++].addr = t->addr;
            return v;
        };
        const std::vector<std::vector<TensorRef>> ins = {
            with(m_ins[0], {&in[1]}),
            with(m_ins[1], {&in[0], &o[0][1]}),
            with(m_ins[2], {&o[1][0], &in[2], &o[1][2]}),
            with(m_ins[3], {&o[2][0]}),
            with(m_ins[4], {&o[3][0], &in[3], &o[1][2]}),
            with(m_ins[5], {&o[4][0], &o[1][1], &o[0][0]}),
        };
        std::vector<KernelDesc> ks;
        for (size_t i = 0; i < m_ops.size(); ++i)
            for (KernelDesc& k : m_ops[i]->launches(ins[i], o[i], m_scratch[i] ? ws + m_scratch[i] : 0))
                ks.push_back(std::move(k));
        return ks;
    }

private:
    uint64_t place(uint64_t bytes) {
        if (bytes == 0) return 0;
        const uint64_t a = m_ws;
        m_ws += (bytes + 511) / 512 * 512;
        return a;
    }

    NodeDesc m_node;
    std::vector<std::unique_ptr<INodeOp>> m_ops;
    std::vector<std::vector<TensorRef>> m_ins;
    std::vector<uint64_t> m_inter, m_scratch;
    TensorRef m_out;
    uint64_t m_ws = 0;
    std::string m_form;
};

std::unique_ptr<INodeOp> make_moe_ffn(const NodeDesc& n, const DeviceInfo& d) { return std::make_unique<MoeFfnOp>(n, d); }

}  // namespace

SFUMATO_REGISTER_NODE_OP(moe_ffn, "MoeFfn", make_moe_ffn);

}  // namespace sfumato::ops::llm
