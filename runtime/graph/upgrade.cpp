// Opset < 11 -> opset 11 node rewrites (see upgrade.h).
#include "runtime/graph/upgrade.h"

#include <cmath>
#include <limits>
#include <set>

#include "sim/error.h"

namespace sfumato::graph {

namespace {

int add_const(Graph& g, const Node& n, const std::string& what, ref::HostTensor t) {
    Value v;
    v.name = g.unique_name(n.name + "_" + what);
    v.elem = t.type;
    v.shape = make_shape(t.shape);
    v.has_shape = true;
    v.constant = std::make_shared<const ConstValue>(std::move(t));
    return g.add_value(std::move(v));
}

ref::HostTensor ints_tensor(const std::vector<int64_t>& v) {
    ref::HostTensor t(ref::ElemType::Int64, {static_cast<int64_t>(v.size())});
    for (size_t i = 0; i < v.size(); ++i) t.data[i] = static_cast<double>(v[i]);
    return t;
}

ref::HostTensor scalar(ref::ElemType type, double v) {
    ref::HostTensor t(type, {});
    t.data[0] = v;
    ref::round_to_type(t);
    return t;
}

void erase_attr(Node& n, const char* name) {
    if (!n.attrs.has(name)) return;
    ref::Attrs a(n.attrs.owner());
    for (const auto& [k, v] : n.attrs.all())
        if (k != name) a.set(k, v);
    n.attrs = std::move(a);
}

ref::ElemType input_elem(const Graph& g, const Node& n, size_t i) {
    return i < n.inputs.size() && n.inputs[i] >= 0 ? g.val(n.inputs[i]).elem : ref::ElemType::Float;
}

// Legacy broadcasting: B aligned to A at `axis` becomes numpy-style by giving B
// trailing 1s.
size_t legacy_broadcast(Graph& g, size_t i) {
    Node& n = g.nodes[i];
    const bool bc = n.attrs.get_int("broadcast", 0) != 0;
    const bool has_axis = n.attrs.has("axis");
    const int64_t axis = n.attrs.get_int("axis", 0);
    erase_attr(n, "broadcast");
    erase_attr(n, "axis");
    if (!bc || !has_axis || n.inputs.size() < 2 || n.inputs[1] < 0) return 0;
    const Value& a = g.val(n.inputs[0]);
    const Value& b = g.val(n.inputs[1]);
    if (!a.has_shape || !b.has_shape)
        throw InputError(node_label(n) + ": legacy broadcasting needs known input ranks");
    const int64_t ra = static_cast<int64_t>(a.shape.size()), rb = static_cast<int64_t>(b.shape.size());
    const int64_t ax = axis < 0 ? axis + ra : axis;
    const int64_t trailing = ra - ax - rb;
    if (ax < 0 || trailing < 0)
        throw InputError(node_label(n) + ": broadcast axis " + std::to_string(axis) + " does not fit");
    if (trailing == 0) return 0;
    std::vector<int64_t> new_axes;
    for (int64_t k = 0; k < trailing; ++k) new_axes.push_back(rb + k);
    if (b.constant) {
        ref::HostTensor t = *b.constant->host();
        for (int64_t k = 0; k < trailing; ++k) t.shape.push_back(1);
        n.inputs[1] = add_const(g, n, "B", std::move(t));
        return 0;
    }
    Node u;
    u.name = g.unique_name(n.name + "_bcast");
    u.op_type = "Unsqueeze";
    u.opset = 11;
    u.attrs.set_owner(u.name);
    u.attrs.set("axes", ref::Attr::of_ints(new_axes));
    u.inputs = {n.inputs[1]};
    Value out;
    out.name = g.unique_name(u.name + "_out");
    const int id = g.add_value(std::move(out));
    u.outputs = {id};
    g.nodes[i].inputs[1] = id;
    g.nodes.insert(g.nodes.begin() + static_cast<long>(i), std::move(u));
    return 1;
}

}  // namespace

size_t upgrade_node(Graph& g, size_t i) {
    Node& n = g.nodes[i];
    const int old = n.opset;
    const std::string& op = n.op_type;
    erase_attr(n, "consumed_inputs");
    static const std::set<std::string> legacy_bcast = {"Add",     "Sub",  "Mul", "Div", "Pow", "Equal",
                                                       "Greater", "Less", "And", "Or",  "Xor"};
    if (op == "BatchNormalization") {
        if (n.attrs.get_int("spatial", 1) == 0)
            throw InputError(node_label(n) + ": spatial = 0 (per-activation statistics) is not supported");
        if (n.attrs.get_int("is_test", 1) == 0 && old < 7)
            throw InputError(node_label(n) + ": is_test = 0 (training mode) is not supported");
        erase_attr(n, "spatial");
        erase_attr(n, "is_test");
        erase_attr(n, "momentum");
        // Opset-6 exporters list the training outputs even in test mode: they are
        // not computed.
        for (size_t o = 1; o < n.outputs.size(); ++o) n.outputs[o] = -1;
    } else if (op == "Dropout") {
        erase_attr(n, "is_test");
    } else if (op == "Gemm") {
        erase_attr(n, "broadcast");
    } else if (legacy_bcast.count(op) && old < 7) {
        const size_t added = legacy_broadcast(g, i);
        if (added) return added;  // the Unsqueeze is inferred first; this node comes back
    } else if (op == "PRelu" && old < 7) {
        // Opset 6: a 1-D slope of size C applies per channel.
        if (n.inputs.size() == 2 && n.inputs[1] >= 0) {
            const Value& x = g.val(n.inputs[0]);
            const Value& s = g.val(n.inputs[1]);
            if (s.constant && s.shape.size() == 1 && x.has_shape && x.shape.size() >= 3 &&
                s.shape[0].known() && s.shape[0].v > 1) {
                ref::HostTensor t = *s.constant->host();
                for (size_t k = 2; k < x.shape.size(); ++k) t.shape.push_back(1);
                n.inputs[1] = add_const(g, n, "slope", std::move(t));
            }
        }
    } else if (op == "Clip") {
        const ref::ElemType t = input_elem(g, n, 0);
        const double lo = n.attrs.get_float("min", -std::numeric_limits<double>::infinity());
        const double hi = n.attrs.get_float("max", std::numeric_limits<double>::infinity());
        erase_attr(n, "min");
        erase_attr(n, "max");
        n.inputs.resize(1);
        n.inputs.push_back(std::isinf(lo) ? -1 : add_const(g, n, "min", scalar(t, lo)));
        n.inputs.push_back(std::isinf(hi) ? -1 : add_const(g, n, "max", scalar(t, hi)));
    } else if (op == "Pad") {
        const ref::ElemType t = input_elem(g, n, 0);
        const auto pads = n.attrs.get_ints("pads", n.attrs.get_ints("paddings", {}));
        const double value = n.attrs.get_float("value", 0.0);
        erase_attr(n, "pads");
        erase_attr(n, "paddings");
        erase_attr(n, "value");
        n.inputs.resize(1);
        n.inputs.push_back(add_const(g, n, "pads", ints_tensor(pads)));
        n.inputs.push_back(add_const(g, n, "value", scalar(t, value)));
    } else if (op == "Slice" && old < 10) {
        const auto starts = n.attrs.get_ints("starts", {});
        const auto ends = n.attrs.get_ints("ends", {});
        const auto axes = n.attrs.get_ints("axes", {});
        erase_attr(n, "starts");
        erase_attr(n, "ends");
        erase_attr(n, "axes");
        n.inputs.resize(1);
        n.inputs.push_back(add_const(g, n, "starts", ints_tensor(starts)));
        n.inputs.push_back(add_const(g, n, "ends", ints_tensor(ends)));
        if (!axes.empty()) n.inputs.push_back(add_const(g, n, "axes", ints_tensor(axes)));
    } else if (op == "Reshape" && old < 5) {
        const auto shape = n.attrs.get_ints("shape", {});
        erase_attr(n, "shape");
        n.inputs.resize(1);
        n.inputs.push_back(add_const(g, n, "shape", ints_tensor(shape)));
    } else if (op == "Concat" && !n.attrs.has("axis")) {
        n.attrs.set("axis", ref::Attr::of_int(1));  // opset < 4 default
    }
    g.nodes[i].opset = 11;
    return 0;
}

}  // namespace sfumato::graph
