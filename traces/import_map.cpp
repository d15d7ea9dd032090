// aten operators as graph nodes (traces/import.h): each forward operator becomes the ONNX node
// of the operator library that does its work, with the trace's shapes and element types and the
// attributes its scalar inputs give (Kineto's Concrete Inputs); training operators (backward
// ops, optimizer steps) are mapped in import_map_train.cpp; normalisation backward ops as the
// forward normalisation. fill_/zero_ become an Expand of one element (writes only). Ops whose
// cost is their memory traffic and that have no operator of their own are mapped to an
// elementwise op of the same operands (clamp as Relu, lerp as Sub, addcmul/addcdiv as a
// two-step chain). Views and bookkeeping cost nothing. Argument positions follow the aten
// schemas (native_functions.yaml).
#include <algorithm>
#include <set>

#include "runtime/ref/host_tensor.h"
#include "traces/import.h"
#include "traces/import_map_detail.h"

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

using namespace detail;

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

Mapping conv(const ProfOp& op, size_t stride_i, size_t pad_i, size_t dil_i, size_t transposed_i, size_t group_i) {
    const auto x = shape_at(op, 0), w = shape_at(op, 1);
    if (x.size() < 3 || x.size() > 4 || w.size() != x.size()) no("only 1-D and 2-D convolutions are mapped");
    const size_t sp = x.size() - 2;
    std::vector<int64_t> strides, pads, dil;
    bool transposed = false;
    int64_t group = 1;
    if (has_concrete(op)) {
        strides = ints_at(op, stride_i, std::vector<int64_t>(sp, 1), sp);
        pads = ints_at(op, pad_i, std::vector<int64_t>(sp, 0), sp);
        dil = ints_at(op, dil_i, std::vector<int64_t>(sp, 1), sp);
        transposed = transposed_i && bool_at(op, transposed_i, false);
        group = int_at(op, group_i, 1);
    } else {
        // No scalar arguments recorded (before PyTorch 2.1): the geometry from the output's shape,
        // known from the backward of the same convolution: stride = ceil(in / out), "same" padding.
        const auto& y = op.out_hint;
        if (y.size() != x.size())
            no("stride and padding unknown: no Concrete Inputs, and no backward of this convolution in the trace to infer them from");
        for (size_t d = 0; d < sp; ++d) {
            if (y[2 + d] <= 0) no("an empty output");
            strides.push_back(std::max<int64_t>(1, (x[2 + d] + y[2 + d] - 1) / y[2 + d]));
            pads.push_back((w[2 + d] - 1) / 2);
            dil.push_back(1);
        }
        if (w[1] > 0 && x[1] != w[1]) group = x[1] / w[1];
    }
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
    need_broadcast({a, b});
    Mapping m;
    m.nodes.push_back(node(type, op.name, json::object(), json::array({a, b})));
    return m;
}

Mapping matmul(const ProfOp& op, size_t a, size_t b, bool gemm_bias_first) {
    const auto sa = shape_at(op, a), sb = shape_at(op, b);
    if (sa.empty() || sb.empty()) no("matmul of a 0-d tensor");
    if (sa.back() != (sb.size() == 1 ? sb[0] : sb[sb.size() - 2]))
        no("the recorded operand shapes do not fit a matrix product: not this operator's schema");
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
    if (op.in.size() > 3 || x.empty() || x.back() != w[1] || (has_tensor(op, 2) && shape_at(op, 2) != std::vector<int64_t>{w[0]}))
        no("the recorded inputs do not fit linear(input, weight, bias): not this operator's schema");
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
    // The attribute form: ReduceSum reads its axes from an input from opset 13 (the default
    // opset of a workload node is 17), where the attribute would be refused.
    m.nodes.back()["opset"] = 11;
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

// self + value * t1 (*|/) t2 (addcmul, addcdiv): t1 (*|/) t2, then + self.
Mapping addc(const ProfOp& op, const char* step) {
    Mapping m;
    m.nodes.push_back(node("ElementwiseChain", op.name, {{"program", {{"strings", {step, "Add"}}}}},
                           json::array({tin(op, 1), tin(op, 2), tin(op, 0)})));
    return m;
}

// A scalar-valued fill: an Expand of one element to the tensor's shape (writes only).
Mapping fill(const ProfOp& op) {
    const auto x = shape_at(op, 0);
    const int elem = elem_at(op, 0);
    json n = node("Expand", op.name, json::object(),
                  json::array({tensor({1}, elem), tensor({static_cast<int64_t>(x.size())}, static_cast<int>(ref::ElemType::Int64))}));
    std::vector<double> v(x.begin(), x.end());
    n["constants"] = {{"1", {{"elem", static_cast<int>(ref::ElemType::Int64)}, {"shape", json::array({x.size()})}, {"data", v}}}};
    Mapping m;
    m.nodes.push_back(std::move(n));
    return m;
}

Mapping where(const ProfOp& op) {
    Mapping m;
    json b = has_tensor(op, 2) ? tin(op, 2) : tensor({1}, elem_at(op, 1));
    if (op.in.size() > 3) no("the recorded inputs do not fit where(condition, self, other): not this operator's schema");
    need_broadcast({tin(op, 0), tin(op, 1), b});
    m.nodes.push_back(node("Where", op.name, json::object(), json::array({tin(op, 0), tin(op, 1), b})));
    return m;
}

Mapping silu(const ProfOp& op) {
    Mapping m;
    m.nodes.push_back(node("ElementwiseChain", op.name, {{"program", {{"strings", {"Sigmoid", "Mul"}}}}},
                           json::array({tin(op, 0), tin(op, 0)})));
    return m;
}

// mse_loss(self, target, reduction): the difference, then a full reduction (none: no reduction).
Mapping mse_loss(const ProfOp& op) {
    const auto x = shape_at(op, 0);
    Mapping m;
    m.nodes.push_back(node("Sub", op.name + " (difference)", json::object(), json::array({tin(op, 0), tin(op, 1)})));
    if (int_at(op, 2, 1) != 0) {
        std::vector<int64_t> axes;
        for (size_t i = 0; i < x.size(); ++i) axes.push_back(static_cast<int64_t>(i));
        m.nodes.push_back(node("ReduceMean", op.name + " (reduction)", {{"axes", ints_attr(axes)}, {"keepdims", int_attr(0)}},
                               json::array({tin(op, 0)})));
    }
    return m;
}

// _scaled_dot_product_{flash,efficient}_attention(query, key, value, ...): FusedAttention;
// is_causal is argument 4 (flash: dropout_p 3, is_causal 4; efficient: attn_bias 3,
// compute_log_sumexp 4, dropout_p 5, is_causal 6).
Mapping sdpa(const ProfOp& op, size_t causal_i) {
    const auto q = shape_at(op, 0);
    if (q.size() != 4) no("attention on rank-" + std::to_string(q.size()) + " tensors");
    Mapping m;
    json attrs = {{"causal", int_attr(bool_at(op, causal_i, false))}};
    m.nodes.push_back(node("FusedAttention", op.name, attrs, json::array({tin(op, 0), tin(op, 1), tin(op, 2)})));
    return m;
}

Mapping index_select(const ProfOp& op) {
    const auto x = shape_at(op, 0);
    Mapping m;
    m.nodes.push_back(node("Gather", op.name, {{"axis", int_attr(norm_axis(int_at(op, 1, 0), x.size()))}},
                           json::array({tin(op, 0), tin(op, 2)})));
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
        {"aten::_to_copy", [](const ProfOp& o) { return copy(o, 0); }},
        {"aten::cudnn_convolution_backward",
         [](const ProfOp& o) { return conv_backward_at(o, 1, 0, 2, 4, 3, 5, -1, 6, 10); }},
        {"aten::addcmul", [](const ProfOp& o) { return addc(o, "Mul"); }},
        {"aten::addcmul_", [](const ProfOp& o) { return addc(o, "Mul"); }},
        {"aten::addcdiv", [](const ProfOp& o) { return addc(o, "Div"); }},
        {"aten::addcdiv_", [](const ProfOp& o) { return addc(o, "Div"); }},
        {"aten::lerp", [](const ProfOp& o) { return binary(o, "Sub"); }},
        {"aten::lerp_", [](const ProfOp& o) { return binary(o, "Sub"); }},
        {"aten::pow", [](const ProfOp& o) { return binary(o, "Pow"); }},
        {"aten::maximum", [](const ProfOp& o) { return binary(o, "Max"); }},
        {"aten::minimum", [](const ProfOp& o) { return binary(o, "Min"); }},
        {"aten::clamp", [](const ProfOp& o) { return unary(o, "Relu"); }},
        {"aten::clamp_", [](const ProfOp& o) { return unary(o, "Relu"); }},
        {"aten::clamp_min", [](const ProfOp& o) { return unary(o, "Relu"); }},
        {"aten::clamp_min_", [](const ProfOp& o) { return unary(o, "Relu"); }},
        {"aten::clamp_max", [](const ProfOp& o) { return unary(o, "Relu"); }},
        {"aten::clamp_max_", [](const ProfOp& o) { return unary(o, "Relu"); }},
        {"aten::nan_to_num", [](const ProfOp& o) { return unary(o, "Relu"); }},
        {"aten::nan_to_num_", [](const ProfOp& o) { return unary(o, "Relu"); }},
        {"aten::abs", [](const ProfOp& o) { return unary(o, "Abs"); }},
        {"aten::log", [](const ProfOp& o) { return unary(o, "Log"); }},
        {"aten::reciprocal", [](const ProfOp& o) { return unary(o, "Reciprocal"); }},
        {"aten::erf", [](const ProfOp& o) { return unary(o, "Erf"); }},
        {"aten::sqrt_", [](const ProfOp& o) { return unary(o, "Sqrt"); }},
        {"aten::exp_", [](const ProfOp& o) { return unary(o, "Exp"); }},
        {"aten::sigmoid_", [](const ProfOp& o) { return unary(o, "Sigmoid"); }},
        {"aten::tanh_", [](const ProfOp& o) { return unary(o, "Tanh"); }},
        {"aten::neg_", [](const ProfOp& o) { return unary(o, "Neg"); }},
        {"aten::leaky_relu", [](const ProfOp& o) { return unary(o, "LeakyRelu"); }},
        {"aten::leaky_relu_", [](const ProfOp& o) { return unary(o, "LeakyRelu"); }},
        {"aten::hardswish", [](const ProfOp& o) { return unary(o, "HardSwish"); }},
        {"aten::hardswish_", [](const ProfOp& o) { return unary(o, "HardSwish"); }},
        {"aten::hardsigmoid", [](const ProfOp& o) { return unary(o, "HardSigmoid"); }},
        {"aten::elu", [](const ProfOp& o) { return unary(o, "Elu"); }},
        {"aten::softplus", [](const ProfOp& o) { return unary(o, "Softplus"); }},
        {"aten::silu", silu},
        {"aten::silu_", silu},
        {"aten::where", where},
        {"aten::fill_", fill},
        {"aten::zero_", fill},
        {"aten::mse_loss", mse_loss},
        {"aten::index_select", index_select},
        {"aten::_scaled_dot_product_flash_attention", [](const ProfOp& o) { return sdpa(o, 4); }},
        {"aten::_scaled_dot_product_efficient_attention", [](const ProfOp& o) { return sdpa(o, 6); }},
        {"aten::_scaled_dot_product_flash_attention_backward", sdpa_backward},
        {"aten::_scaled_dot_product_efficient_attention_backward", sdpa_backward},
        {"aten::_fused_adam_", fused_adam},
        {"aten::_fused_adamw_", fused_adam},
        {"aten::_foreach_add_", [](const ProfOp& o) { return foreach(o, "Add"); }},
        {"aten::_foreach_add", [](const ProfOp& o) { return foreach(o, "Add"); }},
        {"aten::_foreach_sub_", [](const ProfOp& o) { return foreach(o, "Sub"); }},
        {"aten::_foreach_mul_", [](const ProfOp& o) { return foreach(o, "Mul"); }},
        {"aten::_foreach_mul", [](const ProfOp& o) { return foreach(o, "Mul"); }},
        {"aten::_foreach_div_", [](const ProfOp& o) { return foreach(o, "Div"); }},
        {"aten::_foreach_div", [](const ProfOp& o) { return foreach(o, "Div"); }},
        {"aten::_foreach_lerp_", [](const ProfOp& o) { return foreach(o, "Sub"); }},
        {"aten::_foreach_sqrt", [](const ProfOp& o) { return foreach(o, "Sqrt"); }},
        {"aten::_foreach_sqrt_", [](const ProfOp& o) { return foreach(o, "Sqrt"); }},
        {"aten::_foreach_neg", [](const ProfOp& o) { return foreach(o, "Neg"); }},
        {"aten::_foreach_neg_", [](const ProfOp& o) { return foreach(o, "Neg"); }},
        {"aten::_foreach_reciprocal_", [](const ProfOp& o) { return foreach(o, "Reciprocal"); }},
        {"aten::_foreach_addcmul_", [](const ProfOp& o) { return foreach(o, "chain"); }},
        {"aten::_foreach_addcdiv_", [](const ProfOp& o) { return foreach(o, "chain"); }},
        {"aten::_foreach_copy_", [](const ProfOp& o) { return foreach(o, "Copy"); }},
        {"aten::_foreach_zero_", [](const ProfOp& o) { return foreach(o, "Fill"); }},
    };
    return t;
}

}  // namespace

bool is_free_aten(const std::string& name) { return free_ops().count(name) != 0; }
namespace {
// A backward op without an entry of its own gets the generic elementwise cost.
bool generic_backward_name(const std::string& name) {
    if (name.rfind("aten::", 0) != 0) return false;
    for (const char* suffix : {"_backward", "_backward_data", "_backward_input", "_backward_weight"}) {
        const std::string s = suffix;
        if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) return true;
    }
    return false;
}
}  // namespace

bool mappable_aten(const std::string& name) { return table().count(name) != 0 || generic_backward_name(name); }

Mapping map_aten(const ProfOp& op) {
    Mapping m;
    if (is_free_aten(op.name)) {
        m.free = true;
        return m;
    }
    auto it = table().find(op.name);
    if (it == table().end() && !generic_backward_name(op.name)) {
        m.why = "no sfumato mapping for this operator";
        return m;
    }
    try {
        m = it != table().end() ? it->second(op) : generic_backward(op);
        // An operator on an empty tensor (a zero dimension) has no work: nothing to simulate
        // (its first input empty; a Concat's every input).
        for (const json& n : m.nodes) {
            const bool concat = n["op_type"] == "Concat";
            size_t empty = 0;
            for (const json& t : n["inputs"]) empty += numel_of(t["shape"].get<std::vector<int64_t>>()) == 0;
            if ((concat && empty == n["inputs"].size()) ||
                (!concat && numel_of(n["inputs"][0]["shape"].get<std::vector<int64_t>>()) == 0))
                no("an empty tensor (a zero dimension): no work to simulate");
        }
        return m;
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
