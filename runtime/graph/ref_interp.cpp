// Host reference interpreter (see ref_interp.h).
#include "runtime/graph/ref_interp.h"

#include <memory>

#include "runtime/ref/ref_ops.h"
#include "sim/error.h"

namespace sfumato::graph {

std::vector<ref::HostTensor> run_reference(const Graph& g, const std::vector<ref::HostTensor>& inputs,
                                           const RefOptions& opt) {
    if (inputs.size() != g.inputs.size())
        throw InputError("reference run: " + std::to_string(inputs.size()) + " inputs given, the graph has " +
                         std::to_string(g.inputs.size()));
    std::vector<std::shared_ptr<const ref::HostTensor>> vals(g.values.size());
    for (size_t i = 0; i < g.inputs.size(); ++i) {
        vals[static_cast<size_t>(g.inputs[i])] = std::make_shared<const ref::HostTensor>(inputs[i]);
        if (opt.on_value) opt.on_value(g.val(g.inputs[i]).name, inputs[i]);
    }
    // Last use of every value, so intermediates can be dropped.
    std::vector<int> last_use(g.values.size(), -1);
    for (size_t i = 0; i < g.nodes.size(); ++i)
        for (int v : g.nodes[i].inputs)
            if (v >= 0) last_use[static_cast<size_t>(v)] = static_cast<int>(i);
    for (int v : g.outputs) last_use[static_cast<size_t>(v)] = static_cast<int>(g.nodes.size());

    for (size_t i = 0; i < g.nodes.size(); ++i) {
        const Node& n = g.nodes[i];
        // Nodes whose outputs are plan-time constants need not run.
        bool all_const = !n.outputs.empty();
        for (int o : n.outputs)
            if (o >= 0 && !g.val(o).constant) all_const = false;
        if (all_const) continue;
        std::vector<std::shared_ptr<const ref::HostTensor>> hold;
        std::vector<const ref::HostTensor*> ins;
        for (int v : n.inputs) {
            if (v < 0) {
                ins.push_back(nullptr);
                continue;
            }
            const Value& val = g.val(v);
            std::shared_ptr<const ref::HostTensor> t = vals[static_cast<size_t>(v)];
            if (!t && val.constant) t = val.constant->host();
            if (!t)
                throw InputError(node_label(n) + ": reference run has no value for input '" + val.name + "'");
            hold.push_back(t);
            ins.push_back(t.get());
        }
        ref::RefNode rn{n.name, n.op_type, n.opset, n.attrs, static_cast<int>(n.outputs.size())};
        std::vector<ref::HostTensor> out = ref::run_ref(rn, ins);
        if (out.size() < n.outputs.size()) {
            size_t needed = 0;
            for (size_t o = 0; o < n.outputs.size(); ++o)
                if (n.outputs[o] >= 0) needed = o + 1;
            if (out.size() < needed)
                throw InputError(node_label(n) + ": reference returned " + std::to_string(out.size()) +
                                 " outputs, " + std::to_string(needed) + " are used");
        }
        for (size_t o = 0; o < n.outputs.size(); ++o) {
            if (n.outputs[o] < 0) continue;
            ref::HostTensor& t = out[o];
            const Value& v = g.val(n.outputs[o]);
            if (v.elem != ref::ElemType::Undefined) t.type = v.elem;
            if (opt.round_intermediates || ref::is_integer(t.type)) ref::round_to_type(t);
            if (opt.on_value) opt.on_value(v.name, t);
            vals[static_cast<size_t>(n.outputs[o])] = std::make_shared<const ref::HostTensor>(std::move(t));
        }
        for (int v : n.inputs)
            if (v >= 0 && last_use[static_cast<size_t>(v)] == static_cast<int>(i))
                vals[static_cast<size_t>(v)].reset();
    }
    std::vector<ref::HostTensor> result;
    for (int o : g.outputs) {
        std::shared_ptr<const ref::HostTensor> t = vals[static_cast<size_t>(o)];
        if (!t && g.val(o).constant) t = g.val(o).constant->host();
        if (!t) throw InputError("reference run: graph output '" + g.val(o).name + "' was not computed");
        result.push_back(*t);
    }
    return result;
}

}  // namespace sfumato::graph
