// fuse_elementwise: maximal chains of elementwise ops become one
// ElementwiseChain node (one vector kernel: the intermediates never leave UB).
// A chain starts at an elementwise node whose main operand already has the
// output's shape, and grows while its current value has exactly one reader that
// is elementwise, keeps the shape and the element type, and reads the value
// once. Binary steps take their other operand as the chain's next input
// (`swap=1` when the chain value is the right operand); constant bounds and
// attributes become step attributes (syntax in runtime/ref/ew_scalar.h). Chains
// of one node are left alone. Probed like every fusion.
#include <cmath>
#include <cstdio>
#include <set>

#include "runtime/graph/passes.h"

namespace sfumato::graph {

namespace {

const std::set<std::string>& unary_ops() {
    static const std::set<std::string> s = {"Relu",     "LeakyRelu", "Sigmoid",     "Tanh",      "Gelu",
                                            "Erf",      "Exp",       "Log",         "Sqrt",      "Reciprocal",
                                            "Neg",      "Abs",       "HardSigmoid", "HardSwish", "Elu",
                                            "Softplus", "Clip",      "Selu",        "Softsign"};
    return s;
}
const std::set<std::string>& binary_ops() {
    static const std::set<std::string> s = {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "PRelu"};
    return s;
}

std::string num(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.9g", v);
    return b;
}

struct Step {
    std::string text;
    int operand = -1;  // the binary step's other input
};

// The chain step of node n applied to chain value `acc`; false if n cannot be a
// step.
bool make_step(const Graph& g, const Node& n, int acc, Step& s) {
    const ref::Attrs& a = n.attrs;
    if (unary_ops().count(n.op_type)) {
        if (n.inputs.empty() || n.inputs[0] != acc) return false;
        s.text = n.op_type;
        if (n.op_type == "LeakyRelu") s.text += " alpha=" + num(a.get_float("alpha", 0.01));
        if (n.op_type == "Elu") s.text += " alpha=" + num(a.get_float("alpha", 1.0));
        if (n.op_type == "HardSigmoid")
            s.text += " alpha=" + num(a.get_float("alpha", 0.2)) + " beta=" + num(a.get_float("beta", 0.5));
        if (n.op_type == "Selu")
            s.text += " alpha=" + num(a.get_float("alpha", 1.67326319217681884765625)) +
                      " gamma=" + num(a.get_float("gamma", 1.05070102214813232421875));
        if (n.op_type == "Gelu" && a.get_string("approximate", "none") != "none")
            s.text += " approximate=" + a.get_string("approximate", "none");
        if (n.op_type == "Clip") {
            for (size_t i = 1; i < n.inputs.size(); ++i) {
                if (n.inputs[i] < 0) continue;
                const Value& b = g.val(n.inputs[i]);
                if (!b.constant) return false;
                s.text += std::string(i == 1 ? " min=" : " max=") + num(b.constant->host()->data.at(0));
            }
        }
        return true;
    }
    if (!binary_ops().count(n.op_type) || n.inputs.size() != 2) return false;
    if (n.inputs[0] == acc && n.inputs[1] == acc) return false;
    if (n.inputs[0] == acc) {
        s.operand = n.inputs[1];
        s.text = n.op_type;
    } else if (n.inputs[1] == acc) {
        if (n.op_type == "PRelu") return false;
        s.operand = n.inputs[0];
        s.text = n.op_type + " swap=1";
    } else {
        return false;
    }
    return true;
}

bool elementwise(const std::string& op) { return unary_ops().count(op) || binary_ops().count(op); }

}  // namespace

void pass_fuse_elementwise(Graph& g, const PassContext& pc, PassReport& r) {
    const auto cons = g.consumers();
    std::vector<bool> used(g.nodes.size(), false);
    std::vector<Node> chains;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
        const Node& n0 = g.nodes[i];
        if (used[i] || !elementwise(n0.op_type) || n0.outputs.size() != 1 || n0.outputs[0] < 0) continue;
        const Value& out0 = g.val(n0.outputs[0]);
        if (!ref::is_float(out0.elem) || !out0.has_shape) continue;
        // The chain value starts as an input of n0 that already has the output's
        // shape.
        int acc = -1;
        for (int v : n0.inputs)
            if (v >= 0 && !g.val(v).constant && g.val(v).shape == out0.shape && g.val(v).elem == out0.elem) {
                acc = v;
                break;
            }
        if (acc < 0) continue;
        std::vector<Step> steps;
        std::vector<size_t> members;
        std::vector<std::string> names;
        Step s;
        if (!make_step(g, n0, acc, s)) continue;
        steps.push_back(s);
        members.push_back(i);
        int cur = n0.outputs[0];
        while (true) {
            const int nx = sole_consumer(g, cons, cur);
            if (nx < 0 || used[static_cast<size_t>(nx)]) break;
            const Node& n = g.nodes[static_cast<size_t>(nx)];
            if (!elementwise(n.op_type) || n.outputs.size() != 1 || n.outputs[0] < 0) break;
            const Value& o = g.val(n.outputs[0]);
            if (!(o.shape == out0.shape) || o.elem != out0.elem) break;
            Step st;
            if (!make_step(g, n, cur, st)) break;
            if (st.operand >= 0 && g.val(st.operand).elem != out0.elem) break;
            steps.push_back(st);
            members.push_back(static_cast<size_t>(nx));
            cur = n.outputs[0];
        }
        if (steps.size() < 2) continue;
        Node chain;
        chain.name = g.nodes[members.back()].name;
        chain.op_type = "ElementwiseChain";
        chain.opset = 17;
        chain.attrs.set_owner(chain.name);
        ref::Attr prog;
        prog.kind = ref::Attr::Kind::Strings;
        chain.inputs = {acc};
        for (const Step& st : steps) {
            prog.strings.push_back(st.text);
            if (st.operand >= 0) chain.inputs.push_back(st.operand);
        }
        chain.attrs.set("program", prog);
        chain.outputs = {cur};
        for (size_t m : members) chain.fused.push_back(g.nodes[m].name);
        if (!pc.accepts(g, chain)) continue;
        for (size_t m : members) used[m] = true;
        std::string pat;
        for (size_t m : members) pat += (pat.empty() ? "" : "+") + g.nodes[m].op_type;
        ++r.patterns[pat];
        ++r.changes;
        chains.push_back(std::move(chain));
    }
    if (chains.empty()) return;
    std::vector<bool> dead = used;
    dead.resize(g.nodes.size(), false);
    for (Node& c : chains) g.nodes.push_back(std::move(c));
    dead.resize(g.nodes.size(), false);
    g.erase_nodes(dead);
    g.topo_sort();
}

}  // namespace sfumato::graph
