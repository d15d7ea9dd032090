// Pass helpers, constant folding and dead-node / Identity / Dropout removal.
#include <map>

#include "runtime/graph/infer.h"
#include "runtime/graph/passes.h"
#include "runtime/ref/ref_ops.h"

namespace sfumato::graph {

ops::NodeDesc node_desc(const Graph& g, const Node& n) {
    ops::NodeDesc d;
    d.name = n.name;
    d.op_type = n.op_type;
    d.opset = n.opset;
    d.attrs = n.attrs;
    d.num_outputs = static_cast<int>(n.outputs.size());
    for (int v : n.inputs) {
        if (v < 0) {
            ops::TensorRef r;
            r.present = false;
            d.inputs.push_back(r);
            d.constants.push_back(nullptr);
            continue;
        }
        const Value& val = g.val(v);
        d.inputs.push_back(ops::make_tensor(concrete(val.shape, node_label(n)), val.elem));
        d.constants.push_back(val.constant && val.constant->numel() <= (1u << 16) ? val.constant->host()
                                                                                  : nullptr);
    }
    return d;
}

bool probe(const Graph& g, const Node& n, const DeviceInfo& dev) {
    try {
        auto op = ops::make_node_op(node_desc(g, n), dev);
        return op != nullptr;
    } catch (const InputError&) {
        return false;
    }
}

bool PassContext::accepts(const Graph& g, const Node& n) const {
    return accept ? accept(g, n) : probe(g, n, dev);
}

int sole_consumer(const Graph& g, const std::vector<std::vector<int>>& cons, int v) {
    if (v < 0 || g.val(v).graph_output) return -1;
    const auto& c = cons[static_cast<size_t>(v)];
    if (c.size() != 1) return -1;
    return c[0];
}

void replace_uses(Graph& g, int from, int to) {
    for (Node& n : g.nodes)
        for (int& v : n.inputs)
            if (v == from) v = to;
}

int add_constant(Graph& g, const std::string& name, ref::HostTensor t) {
    Value v;
    v.name = g.unique_name(name);
    v.elem = t.type;
    v.shape = make_shape(t.shape);
    v.has_shape = true;
    if (t.numel() > (1u << 16))
        v.constant = std::make_shared<const ConstValue>(raw_from_host(t));
    else
        v.constant = std::make_shared<const ConstValue>(std::move(t));
    return g.add_value(std::move(v));
}

void pass_fold(Graph& g, const PassContext&, PassReport& r) {
    std::vector<bool> dead(g.nodes.size(), false);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
        const Node& n = g.nodes[i];
        bool inputs_const = true, outputs_const = !n.outputs.empty();
        for (int v : n.inputs)
            if (v >= 0 && !g.val(v).constant) inputs_const = false;
        for (int o : n.outputs)
            if (o >= 0 && !g.val(o).constant) outputs_const = false;
        if (outputs_const) {  // shape arithmetic already evaluated by inference
            dead[i] = true;
            ++r.changes;
            ++r.patterns[n.op_type];
            continue;
        }
        if (!inputs_const || n.inputs.empty() || !ref::find_ref(n.op_type)) continue;
        std::vector<ref::HostTensor> out = eval_constant_node(g, n);
        for (size_t o = 0; o < n.outputs.size() && o < out.size(); ++o) {
            if (n.outputs[o] < 0) continue;
            Value& v = g.val(n.outputs[o]);
            if (out[o].numel() > (1u << 16))
                v.constant = std::make_shared<const ConstValue>(raw_from_host(out[o]));
            else
                v.constant = std::make_shared<const ConstValue>(std::move(out[o]));
        }
        dead[i] = true;
        ++r.changes;
        ++r.patterns[n.op_type];
        r.notes.push_back("folded " + node_label(n));
    }
    g.erase_nodes(dead);
}

void pass_dce(Graph& g, const PassContext&, PassReport& r) {
    // Identity and inference Dropout forward their input.
    std::vector<bool> dead(g.nodes.size(), false);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
        Node& n = g.nodes[i];
        const bool passthrough = n.op_type == "Identity" || n.op_type == "Dropout";
        if (!passthrough || n.inputs.empty() || n.inputs[0] < 0 || n.outputs.empty() || n.outputs[0] < 0)
            continue;
        if (n.op_type == "Dropout") {
            if (n.outputs.size() > 1 && n.outputs[1] >= 0) continue;  // mask used
            if (n.inputs.size() > 2 && n.inputs[2] >= 0) {
                const Value& tm = g.val(n.inputs[2]);
                if (!tm.constant || tm.constant->host()->data.at(0) != 0) continue;  // training mode
            }
        }
        const int in = n.inputs[0], out = n.outputs[0];
        Value& vo = g.val(out);
        Value& vi = g.val(in);
        if (vo.graph_output) {
            // Keep the output's name: the input value takes it, unless it is itself
            // visible.
            if (vi.graph_input || vi.graph_output || vi.constant) continue;
            const std::string name = vo.name;
            vo.name = g.unique_name(name + "_removed");
            vi.name = name;
            vi.graph_output = true;
            vo.graph_output = false;
            for (int& o : g.outputs)
                if (o == out) o = in;
        }
        replace_uses(g, out, in);
        dead[i] = true;
        ++r.changes;
        ++r.patterns[n.op_type];
    }
    g.erase_nodes(dead);
    // Nodes nobody reads (repeat: removing one may orphan its producers).
    bool again = true;
    while (again) {
        again = false;
        const auto cons = g.consumers();
        std::vector<bool> d(g.nodes.size(), false);
        for (size_t i = 0; i < g.nodes.size(); ++i) {
            bool used = false;
            for (int o : g.nodes[i].outputs)
                if (o >= 0 && (g.val(o).graph_output || !cons[static_cast<size_t>(o)].empty())) used = true;
            if (!used) {
                d[i] = again = true;
                ++r.changes;
                ++r.patterns["dead " + g.nodes[i].op_type];
            }
        }
        if (again) g.erase_nodes(d);
    }
}

}  // namespace sfumato::graph
