// `sfumato import op-summary`: the vendor profiler's per-operator summary (msprof's
// op_summary_*.csv): one row per device task with "Op Name", "OP Type", "Task Type",
// "Stream ID", "Task Start Time(us)", "Task Duration(us)", "Input Shapes", "Input Data Types",
// "Input Formats", "Output Shapes" (tensors separated by ';', dimensions by ','). Rows become
// graph-node kernel tasks in start-time order, one workload stream per trace stream, with the
// measured duration; the operator type names the node (framework spellings such as MatMulV2,
// BatchMatMul, SoftmaxV2, ConcatD, ReduceSumD map to their ONNX op). Formats other than ND /
// NCHW (fractal layouts) and types without an operator here are skipped with the reason.
// Simplified: convolution strides and pads are derived from the input and output shapes
// (symmetric padding), since the summary does not carry attributes.
#include <cmath>
#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "runtime/ref/host_tensor.h"
#include "sim/error.h"
#include "traces/import.h"
#include "traces/utf8.h"

namespace sfumato::import {

using nlohmann::json;

namespace {

std::vector<std::string> csv_row(const std::string& line) {
    std::vector<std::string> out;
    std::string cur;
    bool q = false;
    for (size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (q) {
            if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') cur += '"', ++i;
            else if (c == '"') q = false;
            else cur += c;
        } else if (c == '"') {
            q = true;
        } else if (c == ',') {
            out.push_back(cur);
            cur.clear();
        } else if (c != '\r') {
            cur += c;
        }
    }
    out.push_back(cur);
    return out;
}

std::string trim(std::string s) {
    const size_t a = s.find_first_not_of(" \t\"");
    if (a == std::string::npos) return "";
    const size_t b = s.find_last_not_of(" \t\"");
    return s.substr(a, b - a + 1);
}

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> v;
    std::string cur;
    for (char c : s) {
        if (c == sep) v.push_back(trim(cur)), cur.clear();
        else cur += c;
    }
    v.push_back(trim(cur));
    return v;
}

// "1,3,224,224;64,3,7,7" -> shapes; "" entries (absent optional inputs) stay empty.
std::vector<std::vector<int64_t>> shapes_of(const std::string& s) {
    std::vector<std::vector<int64_t>> out;
    if (trim(s).empty()) return out;
    for (const std::string& t : split(s, ';')) {
        std::vector<int64_t> d;
        for (const std::string& x : split(t, ',')) {
            if (x.empty()) continue;
            d.push_back(std::stoll(x));
        }
        out.push_back(std::move(d));
    }
    return out;
}

const std::map<std::string, std::string>& type_map() {
    static const std::map<std::string, std::string> m = {
        {"MatMul", "MatMul"}, {"MatMulV2", "MatMul"}, {"MatMulV3", "MatMul"}, {"BatchMatMul", "MatMul"},
        {"BatchMatMulV2", "MatMul"}, {"Add", "Add"}, {"AddV2", "Add"}, {"Sub", "Sub"}, {"Mul", "Mul"},
        {"RealDiv", "Div"}, {"Div", "Div"}, {"Relu", "Relu"}, {"Gelu", "Gelu"}, {"FastGelu", "Gelu"},
        {"Sigmoid", "Sigmoid"}, {"Tanh", "Tanh"}, {"Exp", "Exp"}, {"Sqrt", "Sqrt"}, {"Rsqrt", "Sqrt"},
        {"SoftmaxV2", "Softmax"}, {"Softmax", "Softmax"}, {"LayerNorm", "LayerNormalization"},
        {"LayerNormV3", "LayerNormalization"}, {"ConcatD", "Concat"}, {"ConcatV2D", "Concat"}, {"Concat", "Concat"},
        {"ReduceSumD", "ReduceSum"}, {"ReduceSum", "ReduceSum"}, {"ReduceMeanD", "ReduceMean"}, {"ReduceMean", "ReduceMean"},
        {"Conv2D", "Conv"}, {"MaxPool", "MaxPool"}, {"AvgPool", "AveragePool"}, {"Cast", "Cast"},
        {"Transpose", "Transpose"}, {"TransposeD", "Transpose"}, {"Identity", "Copy"}, {"TensorMove", "Copy"},
        {"GatherV2", "Gather"}, {"Gather", "Gather"}};
    return m;
}

[[noreturn]] void no(const std::string& why) { throw std::string(why); }

json tensor(const std::vector<int64_t>& shape, int elem) {
    isa::DType d = isa::DType::FP16;
    if (!ref::device_dtype(static_cast<ref::ElemType>(elem), d)) no("an element type without a device form");
    return {{"shape", shape}, {"dtype", isa::dtype_name(d)}, {"elem", elem}};
}

json row_node(const std::string& type, const std::string& onnx, const std::string& name,
              const std::vector<std::vector<int64_t>>& in, const std::vector<int>& elems,
              const std::vector<std::vector<int64_t>>& out, const std::vector<std::string>& formats) {
    for (const std::string& f : formats) {
        if (!f.empty() && f != "ND" && f != "NCHW" && f != "FORMAT_ND" && f != "FORMAT_NCHW" && f != "NHWC" && f != "N/A")
            no("input format " + f + " is not mapped (only ND/NCHW)");
    }
    if (in.empty()) no("no input shapes");
    json ins = json::array();
    for (size_t i = 0; i < in.size(); ++i) {
        if (in[i].empty() && i > 0) continue;
        ins.push_back(tensor(in[i], elems.at(std::min(i, elems.size() - 1))));
    }
    json attrs = json::object();
    const size_t rank = in[0].size();
    if (onnx == "Softmax") attrs["axis"] = {{"int", -1}};
    if (onnx == "LayerNormalization") {
        attrs["axis"] = {{"int", -1}};
        while (ins.size() < 3) ins.push_back(tensor({in[0].back()}, elems[0]));
    }
    if (onnx == "Concat") {
        // The axis is the one dimension where the output differs from the first input.
        int64_t axis = 0;
        if (!out.empty() && out[0].size() == rank)
            for (size_t d = 0; d < rank; ++d)
                if (out[0][d] != in[0][d]) axis = static_cast<int64_t>(d);
        attrs["axis"] = {{"int", axis}};
    }
    if (onnx == "ReduceSum" || onnx == "ReduceMean") {
        if (out.empty()) no("reduction without output shapes");
        std::vector<int64_t> axes;
        const bool keep = out[0].size() == rank;
        for (size_t d = 0, o = 0; d < rank; ++d) {
            const bool kept = keep ? out[0][d] == in[0][d] : (o < out[0].size() && out[0][o] == in[0][d]);
            if (!kept) axes.push_back(static_cast<int64_t>(d));
            else if (!keep) ++o;
        }
        attrs["axes"] = {{"ints", axes}};
        attrs["keepdims"] = {{"int", keep ? 1 : 0}};
    }
    if (onnx == "Cast") {
        if (out.empty()) no("cast without output type");
        attrs["to"] = {{"int", elems.size() > 1 ? elems.back() : elems[0]}};
    }
    if (onnx == "Transpose") {
        if (out.empty() || out[0].size() != rank) no("transpose without output shapes");
        std::vector<int64_t> perm;
        std::vector<bool> used(rank, false);
        for (size_t d = 0; d < rank; ++d) {
            for (size_t s = 0; s < rank; ++s) {
                if (!used[s] && in[0][s] == out[0][d]) {
                    perm.push_back(static_cast<int64_t>(s));
                    used[s] = true;
                    break;
                }
            }
        }
        if (perm.size() != rank) no("the permutation cannot be derived from the shapes");
        attrs["perm"] = {{"ints", perm}};
    }
    if (onnx == "Conv") {
        if (rank != 4 || in.size() < 2 || in[1].size() != 4 || out.empty() || out[0].size() != 4)
            no("convolution shapes are not NCHW / OIHW");
        std::vector<int64_t> strides(2), pads(4);
        for (int d = 0; d < 2; ++d) {
            const int64_t x = in[0][2 + d], k = in[1][2 + d], y = out[0][2 + d];
            strides[d] = y > 1 ? std::max<int64_t>(1, (x - k) / (y - 1)) : 1;
            const int64_t p = std::max<int64_t>(0, ((y - 1) * strides[d] + k - x + 1) / 2);
            pads[d] = pads[d + 2] = p;
        }
        attrs["strides"] = {{"ints", strides}};
        attrs["pads"] = {{"ints", pads}};
        attrs["group"] = {{"int", in[1][1] ? in[0][1] / in[1][1] : 1}};
    }
    if (onnx == "MaxPool" || onnx == "AveragePool") {
        if (rank != 4 || out.empty() || out[0].size() != 4) no("pooling shapes are not NCHW");
        std::vector<int64_t> k(2), s(2);
        for (int d = 0; d < 2; ++d) {
            s[d] = out[0][2 + d] > 1 ? in[0][2 + d] / out[0][2 + d] : in[0][2 + d];
            k[d] = std::max<int64_t>(s[d], 1);
        }
        attrs["kernel_shape"] = {{"ints", k}};
        attrs["strides"] = {{"ints", s}};
    }
    if (onnx == "Gather") attrs["axis"] = {{"int", 0}};
    json node = {{"op_type", onnx}, {"name", name}, {"attrs", attrs}, {"inputs", ins}};
    // Reductions in the attribute form (opset 11): from opset 13 (the workload's default is 17)
    // ReduceSum takes its axes from an input and refuses the attribute.
    if (onnx == "ReduceSum" || onnx == "ReduceMean") node["opset"] = 11;
    return node;
}

}  // namespace

Imported import_op_summary(const std::string& path) {
    Imported out;
    Report& rep = out.report;
    rep.format = "op-summary";
    std::ifstream f(path);
    if (!f) throw InputError("cannot open '" + path + "'");
    std::string line;
    if (!std::getline(f, line)) throw InputError(path + ": empty file");
    if (line.rfind("\xEF\xBB\xBF", 0) == 0) line = line.substr(3);  // UTF-8 BOM
    line = valid_utf8(line);
    std::map<std::string, size_t> col;
    const auto head = csv_row(line);
    for (size_t i = 0; i < head.size(); ++i) col[trim(head[i])] = i;
    for (const char* need : {"OP Type", "Task Duration(us)", "Input Shapes"}) {
        if (!col.count(need)) throw InputError(path + ": not an op summary (no column '" + need + "')");
    }
    auto get = [&](const std::vector<std::string>& r, const char* c) -> std::string {
        auto it = col.find(c);
        return it != col.end() && it->second < r.size() ? trim(r[it->second]) : "";
    };
    struct Row {
        double start;
        size_t line;
        int64_t stream;
        json node;
        std::string source;
        double us;
    };
    std::vector<Row> rows;
    size_t lineno = 1;
    while (std::getline(f, line)) {
        ++lineno;
        line = valid_utf8(line);  // names go into JSON
        if (trim(line).empty()) continue;
        ++rep.events;
        const auto r = csv_row(line);
        const std::string type = get(r, "OP Type"), name = get(r, "Op Name");
        double us = 0;
        try {
            us = std::stod(get(r, "Task Duration(us)"));
        } catch (...) {
            rep.skip(type.empty() ? "line " + std::to_string(lineno) : type, "no numeric Task Duration(us)", 0);
            continue;
        }
        if (!std::isfinite(us) || us < 0) {  // a duration is a time span: never negative
            rep.skip(type.empty() ? "line " + std::to_string(lineno) : type,
                     "Task Duration(us) " + get(r, "Task Duration(us)") + " is negative or not finite", 0);
            continue;
        }
        rep.measured_us += us;
        auto it = type_map().find(type);
        if (it == type_map().end()) {
            rep.skip(type.empty() ? "(no type)" : type, "no sfumato mapping for this operator type", us);
            continue;
        }
        try {
            std::vector<std::vector<int64_t>> in, outs;
            try {
                in = shapes_of(get(r, "Input Shapes"));
                outs = shapes_of(get(r, "Output Shapes"));
            } catch (...) {
                no("Input/Output Shapes are not lists of integers");
            }
            std::vector<int> elems;
            for (const std::string& t : split(get(r, "Input Data Types"), ';')) {
                if (t.empty()) continue;
                auto e = elem_of_torch(t);
                if (!e) no("input data type '" + t + "' is not known");
                elems.push_back(*e);
            }
            if (elems.empty()) no("no input data types");
            if (it->second == "Cast") {
                auto e = elem_of_torch(split(get(r, "Output Data Types"), ';')[0]);
                if (!e) no("output data type is not known");
                elems.push_back(*e);
            }
            json n = row_node(type, it->second, name.empty() ? type : name, in, elems, outs, split(get(r, "Input Formats"), ';'));
            double start = rows.size();
            try {
                start = std::stod(get(r, "Task Start Time(us)"));
            } catch (...) {
            }
            int64_t stream = 0;
            try {
                stream = std::stoll(get(r, "Stream ID"));
            } catch (...) {
            }
            rows.push_back({start, lineno, stream, std::move(n), type + "#" + std::to_string(lineno), us});
        } catch (const std::string& why) {
            rep.skip(type, why, us);
        }
    }
    std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.start < b.start; });
    std::map<int64_t, uint32_t> sid;
    workload::Workload& w = out.w;
    w.description = "imported from " + path + " (vendor profiler op summary)";
    for (Row& r : rows) {
        if (!sid.count(r.stream)) {
            const uint32_t id = static_cast<uint32_t>(sid.size());
            sid[r.stream] = id;
            w.streams.push_back({id, 0});
        }
        workload::Task t;
        t.index = w.tasks.size();
        t.kind = workload::Kind::Kernel;
        t.stream = sid[r.stream];
        t.name = r.node.value("name", "");
        t.node = std::move(r.node);
        t.source = r.source;
        t.measured_us = r.us;
        w.tasks.push_back(std::move(t));
        ++rep.ops_mapped;
        rep.mapped_us += r.us;
    }
    rep.tasks = w.tasks.size();
    rep.finish();
    return out;
}

}  // namespace sfumato::import
