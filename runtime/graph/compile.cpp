// compile(): binds input shapes, infers, runs the passes, then lowers the graph
// to plan steps: every node that must run becomes a step bound to its
// operator's graph-node face, tensors get their device dtype and format
// (TransData steps where a consumer asks for another format, the `format`
// pass), reshape-family outputs become views of their input (the `views` pass;
// with it off they are copied by a Copy kernel). Streams and memory are planned
// last (stream_plan.cpp, memory_plan.cpp).
#include <algorithm>
#include <map>
#include <set>

#include "runtime/ref/broadcast.h"
#include "runtime/graph/infer.h"
#include "runtime/graph/passes.h"
#include "runtime/graph/planning.h"

namespace sfumato::graph {

const char* precision_name(Precision p) {
    switch (p) {
        case Precision::FP16: return "fp16";
        case Precision::BF16: return "bf16";
        case Precision::Mixed: return "mixed";
        default: return "fp32";
    }
}

bool parse_precision(const std::string& s, Precision& out) {
    for (Precision p : {Precision::FP32, Precision::FP16, Precision::BF16, Precision::Mixed})
        if (s == precision_name(p)) {
            out = p;
            return true;
        }
    return false;
}

const std::vector<std::string>& all_passes() {
    static const std::vector<std::string> p = {"fold",      "dce",       "fuse_layernorm",   "fuse_attention",
                                               "fuse_conv", "depthwise", "fuse_elementwise", "views",
                                               "format",    "layout"};
    return p;
}

std::set<std::string> parse_passes(const std::string& spec) {
    std::set<std::string> out;
    if (spec == "none" || spec.empty()) return out;
    size_t pos = 0;
    while (pos <= spec.size()) {
        const size_t c = spec.find(',', pos);
        std::string name = spec.substr(pos, c == std::string::npos ? std::string::npos : c - pos);
        pos = c == std::string::npos ? spec.size() + 1 : c + 1;
        if (name.empty()) continue;
        const bool remove = name[0] == '-';
        if (remove) name = name.substr(1);
        if (name == "all") {
            for (const auto& p : all_passes()) remove ? (void)out.erase(p) : (void)out.insert(p);
            continue;
        }
        if (std::find(all_passes().begin(), all_passes().end(), name) == all_passes().end()) {
            std::string known;
            for (const auto& p : all_passes()) known += " " + p;
            throw InputError("--passes: unknown pass '" + name + "' (known: all none" + known + ")");
        }
        remove ? (void)out.erase(name) : (void)out.insert(name);
    }
    return out;
}

size_t Plan::kernel_count() const {
    size_t n = 0;
    for (const PlanStep& s : steps)
        if (!s.view) n += s.op ? s.kernels : 0;
    return n;
}

std::vector<std::vector<int64_t>> default_input_shapes(const Graph& g, int64_t batch,
                                                       const std::map<std::string, int64_t>& dims) {
    std::vector<std::vector<int64_t>> out;
    for (int id : g.inputs) {
        const Value& v = g.val(id);
        if (!v.has_shape)
            throw InputError("graph input '" + v.name + "' has no declared shape: give it with --input");
        std::vector<int64_t> s;
        bool first = true;
        for (const Dim& d : v.shape) {
            if (d.known()) {
                s.push_back(d.v);
                continue;
            }
            auto it = dims.find(d.sym);
            if (it != dims.end())
                s.push_back(it->second);
            else if (first)
                s.push_back(batch);
            else
                throw InputError("graph input '" + v.name + "': symbolic dimension '" + d.str() +
                                 "' needs a value (give the input)");
            first = false;
        }
        out.push_back(s);
    }
    return out;
}

namespace {

// Operand slots an operator needs at plan time: shapes, axes, bounds, repeats, sizes.
bool shape_operand(const std::string& op, size_t i) {
    static const std::map<std::string, std::set<size_t>> slots = {
        {"Reshape", {1}},         {"Expand", {1}},          {"Tile", {1}},       {"Slice", {1, 2, 3, 4}},
        {"Pad", {1, 3}},          {"ConstantOfShape", {0}}, {"Range", {0, 1, 2}}, {"Unsqueeze", {1}},
        {"Squeeze", {1}},         {"Split", {1}},           {"TopK", {1}},       {"OneHot", {1}},
        {"Resize", {1, 2, 3}},    {"Upsample", {1}},        {"CumSum", {1}},     {"Trilu", {1}},
        {"ReduceSum", {1}},       {"ReduceMean", {1}},      {"ReduceMax", {1}},  {"ReduceMin", {1}},
        {"ReduceProd", {1}},      {"ReduceL1", {1}},        {"ReduceL2", {1}},   {"ReduceLogSum", {1}},
        {"ReduceLogSumExp", {1}}, {"ReduceSumSquare", {1}}};
    auto it = slots.find(op);
    return it != slots.end() && it->second.count(i) != 0;
}

// Per graph input: whether its values reach a plan-time operand slot (through any chain of
// nodes, e.g. Shape/Gather/Concat arithmetic). Token ids, masks and other data read by
// kernels are not such inputs, even when small.
std::vector<bool> plan_time_inputs(const Graph& g) {
    std::vector<int> producer(g.values.size(), -1);
    for (size_t n = 0; n < g.nodes.size(); ++n)
        for (int o : g.nodes[n].outputs)
            if (o >= 0) producer[static_cast<size_t>(o)] = static_cast<int>(n);
    std::vector<char> seen(g.values.size(), 0);
    std::vector<int> todo;
    for (const Node& n : g.nodes)
        for (size_t i = 0; i < n.inputs.size(); ++i)
            if (n.inputs[i] >= 0 && shape_operand(n.op_type, i)) todo.push_back(n.inputs[i]);
    while (!todo.empty()) {
        const int v = todo.back();
        todo.pop_back();
        if (seen[static_cast<size_t>(v)]) continue;
        seen[static_cast<size_t>(v)] = 1;
        const int p = producer[static_cast<size_t>(v)];
        if (p < 0) continue;
        const Node& n = g.nodes[static_cast<size_t>(p)];
        if (n.op_type == "Shape" || n.op_type == "Size") continue;  // only the input's shape matters
        for (int in : n.inputs)
            if (in >= 0) todo.push_back(in);
    }
    std::vector<bool> out;
    for (int id : g.inputs) out.push_back(seen[static_cast<size_t>(id)] != 0);
    return out;
}

bool shape_input(const Value& v, const ref::HostTensor& t, bool reaches_shape) {
    return reaches_shape && ref::is_integer(v.elem) && v.elem != ref::ElemType::Bool &&
           t.numel() <= kMaxShapeInput;
}

void bind_inputs(Graph& g, const std::vector<std::vector<int64_t>>& shapes) {
    if (shapes.size() != g.inputs.size())
        throw InputError(std::to_string(shapes.size()) + " input shapes given, the model has " +
                         std::to_string(g.inputs.size()) + " inputs");
    std::map<std::string, int64_t> symbols;
    // An input no node reads (nor an output) cannot disagree with anything: its declared shape
    // is not checked (ONNX test data feeds such inputs with other shapes).
    std::set<int> read;
    for (const Node& n : g.nodes)
        for (int in : n.inputs) read.insert(in);
    for (int o : g.outputs) read.insert(o);
    for (size_t i = 0; i < shapes.size(); ++i) {
        Value& v = g.val(g.inputs[i]);
        const auto& s = shapes[i];
        if (v.has_shape && read.count(g.inputs[i])) {
            if (v.shape.size() != s.size())
                throw InputError("input '" + v.name + "': shape " + ref::shape_str(s) +
                                 " does not match the model's " + shape_str(v.shape));
            for (size_t d = 0; d < s.size(); ++d) {
                const Dim& want = v.shape[d];
                if (want.known() && want.v != s[d])
                    throw InputError("input '" + v.name + "': shape " + ref::shape_str(s) +
                                     " does not match the model's " + shape_str(v.shape));
                if (!want.known() && !want.sym.empty()) {
                    auto [it, fresh] = symbols.emplace(want.sym, s[d]);
                    if (!fresh && it->second != s[d])
                        throw InputError("input '" + v.name + "': dimension '" + want.sym +
                                         "' = " + std::to_string(s[d]) +
                                         " but another input has it = " + std::to_string(it->second));
                }
            }
        }
        v.shape = make_shape(s);
        v.has_shape = true;
    }
}

}  // namespace

std::unique_ptr<Plan> compile(const Graph& imported, const std::vector<std::vector<int64_t>>& input_shapes,
                              const DeviceInfo& dev, const CompileOptions& opt,
                              const std::vector<ref::HostTensor>* values) {
    auto plan = std::make_unique<Plan>();
    plan->precision = opt.precision;
    for (const auto& s : input_shapes) plan->signature += ref::shape_str(s);
    Graph g = imported;
    bind_inputs(g, input_shapes);
    if (values) {
        const std::vector<bool> reach = plan_time_inputs(g);
        for (size_t i = 0; i < g.inputs.size() && i < values->size(); ++i) {
            Value& v = g.val(g.inputs[i]);
            ref::HostTensor t = (*values)[i];
            if (!shape_input(v, t, reach[i])) continue;
            t.type = v.elem;
            ref::round_to_type(t);
            plan->bound_inputs[i] = t;
            v.constant = std::make_shared<const ConstValue>(std::move(t));
        }
    }
    infer_shapes(g);

    const PassContext ctx{dev, opt};
    struct Step {
        const char* name;
        PassFn fn;
    };
    const Step graph_passes[] = {{"fold", pass_fold},
                                 {"dce", pass_dce},
                                 {"fuse_layernorm", pass_fuse_layernorm},
                                 {"fuse_attention", pass_fuse_attention},
                                 {"precision", pass_precision},
                                 {"fuse_conv", pass_fuse_conv},
                                 {"depthwise", pass_depthwise},
                                 {"fuse_elementwise", pass_fuse_elementwise}};
    for (const Step& s : graph_passes) {
        PassReport r;
        r.name = s.name;
        r.enabled = std::string(s.name) == "precision" ? opt.precision != Precision::FP32 : opt.on(s.name);
        if (r.enabled) s.fn(g, ctx, r);
        plan->passes.push_back(std::move(r));
    }
    plan->graph = std::move(g);
    lower(*plan, dev, opt);
    plan_streams(*plan, opt.streams);
    plan_memory(*plan);
    return plan;
}

const Plan& Model::plan(const std::vector<std::vector<int64_t>>& input_shapes, const DeviceInfo& dev,
                        const CompileOptions& opt, const std::vector<ref::HostTensor>* values) {
    std::string key;
    for (const auto& s : input_shapes) key += ref::shape_str(s);
    if (values) {
        const std::vector<bool> reach = plan_time_inputs(m_graph);
        for (size_t i = 0; i < m_graph.inputs.size() && i < values->size(); ++i)
            if (shape_input(m_graph.val(m_graph.inputs[i]), (*values)[i], reach[i])) {
                key += "=";
                for (int64_t v : ref::int_values((*values)[i])) key += std::to_string(v) + ",";
            }
    }
    key += "|" + std::string(precision_name(opt.precision)) + "|" + std::to_string(opt.streams) + "|";
    for (const auto& p : opt.passes) key += p + ",";
    auto it = m_plans.find(key);
    if (it != m_plans.end()) return *it->second;
    ++m_compilations;
    auto p = compile(m_graph, input_shapes, dev, opt, values);
    return *(m_plans[key] = std::move(p));
}

}  // namespace sfumato::graph
