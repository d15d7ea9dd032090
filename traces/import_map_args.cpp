// Reading aten operators' arguments as a profiler recorded them (shapes, element types, Concrete
// Inputs) and building graph-node JSON: the helpers of traces/import_map*.cpp.
#include <cctype>

#include "runtime/ref/host_tensor.h"
#include "traces/import_map_detail.h"

namespace sfumato::import::detail {

[[noreturn]] void no(const std::string& why) { throw std::string(why); }

json tensor(const std::vector<int64_t>& shape, int elem) {
    ref::ElemType e = static_cast<ref::ElemType>(elem);
    isa::DType d = isa::DType::FP16;
    if (!ref::device_dtype(e, d)) no(std::string("element type ") + ref::elem_type_name(e) + " has no device form");
    return {{"shape", shape}, {"dtype", isa::dtype_name(d)}, {"elem", elem}};
}

const OpInput& arg(const ProfOp& op, size_t i) {
    if (i >= op.in.size()) no("input " + std::to_string(i) + " is missing");
    return op.in[i];
}

int elem_at(const ProfOp& op, size_t i) {
    const OpInput& a = arg(op, i);
    if (auto e = elem_of_torch(a.type)) return *e;
    no("input " + std::to_string(i) + " has no known tensor type ('" + a.type + "')");
}

// A tensor input with its shape (a 0-d tensor is a scalar: shape []).
json tin(const ProfOp& op, size_t i) {
    const OpInput& a = arg(op, i);
    if (!a.tensor) no("input " + std::to_string(i) + " is not a tensor (missing shapes?)");
    return tensor(a.shape, elem_at(op, i));
}

bool has_tensor(const ProfOp& op, size_t i) { return i < op.in.size() && op.in[i].tensor; }

std::vector<int64_t> shape_at(const ProfOp& op, size_t i) {
    const OpInput& a = arg(op, i);
    if (!a.tensor) no("input " + std::to_string(i) + " is not a tensor (missing shapes?)");
    return a.shape;
}

std::vector<int64_t> ints_of(const std::string& s0) {
    std::vector<int64_t> v;
    std::string num;
    for (char c : s0 + ",") {
        if (std::isdigit(static_cast<unsigned char>(c)) || c == '-') num += c;
        else if (!num.empty()) {
            try {
                v.push_back(std::stoll(num));
            } catch (...) {
                no("'" + s0 + "' is not a list of integers");
            }
            num.clear();
        }
    }
    return v;
}

// A scalar or list argument from Concrete Inputs; dflt when absent.
std::vector<int64_t> ints_at(const ProfOp& op, size_t i, std::vector<int64_t> dflt, size_t n) {
    if (i >= op.in.size() || op.in[i].concrete.empty()) return dflt;
    const std::string& c = op.in[i].concrete;
    if (c == "[]" || c == "None" || c == "()") return dflt;  // an empty list: the default (e.g. all axes)
    if (c.find_first_of("0123456789") == std::string::npos) no("argument " + std::to_string(i) + " ('" + c + "') is not numeric");
    std::vector<int64_t> v = ints_of(c);
    if (n && v.size() == 1) v.assign(n, v[0]);
    return v;
}
int64_t int_at(const ProfOp& op, size_t i, int64_t dflt) {
    auto v = ints_at(op, i, {dflt});
    return v.empty() ? dflt : v[0];
}
bool bool_at(const ProfOp& op, size_t i, bool dflt) {
    if (i >= op.in.size() || op.in[i].concrete.empty()) return dflt;
    const std::string& c = op.in[i].concrete;
    return c == "True" || c == "true" || c == "1";
}

// Whether an operator's scalar arguments were recorded (Kineto's Concrete Inputs, PyTorch 2.1+).
bool has_concrete(const ProfOp& op) {
    for (const OpInput& a : op.in)
        if (!a.concrete.empty()) return true;
    return false;
}

json node(const std::string& type, const std::string& name, json attrs, json inputs) {
    return {{"op_type", type}, {"name", name}, {"attrs", std::move(attrs)}, {"inputs", std::move(inputs)}};
}
json ints_attr(const std::vector<int64_t>& v) { return {{"ints", v}}; }
json int_attr(int64_t v) { return {{"int", v}}; }

int64_t norm_axis(int64_t axis, size_t rank) { return axis < 0 ? axis + static_cast<int64_t>(rank) : axis; }

int64_t numel_of(const std::vector<int64_t>& s) {
    int64_t n = 1;
    for (int64_t d : s) {
        if (d < 0 || (d > 0 && n > (int64_t{1} << 40) / d)) no("tensor size out of range");
        n *= d;
    }
    return n;
}

void need_broadcast(const std::vector<json>& ins) {
    std::vector<int64_t> out;
    for (const json& t : ins) {
        const auto s = t["shape"].get<std::vector<int64_t>>();
        if (s.size() > out.size()) out.insert(out.begin(), s.size() - out.size(), 1);
        for (size_t k = 0; k < s.size(); ++k) {
            int64_t& o = out[out.size() - s.size() + k];
            if (s[k] == o || s[k] == 1) continue;
            if (o != 1) no("the recorded operand shapes do not broadcast (" + t["shape"].dump() + "): not this operator's schema");
            o = s[k];
        }
    }
}

}  // namespace sfumato::import::detail
