// aten operators as graph nodes (traces/import.h): each forward operator becomes the ONNX node
// of the operator library that does its work, with the trace's shapes and element types and the
// attributes its scalar inputs give (Kineto's Concrete Inputs); backward operators become the
// nodes that cost what they do: a convolution's input gradient a ConvTranspose of the output
// gradient and its weight gradient a MatMul of the output gradient with the im2col of the input
// (the im2col itself not counted), elementwise backward ops an elementwise op with the same
// operands, normalisation backward ops the forward normalisation. Views and bookkeeping cost
// nothing. Argument positions follow the aten schemas (native_functions.yaml).
#include <algorithm>
#include <set>

#include "runtime/ref/host_tensor.h"
#include "traces/import.h"

namespace sfumato::import {

using nlohmann::json;

std::optional<int> elem_of_torch(const std::string& t0) {
    std::string t;
    for (char c : t0) t += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (const std::string p : {"c10::", "dt_", "torch."}) {
        if (t.rfind(p, 0) == 0) t = t.substr(p.size());
    }
    using E = ref::ElemType;
    static const std::map<std::string, E> m = {
        {"float", E::Float},      {"float32", E::Float},      {"half", E::Float16},   {"float16", E::Float16},
        {"bfloat16", E::Bfloat16}, {"bf16", E::Bfloat16},     {"double", E::Double},  {"float64", E::Double},
        {"long int", E::Int64},   {"long", E::Int64},         {"int64", E::Int64},    {"int64_t", E::Int64},
        {"int", E::Int32},        {"int32", E::Int32},        {"short int", E::Int16}, {"int16", E::Int16},
        {"signed char", E::Int8}, {"int8", E::Int8},          {"unsigned char", E::Uint8}, {"uint8", E::Uint8},
        {"bool", E::Bool},        {"fp16", E::Float16},       {"fp32", E::Float}};
    auto it = m.find(t);
    if (it == m.end()) return std::nullopt;
    return static_cast<int>(it->second);
}

namespace {

const std::set<std::string>& free_ops() {
    static const std::set<std::string> s = {
        "aten::view", "aten::_unsafe_view", "aten::reshape", "aten::as_strided", "aten::empty", "aten::empty_like",
        "aten::empty_strided", "aten::detach", "aten::detach_", "aten::t", "aten::transpose", "aten::permute",
        "aten::expand", "aten::expand_as", "aten::unsqueeze", "aten::squeeze", "aten::slice", "aten::select",
        "aten::split", "aten::split_with_sizes", "aten::chunk", "aten::unbind", "aten::narrow", "aten::flatten",
        "aten::alias", "aten::lift_fresh", "aten::resize_", "aten::set_", "aten::numpy_T", "aten::view_as",
        "aten::unflatten", "aten::to", "aten::_to_copy_meta", "aten::result_type", "aten::size", "aten::stride",
        "aten::is_nonzero", "aten::item", "aten::_local_scalar_dense", "aten::contiguous_meta", "aten::dim",
        "aten::_reshape_alias", "aten::_has_compatible_shallow_copy_type", "aten::record_stream", "aten::new_empty",
        "aten::new_empty_strided", "aten::movedim", "aten::swapaxes", "aten::mT", "aten::matrix_H", "aten::diagonal"};
    return s;
}

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
std::vector<int64_t> ints_at(const ProfOp& op, size_t i, std::vector<int64_t> dflt, size_t n = 0) {
    if (i >= op.in.size() || op.in[i].concrete.empty()) return dflt;
    const std::string& c = op.in[i].concrete;
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

json node(const std::string& type, const std::string& name, json attrs, json inputs) {
    return {{"op_type", type}, {"name", name}, {"attrs", std::move(attrs)}, {"inputs", std::move(inputs)}};
}
json ints_attr(const std::vector<int64_t>& v) { return {{"ints", v}}; }
json int_attr(int64_t v) { return {{"int", v}}; }

int64_t norm_axis(int64_t axis, size_t rank) { return axis < 0 ? axis + static_cast<int64_t>(rank) : axis; }

Mapping conv(const ProfOp& op, size_t stride_i, size_t pad_i, size_t dil_i, size_t transposed_i, size_t group_i) {
    const auto x = shape_at(op, 0), w = shape_at(op, 1);
    if (x.size() < 3 || x.size() > 4 || w.size() != x.size()) no("only 1-D and 2-D convolutions are mapped");
    const size_t sp = x.size() - 2;
    const auto strides = ints_at(op, stride_i, std::vector<int64_t>(sp, 1), sp);
    auto pads = ints_at(op, pad_i, std::vector<int64_t>(sp, 0), sp);
    const auto dil = ints_at(op, dil_i, std::vector<int64_t>(sp, 1), sp);
    const bool transposed = transposed_i && bool_at(op, transposed_i, false);
    const int64_t group = int_at(op, group_i, 1);
    if (strides.size() != sp || pads.size() != sp || dil.size() != sp) no("stride/padding/dilation do not match the rank");
    std::vector<int64_t> onnx_pads = pads;
    onnx_pads.insert(onnx_pads.end(), pads.begin(), pads.end());
    json ins = {tin(op, 0), tin(op, 1)};
    if (has_tensor(op, 2)) ins.push_back(tin(op, 2));
    Mapping m;
    m.nodes.push_back(node(transposed ? "ConvTranspose" : "Conv", op.name,
                           {{"strides", ints_attr(strides)}, {"pads", ints_attr(onnx_pads)},
                            {"dilations", ints_attr(dil)}, {"group", int_attr(group)}},
                           ins));
    return m;
}

// convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation,
// transposed, output_padding, groups, output_mask)
Mapping conv_backward(const ProfOp& op) {
    const auto gy = shape_at(op, 0), x = shape_at(op, 1), w = shape_at(op, 2);
    if (x.size() != 4 || gy.size() != 4 || w.size() != 4) no("only 2-D convolution backward is mapped");
    if (bool_at(op, 7, false)) no("transposed convolution backward is not mapped");
    const auto strides = ints_at(op, 4, {1, 1}, 2), pads = ints_at(op, 5, {0, 0}, 2), dil = ints_at(op, 6, {1, 1}, 2);
    const int64_t group = int_at(op, 9, 1);
    std::vector<int64_t> mask = {1, 1, 0};
    if (op.in.size() > 10 && !op.in[10].concrete.empty()) {
        const std::string& c = op.in[10].concrete;
        mask.clear();
        size_t p = 0;
        while ((p = c.find_first_of("TF", p)) != std::string::npos) mask.push_back(c[p++] == 'T');
    }
    const int elem = elem_at(op, 0);
    Mapping m;
    if (!mask.empty() && mask[0]) {
        // dX = ConvTranspose(dY, W) with the forward's geometry; output_padding recovers H, W.
        std::vector<int64_t> outpad(2, 0);
        for (int d = 0; d < 2; ++d) {
            const int64_t eff = dil[d] * (w[2 + d] - 1) + 1;
            const int64_t full = (gy[2 + d] - 1) * strides[d] - 2 * pads[d] + eff;
            outpad[d] = std::max<int64_t>(0, x[2 + d] - full);
        }
        m.nodes.push_back(node("ConvTranspose", op.name + " (input grad)",
                               {{"strides", ints_attr(strides)}, {"pads", ints_attr({pads[0], pads[1], pads[0], pads[1]})},
                                {"dilations", ints_attr(dil)}, {"group", int_attr(group)}, {"output_padding", ints_attr(outpad)}},
                               json::array({tensor(gy, elem), tensor(w, elem)})));
    }
    if (mask.size() > 1 && mask[1]) {
        // dW[g] (Co/g x Ci/g*kh*kw) = dY[g] (Co/g x N*Ho*Wo) x im2col(X)[g] (N*Ho*Wo x Ci/g*kh*kw)
        const int64_t npix = gy[0] * gy[2] * gy[3];
        const int64_t co = gy[1] / std::max<int64_t>(group, 1), k = w[1] * w[2] * w[3];
        m.nodes.push_back(node("MatMul", op.name + " (weight grad)", json::object(),
                               json::array({tensor({group, co, npix}, elem), tensor({group, npix, k}, elem)})));
    }
    if (m.nodes.empty()) no("no gradient asked for (output_mask)");
    return m;
}

Mapping unary(const ProfOp& op, const std::string& type) {
    Mapping m;
    m.nodes.push_back(node(type, op.name, json::object(), json::array({tin(op, 0)})));
    return m;
}

// A binary elementwise op; a scalar second operand becomes a 1-element tensor.
Mapping binary(const ProfOp& op, const std::string& type) {
    json a = tin(op, 0);
    json b;
    if (has_tensor(op, 1)) b = tin(op, 1);
    else b = tensor({1}, elem_at(op, 0));
    Mapping m;
    m.nodes.push_back(node(type, op.name, json::object(), json::array({a, b})));
    return m;
}

// Elementwise backward ops read two tensors of one shape and write one: a Mul's traffic.
Mapping ew_backward(const ProfOp& op) {
    json a = tin(op, 0);
    json b = has_tensor(op, 1) ? tin(op, 1) : a;
    Mapping m;
    m.nodes.push_back(node("Mul", op.name, json::object(), json::array({a, b})));
    return m;
}

Mapping matmul(const ProfOp& op, size_t a, size_t b, bool gemm_bias_first) {
    const auto sa = shape_at(op, a), sb = shape_at(op, b);
    if (sa.empty() || sb.empty()) no("matmul of a 0-d tensor");
    Mapping m;
    json ins = {tin(op, a), tin(op, b)};
    if (gemm_bias_first && has_tensor(op, 0) && sa.size() == 2 && sb.size() == 2) {
        ins.push_back(tin(op, 0));
        m.nodes.push_back(node("Gemm", op.name, json::object(), ins));
    } else {
        m.nodes.push_back(node("MatMul", op.name, json::object(), ins));
    }
    return m;
}

Mapping linear(const ProfOp& op) {
    const auto x = shape_at(op, 0), w = shape_at(op, 1);
    if (w.size() != 2) no("linear weight must be 2-D");
    const int elem = elem_at(op, 0);
    Mapping m;
    if (x.size() == 2) {
        json ins = {tin(op, 0), tin(op, 1)};
        if (has_tensor(op, 2)) ins.push_back(tin(op, 2));
        m.nodes.push_back(node("Gemm", op.name, {{"transB", int_attr(1)}}, ins));
    } else {
        m.nodes.push_back(node("MatMul", op.name, json::object(), json::array({tin(op, 0), tensor({w[1], w[0]}, elem)})));
    }
    return m;
}

Mapping softmax(const ProfOp& op, const std::string& type) {
    const auto x = shape_at(op, 0);
    Mapping m;
    m.nodes.push_back(node(type, op.name, {{"axis", int_attr(norm_axis(int_at(op, 1, -1), x.size()))}}, json::array({tin(op, 0)})));
    return m;
}

Mapping layer_norm(const ProfOp& op, size_t x_i, size_t shape_i) {
    const auto x = shape_at(op, x_i);
    std::vector<int64_t> ns = ints_at(op, shape_i, {});
    if (ns.empty() || ns.size() > x.size()) ns = {x.back()};
    const int elem = elem_at(op, x_i);
    Mapping m;
    m.nodes.push_back(node("LayerNormalization", op.name, {{"axis", int_attr(static_cast<int64_t>(x.size() - ns.size()))}},
                           json::array({tin(op, x_i), tensor(ns, elem), tensor(ns, elem)})));
    return m;
}

Mapping batch_norm(const ProfOp& op, size_t x_i) {
    const auto x = shape_at(op, x_i);
    if (x.size() < 2) no("batch norm of a tensor of rank < 2");
    const int elem = elem_at(op, x_i);
    const json c = tensor({x[1]}, ref::is_float(static_cast<ref::ElemType>(elem)) ? elem : static_cast<int>(ref::ElemType::Float));
    Mapping m;
    m.nodes.push_back(node("BatchNormalization", op.name, json::object(), json::array({tin(op, x_i), c, c, c, c})));
    return m;
}

Mapping pool(const ProfOp& op, const std::string& type, bool has_dilation) {
    const auto x = shape_at(op, 0);
    if (x.size() != 4) no("only 2-D pooling is mapped");
    const auto k = ints_at(op, 1, {}, 2);
    if (k.size() != 2) no("kernel_size is unknown (no Concrete Inputs)");
    auto s = ints_at(op, 2, k, 2);
    if (s.empty()) s = k;
    const auto p = ints_at(op, 3, {0, 0}, 2);
    json attrs = {{"kernel_shape", ints_attr(k)}, {"strides", ints_attr(s)}, {"pads", ints_attr({p[0], p[1], p[0], p[1]})}};
    if (has_dilation) {
        attrs["dilations"] = ints_attr(ints_at(op, 4, {1, 1}, 2));
        attrs["ceil_mode"] = int_attr(bool_at(op, 5, false));
    } else {
        attrs["ceil_mode"] = int_attr(bool_at(op, 4, false));
        attrs["count_include_pad"] = int_attr(bool_at(op, 5, true));
    }
    Mapping m;
    m.nodes.push_back(node(type, op.name, attrs, json::array({tin(op, 0)})));
    return m;
}

Mapping adaptive_avg(const ProfOp& op) {
    const auto x = shape_at(op, 0);
    if (x.size() != 4) no("only 2-D adaptive pooling is mapped");
    const auto o = ints_at(op, 1, {1, 1}, 2);
    Mapping m;
    if (o == std::vector<int64_t>{1, 1}) {
        m.nodes.push_back(node("GlobalAveragePool", op.name, json::object(), json::array({tin(op, 0)})));
        return m;
    }
    if (o.size() != 2 || o[0] <= 0 || o[1] <= 0 || x[2] % o[0] || x[3] % o[1]) no("adaptive pooling to a size that does not divide the input");
    const std::vector<int64_t> k = {x[2] / o[0], x[3] / o[1]};
    m.nodes.push_back(node("AveragePool", op.name, {{"kernel_shape", ints_attr(k)}, {"strides", ints_attr(k)}}, json::array({tin(op, 0)})));
    return m;
}

Mapping reduce(const ProfOp& op, const std::string& type) {
    const auto x = shape_at(op, 0);
    std::vector<int64_t> axes = ints_at(op, 1, {});
    if (axes.empty())
        for (size_t i = 0; i < x.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    for (auto& a : axes) a = norm_axis(a, x.size());
    Mapping m;
    m.nodes.push_back(node(type, op.name, {{"axes", ints_attr(axes)}, {"keepdims", int_attr(bool_at(op, 2, false))}},
                           json::array({tin(op, 0)})));
    return m;
}

Mapping cat(const ProfOp& op) {
    const OpInput& l = arg(op, 0);
    if (!l.is_list || l.list.empty()) no("the tensor list's shapes are missing");
    auto e = elem_of_torch(l.type);
    if (!e) e = static_cast<int>(ref::ElemType::Float);
    json ins = json::array();
    for (const auto& s : l.list) ins.push_back(tensor(s, *e));
    const int64_t axis = norm_axis(int_at(op, 1, 0), l.list[0].size());
    Mapping m;
    m.nodes.push_back(node("Concat", op.name, {{"axis", int_attr(axis)}}, ins));
    return m;
}

Mapping copy(const ProfOp& op, size_t src) {
    Mapping m;
    m.nodes.push_back(node("Copy", op.name, json::object(), json::array({tin(op, src)})));
    return m;
}

Mapping embedding(const ProfOp& op) {
    Mapping m;
    m.nodes.push_back(node("Gather", op.name, {{"axis", int_attr(0)}}, json::array({tin(op, 0), tin(op, 1)})));
    return m;
}

using Fn = Mapping (*)(const ProfOp&);
const std::map<std::string, Fn>& table() {
    static const std::map<std::string, Fn> t = {
        {"aten::mm", [](const ProfOp& o) { return matmul(o, 0, 1, false); }},
        {"aten::bmm", [](const ProfOp& o) { return matmul(o, 0, 1, false); }},
        {"aten::matmul", [](const ProfOp& o) { return matmul(o, 0, 1, false); }},
        {"aten::addmm", [](const ProfOp& o) { return matmul(o, 1, 2, true); }},
        {"aten::baddbmm", [](const ProfOp& o) { return matmul(o, 1, 2, false); }},
        {"aten::linear", linear},
        {"aten::conv1d", [](const ProfOp& o) { return conv(o, 3, 4, 5, 0, 6); }},
        {"aten::conv2d", [](const ProfOp& o) { return conv(o, 3, 4, 5, 0, 6); }},
        {"aten::convolution", [](const ProfOp& o) { return conv(o, 3, 4, 5, 6, 8); }},
        {"aten::_convolution", [](const ProfOp& o) { return conv(o, 3, 4, 5, 6, 8); }},
        {"aten::conv_transpose2d", [](const ProfOp& o) { return conv(o, 3, 4, 6, 0, 6); }},
        {"aten::convolution_backward", conv_backward},
        {"aten::add", [](const ProfOp& o) { return binary(o, "Add"); }},
        {"aten::add_", [](const ProfOp& o) { return binary(o, "Add"); }},
        {"aten::sub", [](const ProfOp& o) { return binary(o, "Sub"); }},
        {"aten::sub_", [](const ProfOp& o) { return binary(o, "Sub"); }},
        {"aten::rsub", [](const ProfOp& o) { return binary(o, "Sub"); }},
        {"aten::mul", [](const ProfOp& o) { return binary(o, "Mul"); }},
        {"aten::mul_", [](const ProfOp& o) { return binary(o, "Mul"); }},
        {"aten::div", [](const ProfOp& o) { return binary(o, "Div"); }},
        {"aten::div_", [](const ProfOp& o) { return binary(o, "Div"); }},
        {"aten::relu", [](const ProfOp& o) { return unary(o, "Relu"); }},
        {"aten::relu_", [](const ProfOp& o) { return unary(o, "Relu"); }},
        {"aten::gelu", [](const ProfOp& o) { return unary(o, "Gelu"); }},
        {"aten::sigmoid", [](const ProfOp& o) { return unary(o, "Sigmoid"); }},
        {"aten::tanh", [](const ProfOp& o) { return unary(o, "Tanh"); }},
        {"aten::exp", [](const ProfOp& o) { return unary(o, "Exp"); }},
        {"aten::sqrt", [](const ProfOp& o) { return unary(o, "Sqrt"); }},
        {"aten::rsqrt", [](const ProfOp& o) { return unary(o, "Sqrt"); }},
        {"aten::neg", [](const ProfOp& o) { return unary(o, "Neg"); }},
        {"aten::threshold_backward", ew_backward},
        {"aten::gelu_backward", ew_backward},
        {"aten::sigmoid_backward", ew_backward},
        {"aten::tanh_backward", ew_backward},
        {"aten::_softmax_backward_data", ew_backward},
        {"aten::native_dropout", ew_backward},
        {"aten::native_dropout_backward", ew_backward},
        {"aten::softmax", [](const ProfOp& o) { return softmax(o, "Softmax"); }},
        {"aten::_softmax", [](const ProfOp& o) { return softmax(o, "Softmax"); }},
        {"aten::log_softmax", [](const ProfOp& o) { return softmax(o, "LogSoftmax"); }},
        {"aten::_log_softmax", [](const ProfOp& o) { return softmax(o, "LogSoftmax"); }},
        {"aten::layer_norm", [](const ProfOp& o) { return layer_norm(o, 0, 1); }},
        {"aten::native_layer_norm", [](const ProfOp& o) { return layer_norm(o, 0, 1); }},
        {"aten::native_layer_norm_backward", [](const ProfOp& o) { return layer_norm(o, 1, 2); }},
        {"aten::batch_norm", [](const ProfOp& o) { return batch_norm(o, 0); }},
        {"aten::native_batch_norm", [](const ProfOp& o) { return batch_norm(o, 0); }},
        {"aten::cudnn_batch_norm", [](const ProfOp& o) { return batch_norm(o, 0); }},
        {"aten::_batch_norm_impl_index", [](const ProfOp& o) { return batch_norm(o, 0); }},
        {"aten::native_batch_norm_backward", [](const ProfOp& o) { return batch_norm(o, 1); }},
        {"aten::cudnn_batch_norm_backward", [](const ProfOp& o) { return batch_norm(o, 0); }},
        {"aten::max_pool2d", [](const ProfOp& o) { return pool(o, "MaxPool", true); }},
        {"aten::max_pool2d_with_indices", [](const ProfOp& o) { return pool(o, "MaxPool", true); }},
        {"aten::avg_pool2d", [](const ProfOp& o) { return pool(o, "AveragePool", false); }},
        {"aten::adaptive_avg_pool2d", adaptive_avg},
        {"aten::_adaptive_avg_pool2d", adaptive_avg},
        {"aten::sum", [](const ProfOp& o) { return reduce(o, "ReduceSum"); }},
        {"aten::mean", [](const ProfOp& o) { return reduce(o, "ReduceMean"); }},
        {"aten::cat", cat},
        {"aten::copy_", [](const ProfOp& o) { return copy(o, 1); }},
        {"aten::clone", [](const ProfOp& o) { return copy(o, 0); }},
        {"aten::contiguous", [](const ProfOp& o) { return copy(o, 0); }},
        {"aten::embedding", embedding},
    };
    return t;
}

}  // namespace

bool is_free_aten(const std::string& name) { return free_ops().count(name) != 0; }
bool mappable_aten(const std::string& name) { return table().count(name) != 0; }

Mapping map_aten(const ProfOp& op) {
    Mapping m;
    if (is_free_aten(op.name)) {
        m.free = true;
        return m;
    }
    auto it = table().find(op.name);
    if (it == table().end()) {
        m.why = "no sfumato mapping for this operator";
        return m;
    }
    try {
        return it->second(op);
    } catch (const std::string& why) {
        m.nodes.clear();
        m.why = why;
    }
    return m;
}

void Report::skip(const std::string& what, const std::string& why, double us) {
    for (Skip& s : skipped) {
        if (s.what == what && s.why == why) {
            ++s.count;
            s.measured_us += us;
            return;
        }
    }
    skipped.push_back({what, why, 1, us});
}

void Report::finish() {
    std::stable_sort(skipped.begin(), skipped.end(), [](const Skip& a, const Skip& b) {
        return a.measured_us != b.measured_us ? a.measured_us > b.measured_us : a.count > b.count;
    });
}

}  // namespace sfumato::import
