// The `layout` pass (see layout.h): which nodes keep their activations in NC1HWC0.
#include "runtime/graph/layout.h"

#include <algorithm>
#include <cstdlib>
#include <set>

#include "runtime/graph/infer.h"
#include "runtime/graph/passes.h"

namespace sfumato::graph {

namespace {

using ops::Format;

// Elementwise ops that map zeros to zeros on tensor operands (the padding channels of an
// NC1HWC0 tensor hold zeros and must keep them: the next convolution reads them).
bool zero_preserving(const std::string& op) {
    static const std::set<std::string> s = {"Relu", "LeakyRelu", "Neg",  "Abs", "Tanh", "Elu", "Selu",
                                            "Gelu", "HardSwish", "Softsign", "Erf", "Add", "Sub", "Sum",
                                            "Max",  "Min",       "Mul"};
    return s.count(op) != 0;
}

std::vector<std::string> program_of(const Node& n) {
    const ref::Attr* a = n.attrs.find("program");
    return a ? a->strings : std::vector<std::string>{};
}

double text_value(const std::string& step, const std::string& key, double dflt) {
    const size_t at = step.find(" " + key + "=");
    return at == std::string::npos ? dflt : std::strtod(step.c_str() + at + key.size() + 2, nullptr);
}

bool tensor_operand(const Graph& g, int v, const Value& out) {
    const Value& x = g.val(v);
    return !x.constant && x.has_shape && x.shape == out.shape;
}

// An elementwise node whose result keeps zero padding when its tensor operands are NC1HWC0.
bool c0_elementwise(const Graph& g, const Node& n) {
    if (n.outputs.size() != 1 || n.outputs[0] < 0) return false;
    const Value& out = g.val(n.outputs[0]);
    if (!out.has_shape || out.shape.size() < 3) return false;
    if (n.op_type == "ElementwiseChain") {
        for (const std::string& st : program_of(n)) {
            const std::string op = st.substr(0, st.find(' '));
            if (op == "Clip") {
                if (text_value(st, "min", -1) > 0 || text_value(st, "max", 1) < 0) return false;
            } else if (!zero_preserving(op)) {
                return false;
            }
        }
        for (int v : n.inputs)
            if (v < 0 || !tensor_operand(g, v, out)) return false;  // no scalars: f(0, ..., 0) = 0
        return true;
    }
    if (!zero_preserving(n.op_type)) return false;
    for (int v : n.inputs) {
        if (v < 0) return false;
        if (tensor_operand(g, v, out)) continue;
        // A scalar operand keeps zeros only as a factor.
        const Value& x = g.val(v);
        const Dim sz = dim_product(x.shape);
        if (n.op_type != "Mul" || !x.has_shape || !sz.known() || sz.v != 1) return false;
    }
    return true;
}

bool pooling(const std::string& op) {
    return op == "MaxPool" || op == "AveragePool" || op == "GlobalAveragePool" || op == "GlobalMaxPool";
}

// The node's inputs that follow its layout (the data inputs).
std::vector<size_t> data_inputs(const Graph& g, const Node& n) {
    if (n.op_type == "Conv" || pooling(n.op_type) || n.op_type == "BatchNormalization" ||
        n.op_type == "BatchNormTraining")
        return {0};
    std::vector<size_t> out;
    if (n.op_type == "Concat") {
        for (size_t i = 0; i < n.inputs.size(); ++i)
            if (n.inputs[i] >= 0) out.push_back(i);
        return out;
    }
    const Value& o = g.val(n.outputs[0]);
    for (size_t i = 0; i < n.inputs.size(); ++i)
        if (n.inputs[i] >= 0 && tensor_operand(g, n.inputs[i], o)) out.push_back(i);
    return out;
}

// Whether the operator library runs node n with its data inputs (and, with y, a Conv's Y) in
// NC1HWC0.
bool probe_c0(const Graph& g, const Node& n, const DeviceInfo& dev, bool y) {
    ops::NodeDesc d = node_desc(g, n);
    for (size_t i : data_inputs(g, n)) d.inputs[i].format = Format::NC1HWC0;
    if (n.op_type == "Conv" && y) d.attrs.set("y_format", ref::Attr::of_string("NC1HWC0"));
    try {
        auto op = ops::make_node_op(d, dev);
        // Output 0 follows (BatchNormTraining's statistics stay ND vectors).
        const std::vector<ops::TensorRef> outs = op->outputs();
        return !outs.empty() && (outs[0].format == Format::NC1HWC0) == (n.op_type != "Conv" || y);
    } catch (const InputError&) {
        return false;
    }
}

struct Candidates {
    std::vector<char> conv_x, conv_y, pass;  // Conv: X (Y ND) / X and Y in NC1HWC0; pass-through
    std::vector<int> producer;
    std::vector<std::vector<int>> cons;
};

// The layout that follows from the Convs allowed to write NC1HWC0, and its conversions.
LayoutChoice settle(const Graph& g, const Candidates& k, const std::vector<char>& allow_y) {
    const size_t nn = g.nodes.size();
    LayoutChoice c;
    c.x_c0.assign(nn, 0);
    c.y_c0 = allow_y;
    auto from_c0 = [&](int v) {
        const int p = k.producer[static_cast<size_t>(v)];
        return p >= 0 && c.y_c0[static_cast<size_t>(p)] && g.nodes[static_cast<size_t>(p)].outputs[0] == v;
    };
    // A Conv writes NC1HWC0 while some reader takes it; a pass-through op follows its inputs
    // when they all are NC1HWC0 (fixed point: both only drop out).
    for (bool changed = true; changed;) {
        changed = false;
        for (size_t i = 0; i < nn; ++i) {
            if (!k.pass[i]) continue;
            bool all = true;
            for (size_t j : data_inputs(g, g.nodes[i])) all = all && from_c0(g.nodes[i].inputs[j]);
            changed = changed || c.x_c0[i] != all;
            c.x_c0[i] = c.y_c0[i] = all;
        }
        for (size_t i = 0; i < nn; ++i) {
            if (!c.y_c0[i] || k.pass[i]) continue;
            bool read = false;
            for (int r : k.cons[static_cast<size_t>(g.nodes[i].outputs[0])])
                read = read || k.conv_x[static_cast<size_t>(r)] || c.x_c0[static_cast<size_t>(r)];
            if (!read) c.y_c0[i] = 0, changed = true;
        }
    }
    // A Conv takes X in NC1HWC0 when its producer writes it, or when it writes Y so (then a
    // boundary conversion before it, shared by every reader of that tensor).
    for (size_t i = 0; i < nn; ++i)
        if (k.conv_x[i]) c.x_c0[i] = from_c0(g.nodes[i].inputs[0]) || c.y_c0[i];
    // Conversions: one per (tensor, format) a reader needs that its producer does not write,
    // and one per Conv converting its own X.
    std::set<std::pair<int, bool>> conv;
    for (size_t i = 0; i < nn; ++i) {
        const Node& n = g.nodes[i];
        if (n.op_type == "Conv" && !c.x_c0[i]) ++c.internal;
        std::vector<size_t> data;
        if (c.x_c0[i]) data = data_inputs(g, n);
        for (size_t j = 0; j < n.inputs.size(); ++j) {
            const int v = n.inputs[j];
            if (v < 0 || g.val(v).constant) continue;
            const bool want = std::find(data.begin(), data.end(), j) != data.end();
            if (want != from_c0(v) && !(!want && nd_view_of_c0(g, v))) conv.insert({v, want});
        }
    }
    for (int o : g.outputs)
        if (from_c0(o) && !nd_view_of_c0(g, o)) conv.insert({o, false});
    c.boundary = static_cast<int>(conv.size());
    return c;
}

// In a training step the backward reads the forward's activations and sends gradients back
// through the same ops (train_layout.cpp): the ops kept in NC1HWC0 there are those whose
// backward runs in it, a Conv of one group, MaxPool, GlobalAveragePool, BatchNormTraining, ReLU
// and the residual Add / Sub (and Add + Relu as one chain, pass fuse_conv in training).
bool training_c0(const Node& n) {
    static const std::set<std::string> s = {"Conv", "MaxPool", "GlobalAveragePool", "BatchNormTraining",
                                            "Relu", "Add", "Sub"};
    if (n.op_type == "ElementwiseChain") return program_of(n) == std::vector<std::string>{"Add", "Relu"};
    if (!s.count(n.op_type)) return false;
    return n.op_type != "Conv" || n.attrs.get_int("group", 1) == 1;
}

}  // namespace

LayoutChoice choose_layout(const Graph& g, const DeviceInfo& dev, bool training) {
    const size_t nn = g.nodes.size();
    Candidates k;
    k.conv_x.assign(nn, 0);
    k.conv_y.assign(nn, 0);
    k.pass.assign(nn, 0);
    k.producer.assign(g.values.size(), -1);
    k.cons = g.consumers();
    int convs = 0;
    bool any = false;
    std::vector<char> runs(nn, 0);
    for (size_t i = 0; i < nn; ++i) {
        const Node& n = g.nodes[i];
        for (int o : n.outputs)
            if (o >= 0) k.producer[static_cast<size_t>(o)] = static_cast<int>(i);
        for (int o : n.outputs)
            if (o >= 0 && !g.val(o).constant) runs[i] = 1;  // not computed at plan time
        if (!runs[i] || n.op_type != "Conv") continue;
        ++convs;
        if (n.outputs.size() != 1 || n.inputs.empty() || n.inputs[0] < 0) continue;
        if (training && !training_c0(n)) continue;
        k.conv_x[i] = probe_c0(g, n, dev, false);
        k.conv_y[i] = k.conv_x[i] && probe_c0(g, n, dev, true);
        any = any || k.conv_y[i];
    }
    // The ops that follow their input's layout (probed only when some Conv writes NC1HWC0):
    // pooling, inference BatchNormalization (a, b of the padding channels are zeros), Concat
    // along the channels of whole C0 blocks, and the zero-preserving elementwise ops.
    for (size_t i = 0; i < nn && any; ++i) {
        const Node& n = g.nodes[i];
        const bool pool =
            ((pooling(n.op_type) || n.op_type == "BatchNormalization" || n.op_type == "Concat") &&
             n.outputs.size() == 1) ||
            n.op_type == "BatchNormTraining";
        if (training && !training_c0(n)) continue;
        if (runs[i] && (pool || c0_elementwise(g, n)) && !data_inputs(g, n).empty())
            k.pass[i] = probe_c0(g, n, dev, true);
    }
    // Every Conv that can writes NC1HWC0; then, one at a time, a Conv is kept at ND when that
    // makes fewer conversions (e.g. a 1x1 projection between depthwise convolutions, which stay
    // ND: its NC1HWC0 output would only be converted back).
    std::vector<char> allow = k.conv_y;
    LayoutChoice best = settle(g, k, allow);
    for (size_t i = 0; i < nn; ++i) {
        if (!allow[i]) continue;
        allow[i] = 0;
        LayoutChoice t = settle(g, k, allow);
        if (t.boundary + t.internal < best.boundary + best.internal)
            best = std::move(t);
        else
            allow[i] = 1;
    }
    best.convs = convs;
    return best;
}

std::vector<size_t> layout_data_inputs(const Graph& g, const Node& n) { return data_inputs(g, n); }

bool nd_view_of_c0(const Graph& g, int v) {
    const Value& x = g.val(v);
    isa::DType dt;
    if (!x.has_shape || x.shape.size() < 2 || !ref::device_dtype(x.elem, dt)) return false;
    for (size_t d = 2; d < x.shape.size(); ++d)
        if (!x.shape[d].known() || x.shape[d].v != 1) return false;
    const int64_t c0 = 32 / static_cast<int64_t>(isa::dtype_size(dt));
    return x.shape[1].known() && x.shape[1].v % c0 == 0;
}

}  // namespace sfumato::graph
