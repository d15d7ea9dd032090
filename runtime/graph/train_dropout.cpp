// Dropout in a training step (train.h): a Dropout that trains becomes Mul(x, mask) with the mask a
// graph input of x's shape, which the step's data fills per rank from a seeded generator
// (TrainSetup::make_data: each element ratio-Bernoulli 0, else 1 / (1 - ratio)). The forward
// multiplies by it and the backward's Mul gives dy times the same mask (an input: no gradient
// of its own), so both see one mask.
#include "runtime/graph/infer.h"
#include "runtime/graph/train.h"
#include "sim/error.h"

namespace sfumato::graph {

namespace {

// The ratio of a Dropout (opset 12 on: input 1, a constant, default 0.5; before: attribute).
double dropout_ratio(const Graph& g, const Node& n) {
    if (n.opset < 12) return n.attrs.get_float("ratio", 0.5);
    if (n.inputs.size() < 2 || n.inputs[1] < 0) return 0.5;
    const Value& r = g.val(n.inputs[1]);
    if (!r.constant) throw InputError("train-step: Dropout '" + n.name + "': a ratio that is not a plan-time constant");
    return r.constant->host()->data.at(0);
}

// Whether the Dropout's training_mode input (opset 12 on) is a constant true.
bool training_mode(const Graph& g, const Node& n) {
    if (n.opset < 12 || n.inputs.size() < 3 || n.inputs[2] < 0) return false;
    const Value& t = g.val(n.inputs[2]);
    if (!t.constant)
        throw InputError("train-step: Dropout '" + n.name + "': a training_mode that is not a plan-time constant");
    return t.constant->host()->data.at(0) != 0;
}

}  // namespace

int train_dropout(Graph& g, bool all, std::map<std::string, double>& masks) {
    std::vector<size_t> train;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
        const Node& n = g.nodes[i];
        if (n.op_type != "Dropout" || !n.domain.empty()) continue;
        const double ratio = dropout_ratio(g, n);
        if (!(ratio >= 0 && ratio < 1))
            throw InputError("train-step: Dropout '" + n.name + "': ratio " + std::to_string(ratio) + " is not in [0, 1)");
        if ((all || training_mode(g, n)) && ratio > 0) train.push_back(i);
    }
    if (train.empty()) return 0;
    infer_shapes(g);  // x's shape (symbolic dims kept) is the mask input's
    for (size_t i : train) {
        Node& n = g.nodes[i];
        if (n.outputs.size() > 1 && n.outputs[1] >= 0) {
            bool read = false;
            for (const Node& m : g.nodes)
                for (int v : m.inputs) read = read || v == n.outputs[1];
            for (int o : g.outputs) read = read || o == n.outputs[1];
            if (read) throw InputError("train-step: Dropout '" + n.name + "': its mask output is read (not modelled)");
        }
        const Value& x = g.val(n.inputs.at(0));
        if (!x.has_shape || !ref::is_float(x.elem))
            throw InputError("train-step: Dropout '" + n.name + "': its input has no known shape or is not float");
        Value m;
        m.name = g.unique_name(n.name + "/dropout_mask");
        m.elem = x.elem;
        m.shape = x.shape;
        m.has_shape = true;
        m.graph_input = true;
        const std::string name = m.name;
        const int id = g.add_value(std::move(m));
        g.inputs.push_back(id);
        masks[name] = dropout_ratio(g, n);
        n.op_type = "Mul";
        n.opset = 14;
        n.inputs = {n.inputs[0], id};
        n.outputs.resize(1);
        ref::Attrs a;
        a.set_owner(n.name);
        n.attrs = std::move(a);
    }
    g.rebuild_producers();
    return static_cast<int>(train.size());
}

}  // namespace sfumato::graph
