// `sfumato kernel` forms of the data-movement operators: the graph-node op on random inputs
// (fixed seed), checked exactly against the host reference. Shapes are dims joined by x, lists
// (perm, starts, pads, ...) are comma-separated integers.
#include <sstream>

#include "runtime/ops/ew/standalone_ops.h"
#include "runtime/ops/standalone.h"
#include "sim/error.h"

namespace sfumato::ops::mv {

using ref::ElemType;

namespace {

std::vector<int64_t> int_list(const std::string& op, const std::string& arg, const std::string& s) {
    std::vector<int64_t> v;
    if (s.empty() || s == "-") return v;
    std::stringstream ss(s);
    std::string tok;
    while (std::getline(ss, tok, ',')) {
        char* end = nullptr;
        const long long x = std::strtoll(tok.c_str(), &end, 10);
        if (tok.empty() || !end || *end)
            throw InputError("operator '" + op + "': argument '" + arg + "' = '" + s + "' is not a comma-separated integer list");
        v.push_back(x);
    }
    return v;
}

std::shared_ptr<ref::HostTensor> i64(const std::vector<int64_t>& v) {
    auto t = std::make_shared<ref::HostTensor>(ElemType::Int64, std::vector<int64_t>{static_cast<int64_t>(v.size())});
    for (size_t i = 0; i < v.size(); ++i) t->data[i] = static_cast<double>(v[i]);
    return t;
}

std::vector<ElemType> all_types() {
    std::vector<ElemType> v = ew::numeric_types();
    v.push_back(ElemType::Bool);
    return v;
}

struct Builder {
    StandaloneSpec s;
    std::string op;
    Builder(const std::string& name, const std::string& onnx, const OpArgs& a) : op(name) {
        s.node.name = name;
        s.node.op_type = onnx;
        s.node.attrs.set_owner(name);
        s.tol = Tolerance{0, 0};
        m_elem = ew::parse_elem(name, "dtype", a.at("dtype"), all_types());
    }
    void data(const std::vector<int64_t>& shape) {
        s.node.inputs.push_back(make_tensor(shape, m_elem));
        s.node.constants.resize(s.node.inputs.size());
    }
    void constant(const std::vector<int64_t>& v) {
        s.node.inputs.push_back(make_tensor({static_cast<int64_t>(v.size())}, ElemType::Int64));
        s.node.constants.push_back(i64(v));
    }
    ElemType m_elem;
};

void reg(const char* name, const char* summary, std::vector<OpArgSpec> args, OpArgs sample,
         std::function<StandaloneSpec(const OpArgs&)> build) {
    OpSpec s;
    s.name = name;
    s.summary = summary;
    args.push_back({"dtype", "fp16", "element type: fp16 | bf16 | fp32 | int32 | int16 | int8 | uint8 | bool"});
    s.args = std::move(args);
    s.make = [build](const OpArgs& a, const DeviceInfo& d) { return make_standalone(build(a), d); };
    register_op(std::move(s));
    register_op_sample(name, std::move(sample));
}

std::vector<int64_t> shape(const std::string& op, const OpArgs& a, const std::string& k = "shape") {
    return ew::parse_shape(op, k, a.at(k));
}

struct RegisterAll {
    RegisterAll() {
        reg("transpose", "Transpose by a permutation of the axes", {{"shape", "", "input shape (dims joined by x)"}, {"perm", "-", "permutation, e.g. 0,2,1 (default: reversed)"}},
            {{"shape", "3x40x24"}, {"perm", "2,0,1"}}, [](const OpArgs& a) {
                Builder b("transpose", "Transpose", a);
                b.data(shape("transpose", a));
                if (a.at("perm") != "-") b.s.node.attrs.set("perm", ref::Attr::of_ints(int_list("transpose", "perm", a.at("perm"))));
                return b.s;
            });
        reg("concat", "Concat along an axis", {{"shapes", "", "input shapes joined by commas, e.g. 4x5,4x7"}, {"axis", "0", "axis"}},
            {{"shapes", "5x17,5x3,5x40"}, {"axis", "1"}}, [](const OpArgs& a) {
                Builder b("concat", "Concat", a);
                std::stringstream ss(a.at("shapes"));
                std::string tok;
                while (std::getline(ss, tok, ',')) b.data(ew::parse_shape("concat", "shapes", tok));
                b.s.node.attrs.set("axis", ref::Attr::of_int(int_list("concat", "axis", a.at("axis")).at(0)));
                return b.s;
            });
        reg("split", "Split along an axis", {{"shape", "", "input shape"}, {"axis", "0", "axis"}, {"split", "-", "sizes, e.g. 3,7 (default: --parts equal parts)"}, {"parts", "2", "equal parts when --split is not given"}},
            {{"shape", "6x37"}, {"axis", "1"}, {"split", "5,32"}}, [](const OpArgs& a) {
                Builder b("split", "Split", a);
                b.data(shape("split", a));
                b.s.node.attrs.set("axis", ref::Attr::of_int(int_list("split", "axis", a.at("axis")).at(0)));
                if (a.at("split") != "-") b.constant(int_list("split", "split", a.at("split")));
                else b.s.node.attrs.set("num_outputs", ref::Attr::of_int(int_list("split", "parts", a.at("parts")).at(0)));
                return b.s;
            });
        reg("slice", "Slice with starts/ends/axes/steps", {{"shape", "", "input shape"}, {"starts", "", "e.g. 1,0"}, {"ends", "", "e.g. 15,10"}, {"axes", "-", "default 0,1,..."}, {"steps", "-", "default 1,..."}},
            {{"shape", "20x10x5"}, {"starts", "19,8,0"}, {"ends", "0,1,5"}, {"steps", "-2,-3,1"}}, [](const OpArgs& a) {
                Builder b("slice", "Slice", a);
                b.data(shape("slice", a));
                const auto st = int_list("slice", "starts", a.at("starts"));
                b.constant(st);
                b.constant(int_list("slice", "ends", a.at("ends")));
                std::vector<int64_t> axes = int_list("slice", "axes", a.at("axes")), steps = int_list("slice", "steps", a.at("steps"));
                if (axes.empty())
                    for (size_t i = 0; i < st.size(); ++i) axes.push_back(static_cast<int64_t>(i));
                b.constant(axes);
                if (steps.empty()) steps.assign(st.size(), 1);
                b.constant(steps);
                return b.s;
            });
        reg("gather", "Gather rows by random indices (run-time indices; --const 1: known at plan time)",
            {{"shape", "", "data shape"}, {"indices", "", "index shape"}, {"axis", "0", "axis"}, {"const", "0", "1 = indices known at plan time"}},
            {{"shape", "50x24"}, {"indices", "3x4"}}, [](const OpArgs& a) {
                Builder b("gather", "Gather", a);
                const auto ds = shape("gather", a);
                b.data(ds);
                const int64_t axis = int_list("gather", "axis", a.at("axis")).at(0);
                b.s.node.attrs.set("axis", ref::Attr::of_int(axis));
                const auto is = ew::parse_shape("gather", "indices", a.at("indices"));
                if (ds.empty()) throw InputError("operator 'gather': argument 'shape' needs a rank of at least 1");
                const int64_t rank = static_cast<int64_t>(ds.size());
                if (axis < -rank || axis >= rank)
                    throw InputError("operator 'gather': argument 'axis' = " + std::to_string(axis) +
                                     " is out of range for rank " + std::to_string(rank));
                const int64_t dim = ds.at(static_cast<size_t>(axis < 0 ? axis + static_cast<int64_t>(ds.size()) : axis));
                b.s.node.inputs.push_back(make_tensor(is, ElemType::Int64));
                b.s.gens.resize(2);
                b.s.gens[1] = integer_input(-dim, dim - 1);
                const uint64_t n = b.s.node.inputs.back().numel();
                if (a.at("const") != "1" && axis == 0 && n <= (uint64_t{1} << 20)) {
                    // Run-time ids the host also knows (known_ids, runtime/ops/llm/embedding.h): a row
                    // gather addresses the same rows in timing mode, where no values exist.
                    std::mt19937 rng(98);
                    ref::HostTensor ids(ElemType::Int64, is);
                    integer_input(-dim, dim - 1)(ids, rng);
                    std::vector<int64_t> v(ids.data.begin(), ids.data.end());
                    b.s.node.attrs.set("known_ids", ref::Attr::of_ints(v));
                    b.s.gens[1] = [ids](ref::HostTensor& t, std::mt19937&) { t.data = ids.data; };
                }
                if (a.at("const") == "1") {
                    std::mt19937 rng(99);
                    auto t = std::make_shared<ref::HostTensor>(ElemType::Int64, is);
                    integer_input(-dim, dim - 1)(*t, rng);
                    b.s.node.constants.resize(2);
                    b.s.node.constants[1] = t;
                }
                return b.s;
            });
        reg("pad", "Pad (constant, reflect, edge, wrap)", {{"shape", "", "input shape"}, {"pads", "", "begins then ends, e.g. 0,0,1,1,0,0,1,1"}, {"pad_mode", "constant", "constant | reflect | edge | wrap"}, {"value", "0", "constant value"}},
            {{"shape", "2x3x9x7"}, {"pads", "0,0,1,2,0,1,1,3"}, {"pad_mode", "reflect"}}, [](const OpArgs& a) {
                Builder b("pad", "Pad", a);
                b.data(shape("pad", a));
                b.constant(int_list("pad", "pads", a.at("pads")));
                b.s.node.attrs.set("mode", ref::Attr::of_string(a.at("pad_mode")));
                auto v = std::make_shared<ref::HostTensor>(b.m_elem, std::vector<int64_t>{});
                v->data[0] = std::strtod(a.at("value").c_str(), nullptr);
                b.s.node.inputs.push_back(make_tensor({}, b.m_elem));
                b.s.node.constants.push_back(v);
                return b.s;
            });
        reg("expand", "Expand (broadcast) to a shape", {{"shape", "", "input shape"}, {"to", "", "target shape (numpy broadcasting)"}},
            {{"shape", "3x1x5"}, {"to", "2x3x7x5"}}, [](const OpArgs& a) {
                Builder b("expand", "Expand", a);
                b.data(shape("expand", a));
                b.constant(ew::parse_shape("expand", "to", a.at("to")));
                return b.s;
            });
        reg("tile", "Tile by repeats", {{"shape", "", "input shape"}, {"repeats", "", "e.g. 2,3"}}, {{"shape", "3x5x7"}, {"repeats", "2,1,3"}},
            [](const OpArgs& a) {
                Builder b("tile", "Tile", a);
                b.data(shape("tile", a));
                b.constant(int_list("tile", "repeats", a.at("repeats")));
                return b.s;
            });
    }
} register_all;

}  // namespace

}  // namespace sfumato::ops::mv
