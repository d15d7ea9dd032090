// Step graph builder (see step_graph.h).
#include "runtime/llm/step_graph.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "sim/error.h"

namespace sfumato::llm {

namespace {

using graph::Graph;
using graph::Node;
using graph::Value;
using ref::Attr;
using ref::ElemType;
using Shape = std::vector<int64_t>;

class Builder {
public:
    explicit Builder(ElemType elem) : m_elem(elem) { m_g.name = "llm_step"; }

    int value(const std::string& name, ElemType e, const Shape& s) {
        Value v;
        v.name = name;
        v.elem = e;
        v.shape = graph::make_shape(s);
        v.has_shape = true;
        return m_g.add_value(std::move(v));
    }
    int act(const std::string& name, const Shape& s) { return value(name, m_elem, s); }
    int input(const std::string& name, ElemType e, const Shape& s, bool external) {
        const int id = value(name, e, s);
        m_g.val(id).graph_input = true;
        m_g.val(id).external = external;
        m_g.inputs.push_back(id);
        return id;
    }
    int weight(const std::string& name, const Shape& s) { return input(name, m_elem, s, true); }
    int ints(const std::string& name, const Shape& v) {
        ref::HostTensor t(ElemType::Int64, {static_cast<int64_t>(v.size())});
        for (size_t i = 0; i < v.size(); ++i) t.data[i] = static_cast<double>(v[i]);
        const int id = value(name, ElemType::Int64, {static_cast<int64_t>(v.size())});
        m_g.val(id).constant = std::make_shared<const graph::ConstValue>(std::move(t));
        m_g.val(id).initializer = true;
        return id;
    }
    Node& node(const std::string& op, const std::string& name, std::vector<int> in, std::vector<int> out) {
        Node n;
        n.name = name;
        n.op_type = op;
        n.attrs.set_owner(name);
        n.inputs = std::move(in);
        n.outputs = std::move(out);
        m_g.nodes.push_back(std::move(n));
        return m_g.nodes.back();
    }
    int reshape(int x, const Shape& s, const std::string& name) {
        const int y = act(name, s);
        node("Reshape", name, {x, ints(name + ".shape", s)}, {y});
        return y;
    }
    Graph finish(std::vector<int> outputs) {
        for (int o : outputs) {
            m_g.val(o).graph_output = true;
            m_g.outputs.push_back(o);
        }
        m_g.rebuild_producers();
        return std::move(m_g);
    }
    Graph& g() { return m_g; }

private:
    Graph m_g;
    ElemType m_elem;
};

struct Ctx {
    const ModelConfig& c;
    const StepBatch& b;
    const StepGraphOptions& o;
    Builder& g;
    int64_t T;
    int positions, cos_sin;
    int ep_recv = -1, ep_sizes = -1;  // expert parallel: one receive window for every layer
};

// RmsNorm(x [+ residual]) -> (y, residual_out); without a residual the input is the residual.
std::pair<int, int> rmsnorm(Ctx& k, int x, int residual, int weight, const std::string& name, int64_t rows) {
    const int64_t H = k.c.hidden_size;
    const int y = k.g.act(name, {rows, H});
    if (residual < 0) {
        Node& n = k.g.node("RmsNorm", name, {x, weight, -1}, {y});
        n.attrs.set("epsilon", Attr::of_float(k.c.rms_norm_eps));
        return {y, x};
    }
    const int r = k.g.act(name + ".residual", {rows, H});
    Node& n = k.g.node("RmsNorm", name, {x, weight, residual}, {y, r});
    n.attrs.set("epsilon", Attr::of_float(k.c.rms_norm_eps));
    return {y, r};
}

int matmul(Ctx& k, int x, int w, int64_t n, const std::string& name) {
    const int y = k.g.act(name, {k.T, n});
    k.g.node("MatMul", name, {x, w}, {y});
    return y;
}

// A linear layer of layer l: x [T, kin] @ weight `role` [kin, n], or under W8A8 the per-token
// quantisation of x and the int8 matmul with its dequant epilogue.
int linear(Ctx& k, int64_t l, int x, const std::string& role, int64_t kin, int64_t n, const std::string& name) {
    if (!quantized_weight(k.o.quant, role)) return matmul(k, x, k.g.weight(layer_tensor(l, role), {kin, n}), n, name);
    const int q = k.g.value(name + ".quant", ElemType::Int8, {k.T, kin});
    const int s = k.g.value(name + ".quant.scale", ElemType::Float, {k.T});
    k.g.node("DynamicQuant", name + ".quant", {x}, {q, s});
    const int w = k.g.input(layer_tensor(l, role), ElemType::Int8, {kin, n}, true);
    const int ws = k.g.input(layer_tensor(l, role + "_scale"), ElemType::Float, {n}, true);
    const int y = k.g.act(name, {k.T, n});
    Node& mm = k.g.node("QuantMatMul", name, {q, w, ws, s}, {y});
    mm.attrs.set("output_dtype", Attr::of_string(k.o.elem == ElemType::Bfloat16 ? "bf16" : "fp16"));
    return y;
}

// Attention block of layer l on the normed input h: returns the o_proj output [T, H].
int attention(Ctx& k, int64_t l, int h) {
    const ModelConfig& c = k.c;
    const int64_t T = k.T, Q = c.q_size(), KV = c.kv_size(), D = c.head_dim, H = c.hidden_size;
    const std::string p = "l" + std::to_string(l) + ".";
    int qkv = linear(k, l, h, "wqkv", H, Q + 2 * KV, p + "qkv_proj");
    if (c.qkv_bias) {
        const int y = k.g.act(p + "qkv_bias", {T, Q + 2 * KV});
        k.g.node("Add", p + "qkv_bias", {qkv, k.g.weight(layer_tensor(l, "bqkv"), {Q + 2 * KV})}, {y});
        qkv = y;
    }
    const int q2 = k.g.act(p + "q", {T, Q}), k2 = k.g.act(p + "k", {T, KV}), v2 = k.g.act(p + "v", {T, KV});
    Node& split = k.g.node("Split", p + "qkv_split", {qkv, k.g.ints(p + "qkv_split.sizes", {Q, KV, KV})}, {q2, k2, v2});
    split.attrs.set("axis", Attr::of_int(1));
    const int q3 = k.g.reshape(q2, {T, c.num_heads, D}, p + "q_heads");
    const int k3 = k.g.reshape(k2, {T, c.num_kv_heads, D}, p + "k_heads");
    const int v3 = k.g.reshape(v2, {T, c.num_kv_heads, D}, p + "v_heads");
    auto rope = [&](int x, int64_t heads, const std::string& name) {
        const int y = k.g.act(name, {T, heads, D});
        Node& n = k.g.node("Rope", name, {x, k.positions, k.cos_sin}, {y});
        n.attrs.set("style", Attr::of_string("half"));
        n.attrs.set("rotary_dim", Attr::of_int(D));
        set_host_attrs(n.name, n.op_type, n.attrs, c, k.b, k.o.block_size);
        return y;
    };
    const int qr = rope(q3, c.num_heads, p + "rope_q");
    const int kr = rope(k3, c.num_kv_heads, p + "rope_k");
    const Shape cache = {k.o.num_blocks, k.o.block_size, c.num_kv_heads, D};
    const int kc = k.g.input(layer_tensor(l, "k_cache"), k.g.g().val(qr).elem, cache, true);
    const int vc = k.g.input(layer_tensor(l, "v_cache"), k.g.g().val(qr).elem, cache, true);
    const int o = k.g.act(p + "attention", {T, c.num_heads, D});
    Node& pa = k.g.node("PagedAttention", p + "attention", {qr, kr, v3, kc, vc}, {o});
    set_host_attrs(pa.name, pa.op_type, pa.attrs, c, k.b, k.o.block_size);
    const int o2 = k.g.reshape(o, {T, Q}, p + "attention_flat");
    return linear(k, l, o2, "wo", Q, H, p + "o_proj");
}

int mlp(Ctx& k, int64_t l, int h) {
    const ModelConfig& c = k.c;
    const int64_t T = k.T, H = c.hidden_size, I = c.intermediate_size;
    const std::string p = "l" + std::to_string(l) + ".";
    if (!c.moe()) {
        const int gu = linear(k, l, h, "w_gate_up", H, 2 * I, p + "gate_up_proj");
        const int a = k.g.act(p + "swiglu", {T, I});
        k.g.node("SwiGlu", p + "swiglu", {gu}, {a});
        return linear(k, l, a, "w_down", I, H, p + "down_proj");
    }
    // Mixtral's sparse MoE block: router logits -> top-k with renormalised softmax weights ->
    // token permutation grouped by expert -> grouped gate/up matmul -> SwiGlu -> grouped down
    // matmul -> un-permute and weighted combine. The routing is a host-known attribute of the
    // nodes it steers when the batch carries it (set_host_attrs).
    // Expert parallel: c is the chip's shard (num_experts: its local experts); the router and
    // the permutation span every chip's experts.
    const int64_t E = c.num_experts * k.o.ep_ranks, K = c.experts_per_token;
    const int rl = matmul(k, h, k.g.weight(layer_tensor(l, "router"), {H, E}), E, p + "router");
    const int w = k.g.act(p + "moe_route.weights", {T, K});
    const int ids = k.g.value(p + "moe_route.experts", ElemType::Int64, {T, K});
    Node& route = k.g.node("MoeRouter", p + "moe_route", {rl}, {w, ids});
    route.attrs.set("top_k", Attr::of_int(K));
    const int xp = k.g.act(p + "moe_permute", {T * K, H});
    const int rows = k.g.value(p + "moe_permute.rows", ElemType::Int64, {T, K});
    const int sizes = k.g.value(p + "moe_permute.group_sizes", ElemType::Int64, {E});
    Node& perm = k.g.node("MoePermute", p + "moe_permute", {h, ids}, {xp, rows, sizes});
    perm.attrs.set("num_experts", Attr::of_int(E));
    set_host_attrs(perm.name, perm.op_type, perm.attrs, c, k.b, k.o.block_size);
    // Expert parallel: the local experts run on the rows dispatched here (see StepGraphOptions).
    const bool ep = k.o.ep_ranks > 1;
    const int64_t El = c.num_experts, R = ep ? ep_recv_rows(c, k.o.ep_ranks, T) : T * K;
    if (ep && k.ep_recv < 0) {
        k.ep_recv = k.g.weight("ep.recv", {R, H});
        k.ep_sizes = k.g.input("ep.sizes", ElemType::Int64, {El}, true);
    }
    const int in = ep ? k.ep_recv : xp;
    const int gsizes = ep ? k.ep_sizes : sizes;
    auto grouped = [&](int x, const std::string& wname, int64_t kin, int64_t n, const std::string& name) {
        const int y = k.g.act(name, {R, n});
        const int wt = k.g.weight(layer_tensor(l, wname), {El, kin, n});
        Node& gm = k.g.node("GroupedMatmul", name, {x, wt, gsizes}, {y});
        set_host_attrs(gm.name, gm.op_type, gm.attrs, c, k.b, k.o.block_size);
        return y;
    };
    const int gu = grouped(in, "e_gate_up", H, 2 * I, p + "experts_gate_up");
    const int a = k.g.act(p + "experts_swiglu", {R, I});
    k.g.node("SwiGlu", p + "experts_swiglu", {gu}, {a});
    const int dn = grouped(a, "e_down", I, H, p + "experts_down");
    const int y = k.g.act(p + "moe_combine", {T, H});
    Node& comb = k.g.node("MoeCombine", p + "moe_combine", {ep ? xp : dn, rows, w}, {y});
    comb.attrs.set("num_experts", Attr::of_int(E));
    set_host_attrs(comb.name, comb.op_type, comb.attrs, c, k.b, k.o.block_size);
    return y;
}

}  // namespace

int64_t ep_recv_rows(const ModelConfig& c, int64_t ep_ranks, int64_t tokens) {
    return ep_ranks * tokens * std::min(c.experts_per_token, c.num_experts);
}

int64_t StepBatch::tokens() const { return std::accumulate(query_lens.begin(), query_lens.end(), int64_t{0}); }

std::string layer_tensor(int64_t layer, const std::string& what) { return "l" + std::to_string(layer) + "." + what; }

int64_t node_layer(const std::string& node) {
    if (node.size() < 2 || node[0] != 'l' || !std::isdigit(static_cast<unsigned char>(node[1]))) return -1;
    return std::strtoll(node.c_str() + 1, nullptr, 10);
}

std::string node_role(const std::string& node) {
    if (node_layer(node) < 0) return node;
    const size_t dot = node.find('.');
    return dot == std::string::npos ? node : node.substr(dot + 1);
}

bool set_host_attrs(const std::string& node, const std::string& op_type, ref::Attrs& a, const ModelConfig& c,
                    const StepBatch& b, int64_t block_size) {
    const size_t T = static_cast<size_t>(b.tokens());
    auto known = [&](const std::vector<int64_t>& v) { return v.size() == T ? v : std::vector<int64_t>(T, 0); };
    if (op_type == "Rope") {
        a.set("host_positions", Attr::of_ints(known(b.positions)));
        return true;
    }
    if (op_type == "Gather" && node == "embedding") {
        a.set("host_ids", Attr::of_ints(known(b.ids)));
        return true;
    }
    if (op_type == "GroupedMatmul" && !b.local_sizes.empty()) {
        const int64_t l = node_layer(node);
        if (l < 0 || static_cast<size_t>(l) >= b.local_sizes.size()) return false;
        a.set("host_group_sizes", Attr::of_ints(b.local_sizes[static_cast<size_t>(l)]));
        return true;
    }
    if (op_type == "MoePermute" || op_type == "GroupedMatmul" || op_type == "MoeCombine") {
        const int64_t l = node_layer(node);
        const size_t entries = T * static_cast<size_t>(c.experts_per_token);
        if (l < 0 || static_cast<size_t>(l) >= b.experts.size() || b.experts[static_cast<size_t>(l)].size() != entries)
            return false;  // not known on the host: the kernels read the router's output
        a.set("host_experts", Attr::of_ints(b.experts[static_cast<size_t>(l)]));
        return true;
    }
    if (op_type != "PagedAttention") return false;
    a.set("num_heads", Attr::of_int(c.num_heads));
    a.set("num_kv_heads", Attr::of_int(c.num_kv_heads));
    a.set("head_dim", Attr::of_int(c.head_dim));
    a.set("block_size", Attr::of_int(block_size));
    a.set("scale", Attr::of_float(1.0 / std::sqrt(static_cast<double>(c.head_dim))));
    a.set("query_lens", Attr::of_ints(b.query_lens));
    a.set("context_lens", Attr::of_ints(b.context_lens));
    a.set("block_table", Attr::of_ints(b.block_table));
    a.set("max_blocks", Attr::of_int(b.max_blocks));
    return true;
}

graph::Graph build_step_graph(const ModelConfig& c, const StepBatch& b, const StepGraphOptions& o) {
    if (b.query_lens.empty() || b.query_lens.size() != b.context_lens.size() ||
        static_cast<int64_t>(b.block_table.size()) != b.max_blocks * static_cast<int64_t>(b.sequences()))
        throw InputError("llm: malformed step batch");
    const int64_t first = o.first_layer, end = o.end_layer < 0 ? c.num_layers : o.end_layer;
    if (first < 0 || first >= end || end > c.num_layers) throw InputError("llm: malformed layer range of a step graph");
    Builder g(o.elem);
    const int64_t T = b.tokens(), B = static_cast<int64_t>(b.sequences()), H = c.hidden_size;
    const int ids = first == 0 ? g.input("input_ids", ElemType::Int64, {T}, false) : -1;
    const int positions = g.input("positions", ElemType::Int64, {T}, false);
    const int cos_sin = g.weight("rope_cos_sin", {o.rope_positions, c.head_dim});
    Ctx k{c, b, o, g, T, positions, cos_sin, -1, -1};
    int x = -1, residual = -1;
    if (first == 0) {
        x = g.act("embedding", {T, H});
        Node& emb = g.node("Gather", "embedding", {g.weight("embed", {c.vocab_size, H}), ids}, {x});
        emb.attrs.set("axis", Attr::of_int(0));
        set_host_attrs(emb.name, emb.op_type, emb.attrs, c, b, o.block_size);
    } else {
        x = g.input(kPpHidden, o.elem, {T, H}, true);
        residual = g.input(kPpResidual, o.elem, {T, H}, true);
    }
    for (int64_t l = first; l < end; ++l) {
        const std::string p = "l" + std::to_string(l) + ".";
        auto [h, r] = rmsnorm(k, x, residual, g.weight(layer_tensor(l, "ln1"), {H}), p + "input_norm", T);
        const int attn = attention(k, l, h);
        auto [h2, r2] = rmsnorm(k, attn, r, g.weight(layer_tensor(l, "ln2"), {H}), p + "post_attention_norm", T);
        x = mlp(k, l, h2);
        residual = r2;
    }
    if (end < c.num_layers) return g.finish({x, residual});
    // The head on each sequence's last token only.
    if (T != B) {
        Shape last;
        int64_t end = 0;
        for (int64_t q : b.query_lens) last.push_back((end += q) - 1);
        auto pick = [&](int v, const std::string& name) {
            const int y = g.act(name, {B, H});
            Node& n = g.node("Gather", name, {v, g.ints(name + ".rows", last)}, {y});
            n.attrs.set("axis", Attr::of_int(0));
            return y;
        };
        x = pick(x, "last_token");
        residual = pick(residual, "last_token_residual");
    }
    const int y = g.act("final_norm", {B, H});
    Node& fn = g.node("RmsNorm", "final_norm", {x, g.weight("final_norm", {H}), residual}, {y, -1});
    fn.attrs.set("epsilon", Attr::of_float(c.rms_norm_eps));
    const int logits = g.act("lm_head", {B, c.vocab_size});
    g.node("MatMul", "lm_head", {y, g.weight("lm_head", {H, c.vocab_size})}, {logits});
    if (!o.sample) return g.finish({logits});
    const int next = g.value("next_tokens", ElemType::Int64, {B});
    Node& s = g.node("Sample", "sample", {logits}, {next});
    s.attrs.set("top_k", Attr::of_int(1));
    return g.finish({next});
}

}  // namespace sfumato::llm
