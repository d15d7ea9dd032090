// aten training operators as graph nodes: backward ops and optimizer steps (traces/import.h).
// A convolution's backward is its input gradient as a ConvTranspose of the output gradient and
// its weight gradient as a MatMul of the output gradient with the im2col of the input (the
// im2col itself not counted); elementwise backward ops an elementwise op with the same operands;
// any other *_backward an elementwise op over its largest operands (the traffic of a memory-bound
// gradient); fused attention's backward two forward passes. Optimizer steps over tensor lists
// (_foreach_*, _fused_adam_) become elementwise ops over all the list's elements as one flat
// tensor: the same bytes and vector work in one kernel instead of a multi-tensor launch.
#include <algorithm>

#include "runtime/ref/host_tensor.h"
#include "traces/import_map_detail.h"

namespace sfumato::import::detail {

// convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation,
// transposed, output_padding, groups, output_mask); the older cudnn_convolution_backward(input,
// grad_output, weight, padding, stride, dilation, groups, benchmark, deterministic, allow_tf32,
// output_mask) through the index arguments (-1: absent). Without Concrete Inputs the geometry
// comes from the shapes: stride = ceil(input / output), padding "same" ((k - 1) / 2).
Mapping conv_backward_at(const ProfOp& op, size_t gy_i, size_t x_i, size_t w_i, int stride_i, int pad_i, int dil_i,
                         int transposed_i, int group_i, int mask_i) {
    const auto gy = shape_at(op, gy_i), x = shape_at(op, x_i), w = shape_at(op, w_i);
    if (x.size() != 4 || gy.size() != 4 || w.size() != 4) no("only 2-D convolution backward is mapped");
    if (transposed_i >= 0 && bool_at(op, static_cast<size_t>(transposed_i), false)) no("transposed convolution backward is not mapped");
    std::vector<int64_t> strides, pads, dil;
    if (has_concrete(op)) {
        strides = ints_at(op, static_cast<size_t>(stride_i), {1, 1}, 2);
        pads = ints_at(op, static_cast<size_t>(pad_i), {0, 0}, 2);
        dil = ints_at(op, static_cast<size_t>(dil_i), {1, 1}, 2);
    } else {
        dil = {1, 1};
        for (int d = 0; d < 2; ++d) {
            if (gy[2 + d] <= 0) no("an empty gradient");
            strides.push_back(std::max<int64_t>(1, (x[2 + d] + gy[2 + d] - 1) / gy[2 + d]));
            pads.push_back((w[2 + d] - 1) / 2);
        }
    }
    if (strides.size() != 2 || pads.size() != 2 || dil.size() != 2) no("stride/padding/dilation do not match the rank");
    int64_t group = int_at(op, static_cast<size_t>(group_i), 1);
    if (!has_concrete(op) && w[1] > 0 && x[1] != w[1]) group = x[1] / w[1];  // depthwise and grouped
    if (group <= 0) no("groups must be positive");
    std::vector<int64_t> mask = {1, 1, 0};
    if (mask_i >= 0 && op.in.size() > static_cast<size_t>(mask_i) && !op.in[static_cast<size_t>(mask_i)].concrete.empty()) {
        const std::string& c = op.in[static_cast<size_t>(mask_i)].concrete;
        mask.clear();
        size_t p = 0;
        while ((p = c.find_first_of("TF", p)) != std::string::npos) mask.push_back(c[p++] == 'T');
    }
    const int elem = elem_at(op, gy_i);
    Mapping m;
    if (!mask.empty() && mask[0]) {
        // dX = ConvTranspose(dY, W) with the forward's geometry; output_padding recovers H, W.
        std::vector<int64_t> outpad(2, 0);
        for (int d = 0; d < 2; ++d) {
            const int64_t eff = dil[d] * (w[2 + d] - 1) + 1;
            const int64_t full = (gy[2 + d] - 1) * strides[d] - 2 * pads[d] + eff;
            outpad[d] = std::max<int64_t>(0, x[2 + d] - full);
            if (outpad[d] >= strides[d] && outpad[d] >= dil[d]) no("the shapes do not fit the convolution's geometry");
        }
        m.nodes.push_back(node("ConvTranspose", op.name + " (input grad)",
                               {{"strides", ints_attr(strides)}, {"pads", ints_attr({pads[0], pads[1], pads[0], pads[1]})},
                                {"dilations", ints_attr(dil)}, {"group", int_attr(group)}, {"output_padding", ints_attr(outpad)}},
                               json::array({tensor(gy, elem), tensor(w, elem)})));
    }
    if (mask.size() > 1 && mask[1]) {
        // dW[g] (Co/g x Ci/g*kh*kw) = dY[g] (Co/g x N*Ho*Wo) x im2col(X)[g] (N*Ho*Wo x Ci/g*kh*kw)
        const int64_t npix = gy[0] * gy[2] * gy[3];
        const int64_t co = gy[1] / group, k = w[1] * w[2] * w[3];
        m.nodes.push_back(node("MatMul", op.name + " (weight grad)", json::object(),
                               json::array({tensor({group, co, npix}, elem), tensor({group, npix, k}, elem)})));
    }
    if (m.nodes.empty()) no("no gradient asked for (output_mask)");
    return m;
}

Mapping conv_backward(const ProfOp& op) { return conv_backward_at(op, 0, 1, 2, 4, 5, 6, 7, 9, 10); }

// Elementwise backward ops read two tensors of one shape and write one: a Mul's traffic.
Mapping ew_backward(const ProfOp& op) {
    json a = tin(op, 0);
    json b = has_tensor(op, 1) ? tin(op, 1) : a;
    need_broadcast({a, b});
    Mapping m;
    m.nodes.push_back(node("Mul", op.name, json::object(), json::array({a, b})));
    return m;
}

// A backward op without a mapping of its own: an elementwise op over its largest float tensor
// operand and, if there is one, a second operand of the same shape (a Mul: two reads, one
// write), else a Copy of the largest (one read, one write) -- the traffic of a memory-bound
// gradient. Integer operands (indices) are not counted.
Mapping generic_backward(const ProfOp& op) {
    int best = -1, second = -1;
    int64_t best_n = -1;
    for (size_t i = 0; i < op.in.size(); ++i) {
        const OpInput& a = op.in[i];
        if (!a.tensor || a.shape.empty()) continue;
        const auto e = elem_of_torch(a.type);
        if (!e || !ref::is_float(static_cast<ref::ElemType>(*e))) continue;
        const int64_t n = numel_of(a.shape);
        if (n > best_n) best_n = n, best = static_cast<int>(i);
    }
    if (best < 0) no("no floating-point tensor operand with a shape");
    for (size_t i = 0; i < op.in.size(); ++i)
        if (static_cast<int>(i) != best && op.in[i].tensor && op.in[i].shape == op.in[static_cast<size_t>(best)].shape &&
            op.in[i].type == op.in[static_cast<size_t>(best)].type)
            second = static_cast<int>(i);
    Mapping m;
    if (second >= 0)
        m.nodes.push_back(node("Mul", op.name, json::object(),
                               json::array({tin(op, static_cast<size_t>(best)), tin(op, static_cast<size_t>(second))})));
    else
        m.nodes.push_back(node("Copy", op.name, json::object(), json::array({tin(op, static_cast<size_t>(best))})));
    return m;
}

// The backward of fused attention recomputes the scores and does four matrix products to the
// forward's two: costed as two forward passes.
Mapping sdpa_backward(const ProfOp& op) {
    // grad_out, query, key, value, ...
    const auto q = shape_at(op, 1);
    if (q.size() != 4) no("attention on rank-" + std::to_string(q.size()) + " tensors");
    Mapping m;
    for (int i = 0; i < 2; ++i)
        m.nodes.push_back(node("FusedAttention", op.name + (i ? " (dQ)" : " (dK, dV)"), json::object(),
                               json::array({tin(op, 1), tin(op, 2), tin(op, 3)})));
    return m;
}

// The tensor list input i: its shapes (a list input, or the tensors from i on).
std::vector<std::vector<int64_t>> list_at(const ProfOp& op, size_t i) {
    const OpInput& l = arg(op, i);
    if (!l.is_list) no("input " + std::to_string(i) + " is not a tensor list");
    if (l.list.empty()) no("the tensor list's shapes are missing (record_shapes=True records them)");
    return l.list;
}

// An optimizer op over tensor lists (torch._foreach_*, _fused_adam_): `lists` list inputs read
// (each as one flat tensor of all the list's elements), `program` the vector steps.
Mapping foreach(const ProfOp& op, const std::string& type) {
    const auto shapes = list_at(op, 0);
    int64_t n = 0;
    for (const auto& s : shapes) n += numel_of(s);
    if (n <= 0) no("the tensor list is empty");
    int elem = static_cast<int>(ref::ElemType::Float);
    if (auto e = elem_of_torch(arg(op, 0).type)) elem = *e;
    const json flat = tensor({n}, elem);
    size_t lists = 0;
    for (const OpInput& a : op.in) lists += a.is_list && !a.list.empty() ? 1 : 0;
    Mapping m;
    const std::string base = op.name.substr(op.name.find("_foreach_") + 9);
    const std::string name = op.name + " (" + std::to_string(shapes.size()) + " tensors)";
    if (type == "chain") {
        // addcmul_/addcdiv_: self + s * a (*|/) b over three lists.
        const bool div = base.rfind("addcdiv", 0) == 0;
        m.nodes.push_back(node("ElementwiseChain", name, {{"program", {{"strings", {div ? "Div" : "Mul", "Add"}}}}},
                               json::array({flat, flat, flat})));
    } else if (type == "Fill") {
        json n2 = node("Expand", name, json::object(),
                       json::array({tensor({1}, elem), tensor({1}, static_cast<int>(ref::ElemType::Int64))}));
        n2["constants"] = {{"1", {{"elem", static_cast<int>(ref::ElemType::Int64)}, {"shape", json::array({1})}, {"data", json::array({static_cast<double>(n)})}}}};
        m.nodes.push_back(std::move(n2));
    } else if (type == "Copy") {
        m.nodes.push_back(node("Copy", name, json::object(), json::array({flat})));
    } else if (lists >= 2) {
        m.nodes.push_back(node(type, name, json::object(), json::array({flat, flat})));
    } else if (type == "Add" || type == "Mul" || type == "Div" || type == "Sub") {
        m.nodes.push_back(node(type, name, json::object(), json::array({flat, tensor({1}, elem)})));
    } else {
        m.nodes.push_back(node(type, name, json::object(), json::array({flat})));
    }
    return m;
}

// _fused_adam_(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, ...): per
// element the first and second moments and the parameter are updated: three chains over the
// flat lists (reads grad and a moment twice, writes the moments and the parameter).
Mapping fused_adam(const ProfOp& op) {
    const auto shapes = list_at(op, 0);
    int64_t n = 0;
    for (const auto& s : shapes) n += numel_of(s);
    if (n <= 0) no("the tensor list is empty");
    const json flat = tensor({n}, static_cast<int>(ref::ElemType::Float));
    const std::string name = op.name + " (" + std::to_string(shapes.size()) + " tensors)";
    Mapping m;
    m.nodes.push_back(node("ElementwiseChain", name + " (m)", {{"program", {{"strings", {"Sub", "Add"}}}}},
                           json::array({flat, flat, flat})));
    m.nodes.push_back(node("ElementwiseChain", name + " (v)", {{"program", {{"strings", {"Mul", "Add"}}}}},
                           json::array({flat, flat, flat})));
    m.nodes.push_back(node("ElementwiseChain", name + " (param)", {{"program", {{"strings", {"Sqrt", "Div", "Sub"}}}}},
                           json::array({flat, flat, flat})));
    return m;
}

}  // namespace sfumato::import::detail
