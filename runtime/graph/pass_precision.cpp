// precision: --precision fp16 | bf16 | mixed (fp32 = the model's own types,
// pass off). Every node gets a compute type: fp16/bf16, or fp32 for reductions,
// softmax and normalisations under `mixed` (their statistics stay in fp32). A
// float value is stored in its producer's compute type (graph inputs in the
// type most of their readers want); a reader that wants another type gets a
// Cast (one per value and type); constants are converted when the model loads,
// so weights are placed once in the type their reader uses. Cast nodes to float
// are retargeted to the compute type. Integer and bool tensors are untouched.
#include <map>
#include <set>

#include "runtime/graph/passes.h"

namespace sfumato::graph {

namespace {

// Inference-mode BatchNormalization is not among them: with its statistics given it is a
// per-channel affine map (and fuse_conv folds it into the convolution before it, which a
// Cast in between would prevent). Nor is GlobalAveragePool: its kernel widens a low-precision
// input to fp32 in UB, sums and scales in fp32 and rounds once on the way out, so Casts around
// it would give the same values for two more kernels (and break a ResNet's NC1HWC0 chain before
// its classifier, layout.h).
bool keeps_fp32(const std::string& op) {
    static const std::set<std::string> s = {
        "Softmax",         "LogSoftmax",     "LayerNormalization", "InstanceNormalization",
        "ReduceSum",       "ReduceMean",     "ReduceMax",          "ReduceMin",
        "ReduceProd",      "ReduceL1",       "ReduceL2",           "ReduceLogSum",
        "ReduceLogSumExp", "ReduceSumSquare"};
    return s.count(op) != 0;
}

bool is_f(ref::ElemType t) {
    return t == ref::ElemType::Float || t == ref::ElemType::Double || t == ref::ElemType::Float16 ||
           t == ref::ElemType::Bfloat16;
}

}  // namespace

void pass_precision(Graph& g, const PassContext& pc, PassReport& r) {
    const Precision p = pc.opt.precision;
    const ref::ElemType low = p == Precision::BF16 ? ref::ElemType::Bfloat16 : ref::ElemType::Float16;
    auto compute = [&](const Node& n) {
        return p == Precision::Mixed && keeps_fp32(n.op_type) ? ref::ElemType::Float : low;
    };
    // Storage type of every non-constant float value.
    std::vector<ref::ElemType> store(g.values.size(), ref::ElemType::Undefined);
    for (const Node& n : g.nodes)
        for (size_t k = 0; k < n.outputs.size(); ++k) {
            const int o = n.outputs[k];
            // A training BatchNorm's batch statistics (outputs 3, 4) stay fp32, as the frameworks
            // keep them for the backward.
            const bool stat = n.op_type == "BatchNormTraining" && k >= 3;
            if (o >= 0 && is_f(g.val(o).elem) && !g.val(o).constant)
                store[static_cast<size_t>(o)] = stat ? ref::ElemType::Float : compute(n);
        }
    const auto cons = g.consumers();
    for (int in : g.inputs) {
        if (!is_f(g.val(in).elem)) continue;
        int want32 = 0, wantlow = 0;
        for (int c : cons[static_cast<size_t>(in)])
            (compute(g.nodes[static_cast<size_t>(c)]) == ref::ElemType::Float ? want32 : wantlow)++;
        store[static_cast<size_t>(in)] = want32 > wantlow ? ref::ElemType::Float : low;
    }
    // Cast nodes producing floats produce the compute type of their reader's
    // choice: their own.
    for (Node& n : g.nodes)
        if (n.op_type == "Cast" && n.outputs[0] >= 0 &&
            store[static_cast<size_t>(n.outputs[0])] != ref::ElemType::Undefined)
            n.attrs.set("to",
                        ref::Attr::of_int(static_cast<int64_t>(store[static_cast<size_t>(n.outputs[0])])));
    std::map<std::pair<int, int>, int> converted;
    std::vector<Node> casts;
    int n_casts = 0, n_consts = 0;
    for (Node& n : g.nodes) {
        if (n.op_type == "Cast") continue;
        const ref::ElemType want = compute(n);
        for (size_t i = 0; i < n.inputs.size(); ++i) {
            const int v = n.inputs[i];
            if (v < 0) continue;
            const Value& val = g.val(v);
            if (!is_f(val.elem)) continue;
            // Inputs that ONNX types separately from the data stay as they are.
            if ((n.op_type == "Pow" && i == 1) || (n.op_type == "Reshape" && i == 1)) {
                if (!val.constant) continue;
            }
            const auto key = std::make_pair(v, static_cast<int>(want));
            if (auto it = converted.find(key); it != converted.end()) {
                n.inputs[i] = it->second;
                continue;
            }
            if (val.constant) {
                if (val.elem == want) continue;
                Value c;
                c.name = g.unique_name(val.name + (want == ref::ElemType::Float ? "@fp32" : "@low"));
                c.elem = want;
                c.shape = val.shape;
                c.has_shape = val.has_shape;
                c.constant = ConstValue::converted(val.constant, want);
                const int nv = g.add_value(std::move(c));
                converted[key] = nv;
                n.inputs[i] = nv;
                ++n_consts;
                continue;
            }
            const ref::ElemType have = store[static_cast<size_t>(v)];
            if (have == want || have == ref::ElemType::Undefined) continue;
            Node c;
            c.name = g.unique_name(val.name + (want == ref::ElemType::Float ? "_to_fp32" : "_to_low"));
            c.op_type = "Cast";
            c.opset = 13;
            c.attrs.set_owner(c.name);
            c.attrs.set("to", ref::Attr::of_int(static_cast<int64_t>(want)));
            c.inputs = {v};
            Value out;
            out.name = c.name;
            out.elem = want;
            out.shape = val.shape;
            out.has_shape = val.has_shape;
            const int ov = g.add_value(out);
            store.resize(g.values.size(), ref::ElemType::Undefined);  // constants added meanwhile: none
            store[static_cast<size_t>(ov)] = want;
            c.outputs = {ov};
            casts.push_back(c);
            converted[key] = ov;
            n.inputs[i] = ov;
            ++n_casts;
        }
    }
    int n_values = 0;
    for (size_t v = 0; v < store.size() && v < g.values.size(); ++v) {
        if (store[v] == ref::ElemType::Undefined || g.val(static_cast<int>(v)).elem == store[v]) continue;
        g.val(static_cast<int>(v)).elem = store[v];
        ++n_values;
    }
    for (Node& c : casts) g.nodes.push_back(std::move(c));
    g.topo_sort();
    g.compact_values();
    r.changes = n_values + n_casts;
    r.patterns[std::string("tensors to ") + (low == ref::ElemType::Bfloat16 ? "bf16" : "fp16")] = n_values;
    if (n_casts) r.patterns["casts inserted"] = n_casts;
    if (n_consts) r.patterns["constants converted"] = n_consts;
    int kept = 0;
    for (const Node& n : g.nodes)
        if (compute(n) == ref::ElemType::Float && p == Precision::Mixed) ++kept;
    if (kept) r.patterns["ops kept in fp32"] = kept;
}

}  // namespace sfumato::graph
