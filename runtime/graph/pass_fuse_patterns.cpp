// fuse_layernorm and fuse_attention: multi-node patterns that become one
// library node.
//  LayerNorm: mean = ReduceMean(x, last axes); d = Sub(x, mean); var =
//  ReduceMean(Pow(d, 2) or
//    Mul(d, d)); y = Div(d, Sqrt(Add(var, eps))) [* gamma] [+ beta] ->
//    LayerNormalization(x, gamma, beta; axis, epsilon) (opset 17).
//  Attention: s = MatMul(Q, K^T) [Div or Mul by a scalar] [Where(causal bool,
//  s, -big) or Add(s,
//    mask)] -> Softmax(last axis) -> MatMul(., V) -> FusedAttention(Q, K, V [,
//    mask]; scale, causal). K^T is undone by composing the transpose that made
//    it (or dropping it).
// Intermediates must feed only the pattern; the fused node is kept only if its
// factory accepts it.
#include <algorithm>
#include <cmath>
#include <set>

#include "runtime/ref/broadcast.h"
#include "runtime/graph/passes.h"

namespace sfumato::graph {

namespace {

struct Ctx {
    Graph& g;
    std::vector<std::vector<int>> cons;
    int producer(int v) const { return v < 0 ? -1 : g.val(v).producer; }
    const Node* prod(int v) const {
        const int p = producer(v);
        return p < 0 ? nullptr : &g.nodes[static_cast<size_t>(p)];
    }
    bool only_into(int v, const std::set<int>& nodes) const {
        if (v < 0 || g.val(v).graph_output) return false;
        for (int c : cons[static_cast<size_t>(v)])
            if (!nodes.count(c)) return false;
        return true;
    }
    std::shared_ptr<const ref::HostTensor> cval(int v) const {
        return v >= 0 && g.val(v).constant ? g.val(v).constant->host() : nullptr;
    }
    int sole(int v) const { return sole_consumer(g, cons, v); }
};

// Axes of a ReduceMean (attribute, or input at opset 18) normalised; empty if
// not constant.
std::vector<int64_t> reduce_axes(const Ctx& c, const Node& n, size_t rank) {
    std::vector<int64_t> axes = n.attrs.get_ints("axes", {});
    if (axes.empty() && n.inputs.size() > 1) {
        auto t = c.cval(n.inputs[1]);
        if (!t) return {};
        axes = ref::int_values(*t);
    }
    for (auto& a : axes) a = a < 0 ? a + static_cast<int64_t>(rank) : a;
    std::sort(axes.begin(), axes.end());
    return axes;
}

void remove_nodes(Graph& g, const std::set<int>& idx) {
    std::vector<bool> dead(g.nodes.size(), false);
    for (int i : idx) dead[static_cast<size_t>(i)] = true;
    g.erase_nodes(dead);
    g.topo_sort();
}

}  // namespace

void pass_fuse_layernorm(Graph& g, const PassContext& pc, PassReport& r) {
    bool again = true;
    while (again) {
        again = false;
        Ctx c{g, g.consumers()};
        for (size_t i = 0; i < g.nodes.size() && !again; ++i) {
            const Node& mean = g.nodes[i];
            if (mean.op_type != "ReduceMean" || mean.attrs.get_int("keepdims", 1) != 1) continue;
            const int x = mean.inputs[0];
            const Value& xv = g.val(x);
            if (!xv.has_shape || !ref::is_float(xv.elem)) continue;
            const size_t rank = xv.shape.size();
            const auto axes = reduce_axes(c, mean, rank);
            if (axes.empty() || axes.back() != static_cast<int64_t>(rank) - 1) continue;
            bool trailing = true;
            for (size_t k = 0; k < axes.size(); ++k)
                trailing = trailing && axes[k] == static_cast<int64_t>(rank - axes.size() + k);
            if (!trailing) continue;
            std::set<int> nodes{static_cast<int>(i)};
            // d = x - mean
            const int sub = c.sole(mean.outputs[0]);
            if (sub < 0 || g.nodes[static_cast<size_t>(sub)].op_type != "Sub" ||
                g.nodes[static_cast<size_t>(sub)].inputs[0] != x)
                continue;
            nodes.insert(sub);
            const int d = g.nodes[static_cast<size_t>(sub)].outputs[0];
            // d's two readers: Pow(d, 2) / Mul(d, d), and Div(d, std).
            int sq = -1, div = -1;
            for (int k : c.cons[static_cast<size_t>(d)]) {
                const Node& n = g.nodes[static_cast<size_t>(k)];
                if (n.op_type == "Div" && n.inputs[0] == d)
                    div = k;
                else if (n.op_type == "Pow" && n.inputs[0] == d) {
                    auto e = c.cval(n.inputs[1]);
                    if (e && e->data.size() == 1 && e->data[0] == 2.0) sq = k;
                } else if (n.op_type == "Mul" && n.inputs[0] == d && n.inputs[1] == d)
                    sq = k;
            }
            if (sq < 0 || div < 0 ||
                c.cons[static_cast<size_t>(d)].size() !=
                    (g.nodes[static_cast<size_t>(sq)].op_type == "Mul" ? 3u : 2u))
                continue;
            nodes.insert(sq);
            nodes.insert(div);
            const int var = c.sole(g.nodes[static_cast<size_t>(sq)].outputs[0]);
            if (var < 0 || g.nodes[static_cast<size_t>(var)].op_type != "ReduceMean" ||
                reduce_axes(c, g.nodes[static_cast<size_t>(var)], rank) != axes ||
                g.nodes[static_cast<size_t>(var)].attrs.get_int("keepdims", 1) != 1)
                continue;
            nodes.insert(var);
            const int add = c.sole(g.nodes[static_cast<size_t>(var)].outputs[0]);
            if (add < 0 || g.nodes[static_cast<size_t>(add)].op_type != "Add") continue;
            auto eps = c.cval(g.nodes[static_cast<size_t>(add)].inputs[1]);
            if (!eps || eps->data.size() != 1) continue;
            nodes.insert(add);
            const int sqrt = c.sole(g.nodes[static_cast<size_t>(add)].outputs[0]);
            if (sqrt < 0 || g.nodes[static_cast<size_t>(sqrt)].op_type != "Sqrt" ||
                c.sole(g.nodes[static_cast<size_t>(sqrt)].outputs[0]) != div)
                continue;
            nodes.insert(sqrt);
            int out = g.nodes[static_cast<size_t>(div)].outputs[0];
            // Optional affine.
            std::shared_ptr<const ref::HostTensor> gamma, beta;
            const int64_t norm = [&] {
                int64_t n = 1;
                for (int64_t a : axes)
                    n *= xv.shape[static_cast<size_t>(a)].known() ? xv.shape[static_cast<size_t>(a)].v : -1;
                return n;
            }();
            auto per_feature = [&](const std::shared_ptr<const ref::HostTensor>& t) {
                return t && static_cast<int64_t>(t->data.size()) == norm && t->shape.size() <= axes.size();
            };
            if (const int mul = c.sole(out);
                mul >= 0 && g.nodes[static_cast<size_t>(mul)].op_type == "Mul" &&
                per_feature(c.cval(g.nodes[static_cast<size_t>(mul)].inputs[1]))) {
                gamma = c.cval(g.nodes[static_cast<size_t>(mul)].inputs[1]);
                nodes.insert(mul);
                out = g.nodes[static_cast<size_t>(mul)].outputs[0];
                if (const int ad = c.sole(out);
                    ad >= 0 && g.nodes[static_cast<size_t>(ad)].op_type == "Add" &&
                    per_feature(c.cval(g.nodes[static_cast<size_t>(ad)].inputs[1]))) {
                    beta = c.cval(g.nodes[static_cast<size_t>(ad)].inputs[1]);
                    nodes.insert(ad);
                    out = g.nodes[static_cast<size_t>(ad)].outputs[0];
                }
            }
            // Intermediates feed only the pattern.
            bool closed = true;
            for (int k : nodes)
                if (g.nodes[static_cast<size_t>(k)].outputs[0] != out &&
                    !c.only_into(g.nodes[static_cast<size_t>(k)].outputs[0], nodes))
                    closed = false;
            if (!closed || norm <= 0) continue;
            std::vector<int64_t> fshape;
            for (int64_t a : axes) fshape.push_back(xv.shape[static_cast<size_t>(a)].v);
            ref::HostTensor gm(xv.elem, fshape), bt(xv.elem, fshape);
            for (size_t k = 0; k < gm.data.size(); ++k) {
                gm.data[k] = gamma ? gamma->data[k] : 1.0;
                bt.data[k] = beta ? beta->data[k] : 0.0;
            }
            Node ln;
            ln.name = g.nodes[i].name;
            ln.op_type = "LayerNormalization";
            ln.opset = 17;
            ln.attrs.set_owner(ln.name);
            ln.attrs.set("axis", ref::Attr::of_int(-static_cast<int64_t>(axes.size())));
            ln.attrs.set("epsilon", ref::Attr::of_float(eps->data[0]));
            ln.inputs = {x, add_constant(g, ln.name + ".scale", std::move(gm)),
                         add_constant(g, ln.name + ".bias", std::move(bt))};
            ln.outputs = {out};
            if (pc.opt.training) {  // Mean and InvStdDev (fp32) for the backward
                for (const char* what : {"/mean", "/invstd"}) {
                    Value v;
                    v.name = g.unique_name(ln.name + what);
                    v.elem = ref::ElemType::Float;
                    v.shape = g.val(x).shape;
                    for (size_t k = rank - axes.size(); k < rank; ++k) v.shape[k] = Dim::of(1);
                    v.has_shape = true;
                    ln.outputs.push_back(g.add_value(std::move(v)));
                }
            }
            for (int k : nodes) ln.fused.push_back(g.nodes[static_cast<size_t>(k)].name);
            if (!pc.accepts(g, ln)) continue;
            g.nodes.push_back(ln);
            remove_nodes(g, nodes);
            ++r.changes;
            ++r.patterns["LayerNorm from " + std::to_string(nodes.size()) + " ops"];
            again = true;
        }
    }
}

namespace {

// Whether a [.., S, S] bool tensor is the causal (lower-triangular) pattern, or
// an additive mask with 0 on and below the diagonal and a large negative value
// above it.
bool causal_pattern(const ref::HostTensor& t, bool additive) {
    if (t.shape.size() < 2) return false;
    const int64_t s = t.shape.back(), r = t.shape[t.shape.size() - 2];
    if (s != r) return false;
    const size_t mat = static_cast<size_t>(s * s);
    for (size_t b = 0; b < t.data.size(); b += mat)
        for (int64_t i = 0; i < s; ++i)
            for (int64_t j = 0; j < s; ++j) {
                const double v = t.data[b + static_cast<size_t>(i * s + j)];
                const bool visible = j <= i;
                if (!additive && (v != 0) != visible) return false;
                if (additive && (visible ? v != 0 : v > -1e3)) return false;
            }
    return true;
}

}  // namespace

void pass_fuse_attention(Graph& g, const PassContext& pc, PassReport& r) {
    bool again = true;
    while (again) {
        again = false;
        Ctx c{g, g.consumers()};
        for (size_t i = 0; i < g.nodes.size() && !again; ++i) {
            const Node& sm = g.nodes[i];
            if (sm.op_type != "Softmax") continue;
            const Value& sv = g.val(sm.inputs[0]);
            if (!sv.has_shape || sv.shape.size() < 2 || !ref::is_float(sv.elem)) continue;
            const int64_t axis = sm.attrs.get_int("axis", sm.opset >= 13 ? -1 : 1);
            if (axis != -1 && axis != static_cast<int64_t>(sv.shape.size()) - 1) continue;
            std::set<int> nodes{static_cast<int>(i)};
            // Forward: MatMul(P, V).
            const int pv = c.sole(sm.outputs[0]);
            if (pv < 0 || g.nodes[static_cast<size_t>(pv)].op_type != "MatMul" ||
                g.nodes[static_cast<size_t>(pv)].inputs[0] != sm.outputs[0])
                continue;
            nodes.insert(pv);
            const int v = g.nodes[static_cast<size_t>(pv)].inputs[1];
            // Backward: mask, scale, QK^T.
            int s = sm.inputs[0];
            int mask = -1;
            bool causal = false;
            double scale = 1.0;
            const Node* p = c.prod(s);
            if (p && (p->op_type == "Where" || p->op_type == "Add")) {
                if (p->op_type == "Where") {
                    auto cond = c.cval(p->inputs[0]);
                    auto fill = c.cval(p->inputs[2]);
                    if (!cond || !fill || fill->data.size() != 1 || fill->data[0] > -1e3 ||
                        !causal_pattern(*cond, false))
                        continue;
                    causal = true;
                    s = p->inputs[1];
                } else {
                    const int other = p->inputs[1];
                    auto m = c.cval(other);
                    if (m && causal_pattern(*m, true))
                        causal = true;
                    else
                        mask = other;
                    s = p->inputs[0];
                }
                nodes.insert(c.producer(sm.inputs[0]));
                p = c.prod(s);
            }
            if (p && (p->op_type == "Div" || p->op_type == "Mul")) {
                auto k = c.cval(p->inputs[1]);
                if (!k || k->data.size() != 1 || k->data[0] == 0) continue;
                scale = p->op_type == "Div" ? 1.0 / k->data[0] : k->data[0];
                nodes.insert(c.producer(s));
                s = p->inputs[0];
                p = c.prod(s);
            }
            if (!p || p->op_type != "MatMul") continue;
            const int qk = c.producer(s);
            nodes.insert(qk);
            const int q = p->inputs[0], kt = p->inputs[1];
            const Value& qv = g.val(q);
            const Value& ktv = g.val(kt);
            if (!qv.has_shape || !ktv.has_shape || qv.shape.size() != 4 || ktv.shape.size() != 4) continue;
            // Intermediates feed only the pattern.
            const int out = g.nodes[static_cast<size_t>(pv)].outputs[0];
            bool closed = true;
            for (int k : nodes)
                if (g.nodes[static_cast<size_t>(k)].outputs[0] != out &&
                    !c.only_into(g.nodes[static_cast<size_t>(k)].outputs[0], nodes))
                    closed = false;
            if (!closed) continue;
            // K from K^T: compose the transpose that produced it, or add one.
            int k_in = -1;
            Node new_t;
            bool need_t = true;
            const Node* tp = c.prod(kt);
            std::vector<int64_t> perm{0, 1, 3, 2};
            int t_node = -1;
            if (tp && tp->op_type == "Transpose" && c.only_into(kt, nodes)) {
                const auto pperm = tp->attrs.get_ints("perm", {3, 2, 1, 0});
                std::vector<int64_t> q2(4);
                for (size_t a = 0; a < 4; ++a) q2[a] = pperm[static_cast<size_t>(perm[a])];
                if (q2 == std::vector<int64_t>{0, 1, 2, 3}) {
                    k_in = tp->inputs[0];
                    need_t = false;
                } else {
                    perm = q2;
                    k_in = tp->inputs[0];
                }
                t_node = c.producer(kt);
            } else {
                k_in = kt;
            }
            Node fa;
            fa.name = g.nodes[static_cast<size_t>(pv)].name;
            fa.op_type = "FusedAttention";
            fa.opset = 17;
            fa.attrs.set_owner(fa.name);
            fa.attrs.set("scale", ref::Attr::of_float(scale));
            fa.attrs.set("causal", ref::Attr::of_int(causal ? 1 : 0));
            int k_val = k_in;
            if (need_t) {
                new_t.name = g.unique_name(fa.name + ".k_transpose");
                new_t.op_type = "Transpose";
                new_t.opset = 13;
                new_t.attrs.set_owner(new_t.name);
                new_t.attrs.set("perm", ref::Attr::of_ints(perm));
                new_t.inputs = {k_in};
                Value kv;
                kv.name = g.unique_name(fa.name + ".k");
                kv.elem = qv.elem;
                const Value& src = g.val(k_in);
                for (int64_t a : perm) kv.shape.push_back(src.shape[static_cast<size_t>(a)]);
                kv.has_shape = true;
                k_val = g.add_value(kv);
                new_t.outputs = {k_val};
                if (!pc.accepts(g, new_t)) continue;
            }
            fa.inputs = {q, k_val, v};
            if (mask >= 0) fa.inputs.push_back(mask);
            fa.outputs = {out};
            for (int k : nodes) fa.fused.push_back(g.nodes[static_cast<size_t>(k)].name);
            if (need_t) {
                // Probe against the shapes the transpose will produce.
                if (!pc.accepts(g, fa)) continue;
                g.nodes.push_back(new_t);
            } else if (!pc.accepts(g, fa)) {
                continue;
            }
            if (t_node >= 0) nodes.insert(t_node);
            g.nodes.push_back(fa);
            remove_nodes(g, nodes);
            ++r.changes;
            ++r.patterns[std::string("FusedAttention") + (causal ? " (causal)" : "") +
                         (mask >= 0 ? " (mask)" : "")];
            again = true;
        }
    }
}

}  // namespace sfumato::graph
