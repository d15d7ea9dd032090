// fuse_conv: the cube ops' epilogues. In order, for every Conv, Gemm and
// MatMul:
//  1. Conv + BatchNormalization (constant statistics) -> Conv with rescaled
//  weights and bias;
//  2. + a constant bias Add -> the Conv's B / the Gemm's C; a MatMul on a 2-D
//  constant weight
//     with a bias becomes Gemm (on a [rows, K] view of A when A has more than
//     two dimensions, with a Reshape view back);
//  3. + an activation (Relu, LeakyRelu, Sigmoid, Tanh, Gelu, Clip, HardSigmoid,
//  HardSwish) ->
//     attribute `activation` (node_op.h).
// The spelled-out GELU of exporters (x * 0.5 * (1 + erf(x / sqrt 2)), and the
// tanh form) is first recognised as one Gelu node. Every step is probed: the
// fused node is kept only if its operator's factory accepts it; otherwise the
// graph stays as it was before that step.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "runtime/graph/passes.h"

namespace sfumato::graph {

namespace {

const ref::HostTensor* constant_of(const Graph& g, int v, std::shared_ptr<const ref::HostTensor>& hold) {
    if (v < 0 || !g.val(v).constant) return nullptr;
    hold = g.val(v).constant->host();
    return hold.get();
}

bool is_scalar_const(const Graph& g, int v, double want, double tol = 1e-6) {
    std::shared_ptr<const ref::HostTensor> h;
    const ref::HostTensor* t = constant_of(g, v, h);
    return t && t->data.size() == 1 && std::fabs(t->data[0] - want) <= tol * std::max(1.0, std::fabs(want));
}

// The other input of a binary node that reads `v`, or -1.
int other_input(const Node& n, int v) {
    if (n.inputs.size() != 2) return -1;
    if (n.inputs[0] == v) return n.inputs[1];
    if (n.inputs[1] == v) return n.inputs[0];
    return -1;
}

class Fuser {
public:
    Fuser(Graph& g, const PassContext& c, PassReport& r) : m_g(g), m_c(c), m_r(r) {}

    void run() {
        recognise_gelu();
        for (size_t i = 0; i < m_g.nodes.size(); ++i) {
            // A copy: folding and fusing below add nodes, which moves the node list.
            const std::string op = m_g.nodes[i].op_type;
            if (op == "BatchNormTraining" && m_c.opt.training && fuse_bn_relu(i)) {
                ++m_r.changes;
                ++m_r.patterns["BatchNormTraining+Relu"];
                continue;
            }
            if (op == "Add" && m_c.opt.training && fuse_add_relu(i)) {
                ++m_r.changes;
                ++m_r.patterns["Add+Relu"];
                continue;
            }
            if (op != "Conv" && op != "Gemm" && op != "MatMul") continue;
            if (!ref::is_float(elem_of(m_g.nodes[i].outputs[0]))) continue;
            std::string pattern = op;
            if (op == "Conv" && fold_bn(i)) pattern += "+BatchNormalization";
            if (fuse_bias(i)) pattern += "+Add";
            const std::string act = fuse_activation(i);
            if (!act.empty()) pattern += "+" + act;
            if (pattern != op) {
                ++m_r.changes;
                ++m_r.patterns[pattern];
            }
        }
        sweep();
    }

private:
    ref::ElemType elem_of(int v) const { return v < 0 ? ref::ElemType::Undefined : m_g.val(v).elem; }

    // The single consumer of node i's output 0, or -1.
    int next(size_t i) {
        const auto cons = m_g.consumers();
        return sole_consumer(m_g, cons, m_g.nodes[i].outputs[0]);
    }

    // Node i takes over node j's output (j is dropped at the end).
    void absorb(size_t i, size_t j) {
        Node& a = m_g.nodes[i];
        Node& b = m_g.nodes[j];
        if (a.fused.empty()) a.fused.push_back(a.name);
        a.fused.push_back(b.name);
        a.outputs[0] = b.outputs[0];
        m_dead.push_back(j);
        b.inputs.clear();
        b.outputs.assign(b.outputs.size(), -1);
        b.op_type = "";
        m_g.rebuild_producers();
    }

    bool try_node(size_t i, const Node& candidate, size_t absorbed) {
        if (!m_c.accepts(m_g, candidate)) return false;
        m_g.nodes[i] = candidate;
        absorb(i, absorbed);
        return true;
    }

    // Training: a BatchNormTraining whose Y only a Relu reads applies the ReLU in its own
    // kernel (attribute relu = 1; the backward puts ReluGrad before the BatchNorm's).
    bool fuse_bn_relu(size_t i) {
        const int j = next(i);
        if (j < 0 || m_g.nodes[static_cast<size_t>(j)].op_type != "Relu") return false;
        Node fused = m_g.nodes[i];
        fused.attrs.set("relu", ref::Attr::of_int(1));
        return try_node(i, fused, static_cast<size_t>(j));
    }

    // Training: an Add of two operands of its output's shape (a residual sum) whose result only
    // a Relu reads becomes the chain Add, Relu: one pass writes the block's output (the backward
    // takes ReluGrad of it to both operands).
    bool fuse_add_relu(size_t i) {
        const int j = next(i);
        if (j < 0 || m_g.nodes[static_cast<size_t>(j)].op_type != "Relu") return false;
        const Node& add = m_g.nodes[i];
        if (add.inputs.size() != 2 || add.inputs[0] < 0 || add.inputs[1] < 0) return false;
        const Value& y = m_g.val(add.outputs[0]);
        if (!ref::is_float(y.elem)) return false;
        for (int v : add.inputs)
            if (m_g.val(v).constant || !(m_g.val(v).shape == y.shape) || m_g.val(v).elem != y.elem) return false;
        Node fused = add;
        fused.op_type = "ElementwiseChain";
        fused.domain.clear();
        fused.opset = 17;
        fused.attrs = ref::Attrs();
        fused.attrs.set_owner(fused.name);
        ref::Attr prog;
        prog.kind = ref::Attr::Kind::Strings;
        prog.strings = {"Add", "Relu"};
        fused.attrs.set("program", prog);
        return try_node(i, fused, static_cast<size_t>(j));
    }

    bool fold_bn(size_t i) {
        const int j = next(i);
        if (j < 0 || m_g.nodes[static_cast<size_t>(j)].op_type != "BatchNormalization") return false;
        const Node& bn = m_g.nodes[static_cast<size_t>(j)];
        const Node& conv = m_g.nodes[i];
        if (conv.inputs.size() < 2 || bn.inputs.size() < 5) return false;
        const Value& wv = m_g.val(conv.inputs[1]);
        const bool has_b = conv.inputs.size() > 2 && conv.inputs[2] >= 0;
        if (!wv.constant || (has_b && !m_g.val(conv.inputs[2]).constant)) return false;
        for (size_t k = 1; k < 5; ++k)
            if (bn.inputs[k] < 0 || !m_g.val(bn.inputs[k]).constant) return false;
        // Statistics as doubles; the weights scaled when their values are first asked for (as
        // floats, the fast path for large ones): a timing-mode run never asks.
        const auto s = m_g.val(bn.inputs[1]).constant->host(), bb = m_g.val(bn.inputs[2]).constant->host();
        const auto mean = m_g.val(bn.inputs[3]).constant->host(),
                   var = m_g.val(bn.inputs[4]).constant->host();
        const auto b = has_b ? m_g.val(conv.inputs[2]).constant->host() : nullptr;
        const double eps = bn.attrs.get_float("epsilon", 1e-5);
        const std::vector<int64_t>& wshape = wv.constant->shape();
        if (wshape.empty()) return false;
        const size_t m = static_cast<size_t>(wshape[0]);
        if (m == 0 || s->data.size() != m || bb->data.size() != m || mean->data.size() != m || var->data.size() != m)
            return false;
        check_float_type(wv.elem);
        auto ks = std::make_shared<std::vector<double>>(m);
        ref::HostTensor nb(wv.elem, {static_cast<int64_t>(m)});
        for (size_t c = 0; c < m; ++c) {
            const double k = s->data[c] / std::sqrt(var->data[c] + eps);
            (*ks)[c] = k;
            nb.data[c] = ((b ? b->data[c] : 0.0) - mean->data[c]) * k + bb->data[c];
        }
        ref::round_to_type(nb);
        Value nw;
        nw.name = m_g.unique_name(conv.name + ".folded_weight");
        nw.elem = wv.elem;
        nw.shape = wv.shape;
        nw.has_shape = true;
        nw.constant = std::make_shared<const ConstValue>(
            wv.elem, wshape, [src = wv.constant, ks, elem = wv.elem]() {
                std::vector<float> w = src->floats();
                const size_t per = w.size() / ks->size();
                for (size_t c = 0; c < ks->size(); ++c)
                    for (size_t e = 0; e < per; ++e) w[c * per + e] = static_cast<float>(w[c * per + e] * (*ks)[c]);
                return raw_from_floats(w, src->shape(), elem);
            });
        Node fused = conv;
        fused.inputs.resize(3);
        fused.inputs[1] = m_g.add_value(std::move(nw));
        fused.inputs[2] = add_constant(m_g, conv.name + ".folded_bias", std::move(nb));
        return try_node(i, fused, static_cast<size_t>(j));
    }

    bool fuse_bias(size_t i) {
        const int j = next(i);
        if (j < 0 || m_g.nodes[static_cast<size_t>(j)].op_type != "Add") return false;
        const Node& add = m_g.nodes[static_cast<size_t>(j)];
        const Node& n = m_g.nodes[i];
        const int cv = other_input(add, n.outputs[0]);
        std::shared_ptr<const ref::HostTensor> hc, hb;
        const ref::HostTensor* c = constant_of(m_g, cv, hc);
        if (!c || c->type != elem_of(n.outputs[0])) return false;
        const Value& out = m_g.val(n.outputs[0]);
        const std::vector<int64_t> os = concrete(out.shape, node_label(n));
        if (n.op_type == "Conv") {
            // A per-channel constant: [M], [M,1,1], [1,M,1,1] ...
            const int64_t mch = os[1];
            int64_t size = 1;
            for (int64_t d : c->shape) size *= d;
            if (size != mch) return false;
            if (c->shape.size() > os.size()) return false;
            for (size_t k = 0; k < c->shape.size(); ++k) {
                const size_t od = os.size() - c->shape.size() + k;
                if (c->shape[k] != 1 && od != 1) return false;
            }
            const ref::HostTensor* b = n.inputs.size() > 2 ? constant_of(m_g, n.inputs[2], hb) : nullptr;
            if (n.inputs.size() > 2 && n.inputs[2] >= 0 && !b) return false;
            ref::HostTensor nb(c->type, {mch});
            for (int64_t k = 0; k < mch; ++k)
                nb.data[static_cast<size_t>(k)] =
                    c->data[static_cast<size_t>(k)] + (b ? b->data[static_cast<size_t>(k)] : 0.0);
            ref::round_to_type(nb);
            Node fused = n;
            fused.inputs.resize(3);
            fused.inputs[2] = add_constant(m_g, n.name + ".bias", std::move(nb));
            return try_node(i, fused, static_cast<size_t>(j));
        }
        if (n.op_type == "Gemm") {
            // alpha*A*B + beta*C + c = alpha*A*B + 1*(beta*C + c)
            const int64_t cols = os[1];
            if (!(c->shape == std::vector<int64_t>{cols} || c->shape == std::vector<int64_t>{1, cols}))
                return false;
            const ref::HostTensor* b = n.inputs.size() > 2 ? constant_of(m_g, n.inputs[2], hb) : nullptr;
            if (n.inputs.size() > 2 && n.inputs[2] >= 0 &&
                (!b || b->data.size() != static_cast<size_t>(cols)))
                return false;
            const double beta = n.attrs.get_float("beta", 1.0);
            ref::HostTensor nb(c->type, {cols});
            for (size_t k = 0; k < nb.data.size(); ++k)
                nb.data[k] = c->data[k] + (b ? beta * b->data[k] : 0.0);
            ref::round_to_type(nb);
            Node fused = n;
            fused.inputs.resize(3);
            fused.inputs[2] = add_constant(m_g, n.name + ".bias", std::move(nb));
            fused.attrs.set("beta", ref::Attr::of_float(1.0));
            return try_node(i, fused, static_cast<size_t>(j));
        }
        // MatMul(A, W[K, N]) + c[N] -> Gemm on a 2-D view of A.
        const Value& wv = m_g.val(n.inputs[1]);
        if (!wv.constant) return false;
        const std::vector<int64_t> wshape = wv.constant->shape();
        if (wshape.size() != 2 || !(c->shape == std::vector<int64_t>{wshape[1]})) return false;
        const Value& a = m_g.val(n.inputs[0]);
        const std::vector<int64_t> as = concrete(a.shape, node_label(n));
        if (as.size() < 2) return false;
        const int64_t k = as.back(), cols = wshape[1];
        int64_t rows = 1;
        for (size_t d = 0; d + 1 < as.size(); ++d) rows *= as[d];
        Node gemm;
        gemm.name = n.name;
        gemm.op_type = "Gemm";
        gemm.opset = std::max(n.opset, 13);
        gemm.attrs.set_owner(n.name);
        gemm.inputs = {n.inputs[0], n.inputs[1], cv};
        gemm.outputs = n.outputs;
        if (as.size() == 2) return try_node(i, gemm, static_cast<size_t>(j));
        // Probe the Gemm on the 2-D shapes first.
        Value a2;
        a2.name = m_g.unique_name(n.name + ".rows");
        a2.elem = a.elem;
        a2.shape = make_shape({rows, k});
        a2.has_shape = true;
        const int a2id = m_g.add_value(a2);
        Value y2 = a2;
        y2.name = m_g.unique_name(n.name + ".gemm_out");
        y2.shape = make_shape({rows, cols});
        const int y2id = m_g.add_value(y2);
        gemm.inputs[0] = a2id;
        gemm.outputs = {y2id};
        if (!m_c.accepts(m_g, gemm)) return false;
        Node r1, r2;
        r1.name = m_g.unique_name(n.name + ".reshape_in");
        r1.op_type = "Reshape";
        r1.opset = 14;
        r1.attrs.set_owner(r1.name);
        ref::HostTensor s1(ref::ElemType::Int64, {2});
        s1.data = {static_cast<double>(rows), static_cast<double>(k)};
        r1.inputs = {n.inputs[0], add_constant(m_g, r1.name + ".shape", s1)};
        r1.outputs = {a2id};
        r2 = r1;
        r2.name = m_g.unique_name(n.name + ".reshape_out");
        r2.attrs.set_owner(r2.name);
        ref::HostTensor s2(ref::ElemType::Int64, {static_cast<int64_t>(as.size())});
        for (size_t d = 0; d + 1 < as.size(); ++d) s2.data[d] = static_cast<double>(as[d]);
        s2.data.back() = static_cast<double>(cols);
        r2.inputs = {y2id, add_constant(m_g, r2.name + ".shape", s2)};
        r2.outputs = {m_g.nodes[static_cast<size_t>(j)].outputs[0]};
        if (!m_c.accepts(m_g, r1) || !m_c.accepts(m_g, r2)) return false;
        gemm.fused = {n.name, m_g.nodes[static_cast<size_t>(j)].name};
        // The MatMul becomes the Gemm, the Add the reshape back; the reshape in is
        // appended (order is restored by the sweep's topological sort).
        m_g.nodes[i] = gemm;
        m_g.nodes[static_cast<size_t>(j)] = r2;
        m_g.nodes.push_back(r1);
        m_g.rebuild_producers();
        m_reshape_out[i] = static_cast<size_t>(j);
        return true;
    }

    std::string fuse_activation(size_t i) {
        // A Gemm made from a MatMul on a view: the activation commutes with the
        // reshape back.
        auto ro = m_reshape_out.find(i);
        const int j = ro == m_reshape_out.end() ? next(i) : next(ro->second);
        if (j < 0) return "";
        const Node& a = m_g.nodes[static_cast<size_t>(j)];
        static const std::set<std::string> acts = {"Relu", "LeakyRelu", "Sigmoid",     "Tanh",
                                                   "Gelu", "Clip",      "HardSigmoid", "HardSwish"};
        if (!acts.count(a.op_type)) return "";
        if (m_c.opt.training && a.op_type != "Relu" && a.op_type != "Clip") return "";
        Node fused = m_g.nodes[i];
        fused.attrs.set("activation", ref::Attr::of_string(a.op_type));
        if (a.op_type == "LeakyRelu")
            fused.attrs.set("activation_alpha", ref::Attr::of_float(a.attrs.get_float("alpha", 0.01)));
        if (a.op_type == "HardSigmoid") {
            fused.attrs.set("activation_alpha", ref::Attr::of_float(a.attrs.get_float("alpha", 0.2)));
            fused.attrs.set("activation_beta", ref::Attr::of_float(a.attrs.get_float("beta", 0.5)));
        }
        if (a.op_type == "Gelu" && a.attrs.get_string("approximate", "none") != "none") return "";
        if (a.op_type == "Clip") {
            std::shared_ptr<const ref::HostTensor> lo, hi;
            const ref::HostTensor* l = a.inputs.size() > 1 ? constant_of(m_g, a.inputs[1], lo) : nullptr;
            const ref::HostTensor* h = a.inputs.size() > 2 ? constant_of(m_g, a.inputs[2], hi) : nullptr;
            if ((a.inputs.size() > 1 && a.inputs[1] >= 0 && !l) ||
                (a.inputs.size() > 2 && a.inputs[2] >= 0 && !h))
                return "";
            fused.attrs.set("activation_alpha", ref::Attr::of_float(l ? l->data.at(0) : -INFINITY));
            fused.attrs.set("activation_beta", ref::Attr::of_float(h ? h->data.at(0) : INFINITY));
        }
        const std::string act_type = a.op_type;  // `a` is cleared when absorbed
        if (ro == m_reshape_out.end()) return try_node(i, fused, static_cast<size_t>(j)) ? act_type : "";
        if (!m_c.accepts(m_g, fused)) return "";
        const int act_out = a.outputs[0];
        fused.fused.push_back(a.name);
        m_g.nodes[i] = fused;
        Node& r2 = m_g.nodes[ro->second];
        Node& act = m_g.nodes[static_cast<size_t>(j)];
        act.op_type = "";
        act.inputs.clear();
        act.outputs.assign(act.outputs.size(), -1);
        r2.outputs[0] = act_out;
        m_g.rebuild_producers();
        return act_type;
    }

    // x * 0.5 * (1 + erf(x / sqrt2)) in any order of the outer products, and the
    // tanh form, as Gelu.
    void recognise_gelu() {
        auto cons = m_g.consumers();
        for (size_t i = 0; i < m_g.nodes.size(); ++i) {
            const Node& erf = m_g.nodes[i];
            if (erf.op_type != "Erf" && erf.op_type != "Tanh") continue;
            const bool tanh = erf.op_type == "Tanh";
            if (erf.inputs.empty() || erf.inputs[0] < 0) continue;
            // Walk back to x.
            std::vector<size_t> nodes{i};
            int p = m_g.val(erf.inputs[0]).producer;
            if (p < 0) continue;
            int x = -1;
            if (!tanh) {
                const Node& div = m_g.nodes[static_cast<size_t>(p)];
                // 4e-3: the constant as fp16 or bf16 storage holds it (sqrt 2 is 1.4140625 in fp16, sqrt(2/pi)
                // 0.796875 in bf16: within half a bf16 ulp, 2^-9).
                if (div.op_type == "Div" && is_scalar_const(m_g, div.inputs[1], std::sqrt(2.0), 4e-3))
                    x = div.inputs[0];
                else if (div.op_type == "Mul" &&
                         is_scalar_const(m_g, div.inputs[1], 1 / std::sqrt(2.0), 4e-3))
                    x = div.inputs[0];
                else
                    continue;
                nodes.push_back(static_cast<size_t>(p));
            } else {
                // tanh(k * (x + c * x^3))
                const Node& mk = m_g.nodes[static_cast<size_t>(p)];
                if (mk.op_type != "Mul" || !is_scalar_const(m_g, mk.inputs[1], std::sqrt(2.0 / M_PI), 4e-3))
                    continue;
                const int pa = m_g.val(mk.inputs[0]).producer;
                if (pa < 0 || m_g.nodes[static_cast<size_t>(pa)].op_type != "Add") continue;
                const Node& add = m_g.nodes[static_cast<size_t>(pa)];
                const int pc = m_g.val(add.inputs[1]).producer;
                if (pc < 0 || m_g.nodes[static_cast<size_t>(pc)].op_type != "Mul") continue;
                const Node& mc = m_g.nodes[static_cast<size_t>(pc)];
                if (!is_scalar_const(m_g, mc.inputs[1], 0.044715, 1e-3)) continue;
                const int pp = m_g.val(mc.inputs[0]).producer;
                if (pp < 0 || m_g.nodes[static_cast<size_t>(pp)].op_type != "Pow") continue;
                const Node& pw = m_g.nodes[static_cast<size_t>(pp)];
                if (!is_scalar_const(m_g, pw.inputs[1], 3.0) || pw.inputs[0] != add.inputs[0]) continue;
                x = add.inputs[0];
                for (int q : {p, pa, pc, pp}) nodes.push_back(static_cast<size_t>(q));
            }
            // Forward: Add 1, then two Muls with x and 0.5 (either order; 0.5*x may
            // be computed first).
            const int a1 = sole_consumer(m_g, cons, erf.outputs[0]);
            if (a1 < 0 || m_g.nodes[static_cast<size_t>(a1)].op_type != "Add" ||
                !is_scalar_const(m_g, other_input(m_g.nodes[static_cast<size_t>(a1)], erf.outputs[0]), 1.0))
                continue;
            nodes.push_back(static_cast<size_t>(a1));
            const int m1 = sole_consumer(m_g, cons, m_g.nodes[static_cast<size_t>(a1)].outputs[0]);
            if (m1 < 0 || m_g.nodes[static_cast<size_t>(m1)].op_type != "Mul") continue;
            const int m1_other = other_input(m_g.nodes[static_cast<size_t>(m1)],
                                             m_g.nodes[static_cast<size_t>(a1)].outputs[0]);
            int out = -1;
            if (m1_other == x) {  // x * (1 + erf) then * 0.5
                const int m2 = sole_consumer(m_g, cons, m_g.nodes[static_cast<size_t>(m1)].outputs[0]);
                if (m2 < 0 || m_g.nodes[static_cast<size_t>(m2)].op_type != "Mul" ||
                    !is_scalar_const(m_g,
                                     other_input(m_g.nodes[static_cast<size_t>(m2)],
                                                 m_g.nodes[static_cast<size_t>(m1)].outputs[0]),
                                     0.5))
                    continue;
                nodes.push_back(static_cast<size_t>(m1));
                nodes.push_back(static_cast<size_t>(m2));
                out = m_g.nodes[static_cast<size_t>(m2)].outputs[0];
            } else {  // (0.5 * x) * (1 + erf)
                const int ph = m1_other >= 0 ? m_g.val(m1_other).producer : -1;
                if (ph < 0) continue;
                const Node& half = m_g.nodes[static_cast<size_t>(ph)];
                if (half.op_type != "Mul" || other_input(half, x) < 0 ||
                    !is_scalar_const(m_g, other_input(half, x), 0.5))
                    continue;
                if (sole_consumer(m_g, cons, half.outputs[0]) != m1) continue;
                nodes.push_back(static_cast<size_t>(ph));
                nodes.push_back(static_cast<size_t>(m1));
                out = m_g.nodes[static_cast<size_t>(m1)].outputs[0];
            }
            // Every intermediate must feed only the pattern.
            bool closed = true;
            for (size_t k : nodes) {
                const int o = m_g.nodes[k].outputs[0];
                if (o == out) continue;
                for (int c : cons[static_cast<size_t>(o)])
                    if (std::find(nodes.begin(), nodes.end(), static_cast<size_t>(c)) == nodes.end())
                        closed = false;
                if (m_g.val(o).graph_output) closed = false;
            }
            if (!closed) continue;
            Node gelu;
            gelu.name = m_g.nodes[i].name;
            gelu.op_type = "Gelu";
            gelu.opset = 17;
            gelu.attrs.set_owner(gelu.name);
            if (tanh) gelu.attrs.set("approximate", ref::Attr::of_string("tanh"));
            gelu.inputs = {x};
            gelu.outputs = {out};
            for (size_t k : nodes) gelu.fused.push_back(m_g.nodes[k].name);
            if (!m_c.accepts(m_g, gelu)) continue;
            for (size_t k : nodes) {
                m_g.nodes[k].op_type = "";
                m_g.nodes[k].inputs.clear();
                m_g.nodes[k].outputs.assign(1, -1);
            }
            m_g.nodes.push_back(gelu);
            ++m_r.changes;
            ++m_r.patterns[tanh ? "Gelu(tanh) from 8 ops" : "Gelu(erf) from 5 ops"];
            drop_empty();
            cons = m_g.consumers();
            i = static_cast<size_t>(-1);  // indices moved: start over
        }
    }

    void drop_empty() {
        std::vector<bool> dead(m_g.nodes.size(), false);
        for (size_t k = 0; k < m_g.nodes.size(); ++k) dead[k] = m_g.nodes[k].op_type.empty();
        m_g.erase_nodes(dead);
        m_g.topo_sort();
    }

    void sweep() {
        drop_empty();
        m_dead.clear();
    }

    Graph& m_g;
    const PassContext& m_c;
    PassReport& m_r;
    std::vector<size_t> m_dead;
    std::map<size_t, size_t> m_reshape_out;  // Gemm made from a MatMul -> its reshape-back node
};

}  // namespace

void pass_fuse_conv(Graph& g, const PassContext& c, PassReport& r) { Fuser(g, c, r).run(); }

}  // namespace sfumato::graph
