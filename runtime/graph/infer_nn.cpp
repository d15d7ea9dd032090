// Shape inference: MatMul, Gemm, Conv, ConvTranspose, pools, normalisations and
// softmax.
#include "runtime/graph/infer.h"

namespace sfumato::graph {

namespace {

void matmul(InferCtx& c) {
    c.need_inputs(2, 2);
    c.same_type(0, 1);
    Shape a = c.shape(0), b = c.shape(1);
    if (a.empty() || b.empty()) c.fail("inputs must have rank >= 1");
    const bool a1 = a.size() == 1, b1 = b.size() == 1;
    if (a1) a.insert(a.begin(), Dim::of(1));
    if (b1) b.push_back(Dim::of(1));
    const Dim k1 = a.back(), k2 = b[b.size() - 2];
    if (k1.known() && k2.known() && k1.v != k2.v)
        c.fail("inner dimensions differ: " + shape_str(c.shape(0)) + " x " + shape_str(c.shape(1)));
    const Shape ba(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
    Shape out = broadcast_shapes(c, ba, bb);
    if (!a1) out.push_back(a[a.size() - 2]);
    if (!b1) out.push_back(b.back());
    c.set(0, c.elem(0), out);
}

void gemm(InferCtx& c) {
    c.need_inputs(2, 3);
    c.same_type(0, 1);
    c.same_type(0, 2);
    const Shape& a = c.shape(0);
    const Shape& b = c.shape(1);
    if (a.size() != 2 || b.size() != 2)
        c.fail("A and B must be 2-D, got " + shape_str(a) + " and " + shape_str(b));
    const bool ta = c.attrs().get_int("transA", 0) != 0, tb = c.attrs().get_int("transB", 0) != 0;
    const Dim m = ta ? a[1] : a[0], k = ta ? a[0] : a[1];
    const Dim k2 = tb ? b[1] : b[0], n = tb ? b[0] : b[1];
    if (k.known() && k2.known() && k.v != k2.v)
        c.fail("inner dimensions differ: " + shape_str(a) + " x " + shape_str(b));
    const Shape out{m, n};
    if (c.has(2)) {
        const Shape bc = broadcast_shapes(c, out, c.shape(2));
        if (bc.size() != 2 || !(bc[0] == m) || !(bc[1] == n))
            c.fail("C " + shape_str(c.shape(2)) + " does not broadcast to " + shape_str(out));
    }
    c.set(0, c.elem(0), out);
}

struct Spatial {
    std::vector<int64_t> kernel, strides, dilations, pads;
    std::string auto_pad;
};

Spatial spatial_attrs(InferCtx& c, size_t nsp, const std::vector<int64_t>& kernel) {
    Spatial s;
    s.kernel = kernel;
    s.strides = c.attrs().get_ints("strides", std::vector<int64_t>(nsp, 1));
    s.dilations = c.attrs().get_ints("dilations", std::vector<int64_t>(nsp, 1));
    s.pads = c.attrs().get_ints("pads", std::vector<int64_t>(2 * nsp, 0));
    s.auto_pad = c.attrs().get_string("auto_pad", "NOTSET");
    if (s.kernel.size() != nsp || s.strides.size() != nsp || s.dilations.size() != nsp ||
        s.pads.size() != 2 * nsp)
        c.fail("kernel_shape/strides/dilations/pads do not match " + std::to_string(nsp) +
               " spatial dimensions");
    for (size_t i = 0; i < nsp; ++i)
        if (s.strides[i] <= 0 || s.dilations[i] <= 0 || s.kernel[i] <= 0)
            c.fail("strides, dilations and kernel must be positive");
    // Window attributes are small in any real model; bounding them keeps their products in 64 bits.
    constexpr int64_t kMaxAttr = int64_t{1} << 31;
    for (const auto* v : {&s.kernel, &s.strides, &s.dilations, &s.pads})
        for (int64_t e : *v)
            if (e > kMaxAttr || e < -kMaxAttr)
                c.fail("kernel_shape/strides/dilations/pads value " + std::to_string(e) + " is beyond +-2^31");
    if (s.auto_pad != "NOTSET" && s.auto_pad != "SAME_UPPER" && s.auto_pad != "SAME_LOWER" &&
        s.auto_pad != "VALID")
        c.fail("auto_pad '" + s.auto_pad + "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
    return s;
}

// Output size of one sliding-window dimension.
Dim window_out(const Spatial& s, size_t i, const Dim& in, bool ceil_mode) {
    const int64_t ek = (s.kernel[i] - 1) * s.dilations[i] + 1;
    const Dim st = Dim::of(s.strides[i]);
    if (s.auto_pad == "SAME_UPPER" || s.auto_pad == "SAME_LOWER") return dim_ceil_div(in, st);
    if (s.auto_pad == "VALID") return dim_add(dim_div(dim_sub(in, Dim::of(ek)), st), Dim::of(1));
    const Dim padded = dim_sub(dim_add(in, Dim::of(s.pads[i] + s.pads[i + s.kernel.size()])), Dim::of(ek));
    if (!ceil_mode) return dim_add(dim_div(padded, st), Dim::of(1));
    Dim out = dim_add(dim_ceil_div(padded, st), Dim::of(1));
    // The last window must start inside the input or its left padding.
    if (out.known() && in.known() && dim_checked(out.v - 1, s.strides[i], '*') >= dim_checked(in.v, s.pads[i], '+'))
        out.v -= 1;
    return out;
}

void conv(InferCtx& c) {
    c.need_inputs(2, 3);
    c.same_type(0, 1);
    c.same_type(0, 2);
    const Shape& x = c.shape(0);
    const Shape& w = c.shape(1);
    if (x.size() < 3) c.fail("X must have rank >= 3 (N, C, spatial...), got " + shape_str(x));
    if (w.size() != x.size()) c.fail("W " + shape_str(w) + " must have the rank of X " + shape_str(x));
    const size_t nsp = x.size() - 2;
    const int64_t group = c.attrs().get_int("group", 1);
    if (group <= 0) c.fail("group must be positive");
    std::vector<int64_t> k;
    for (size_t i = 0; i < nsp; ++i) {
        if (!w[2 + i].known()) c.fail("W's spatial dimensions must be known");
        k.push_back(w[2 + i].v);
    }
    k = c.attrs().get_ints("kernel_shape", k);
    const Spatial s = spatial_attrs(c, nsp, k);
    if (x[1].known() && w[1].known() && x[1].v != w[1].v * group)
        c.fail("X has " + x[1].str() + " channels, W expects " + std::to_string(w[1].v) + " x group " +
               std::to_string(group));
    if (w[0].known() && w[0].v % group != 0) c.fail("W's output channels are not divisible by group");
    if (c.has(2) && (c.rank(2) != 1 || !(c.shape(2)[0] == w[0])))
        c.fail("B must be 1-D of size M = " + w[0].str());
    Shape out{x[0], w[0]};
    for (size_t i = 0; i < nsp; ++i) out.push_back(window_out(s, i, x[2 + i], false));
    c.set(0, c.elem(0), out);
}

void conv_transpose(InferCtx& c) {
    c.need_inputs(2, 3);
    c.same_type(0, 1);
    c.same_type(0, 2);
    const Shape& x = c.shape(0);
    const Shape& w = c.shape(1);
    if (x.size() < 3 || w.size() != x.size()) c.fail("X and W must have the same rank >= 3");
    const size_t nsp = x.size() - 2;
    const int64_t group = c.attrs().get_int("group", 1);
    std::vector<int64_t> k;
    for (size_t i = 0; i < nsp; ++i) {
        if (!w[2 + i].known()) c.fail("W's spatial dimensions must be known");
        k.push_back(w[2 + i].v);
    }
    k = c.attrs().get_ints("kernel_shape", k);
    const Spatial s = spatial_attrs(c, nsp, k);
    const auto outpad = c.attrs().get_ints("output_padding", std::vector<int64_t>(nsp, 0));
    const auto oshape = c.attrs().get_ints("output_shape", {});
    if (outpad.size() != nsp) c.fail("output_padding does not match the spatial dimensions");
    Shape out{x[0], dim_mul(w[1], Dim::of(group))};
    for (size_t i = 0; i < nsp; ++i) {
        if (!oshape.empty()) {
            out.push_back(Dim::of(oshape[oshape.size() - nsp + i]));
            continue;
        }
        const int64_t ek = (s.kernel[i] - 1) * s.dilations[i] + 1;
        if (s.auto_pad == "SAME_UPPER" || s.auto_pad == "SAME_LOWER") {
            out.push_back(dim_mul(x[2 + i], Dim::of(s.strides[i])));
            continue;
        }
        const int64_t pads = s.auto_pad == "VALID" ? 0 : s.pads[i] + s.pads[i + nsp];
        if (outpad[i] > (int64_t{1} << 31) || outpad[i] < -(int64_t{1} << 31))
            c.fail("output_padding value " + std::to_string(outpad[i]) + " is beyond +-2^31");
        if (x[2 + i].known()) {  // exact (pads may exceed the kernel's extent)
            out.push_back(Dim::of(dim_checked(dim_checked(x[2 + i].v - 1, s.strides[i], '*'), outpad[i] + ek - pads, '+')));
            continue;
        }
        out.push_back(dim_add(dim_mul(dim_sub(x[2 + i], Dim::of(1)), Dim::of(s.strides[i])),
                              Dim::of(outpad[i] + ek - pads)));
    }
    c.set(0, c.elem(0), out);
}

void pool(InferCtx& c) {
    c.need_inputs(1, 1);
    const Shape& x = c.shape(0);
    if (x.size() < 3) c.fail("X must have rank >= 3 (N, C, spatial...), got " + shape_str(x));
    const size_t nsp = x.size() - 2;
    const auto k = c.attrs().get_ints("kernel_shape", {});
    if (k.size() != nsp) c.fail("kernel_shape must have " + std::to_string(nsp) + " values");
    const Spatial s = spatial_attrs(c, nsp, k);
    const bool ceil_mode = c.attrs().get_int("ceil_mode", 0) != 0;
    Shape out{x[0], x[1]};
    for (size_t i = 0; i < nsp; ++i) out.push_back(window_out(s, i, x[2 + i], ceil_mode));
    c.set(0, c.elem(0), out);
    c.set(1, ref::ElemType::Int64, out);  // MaxPool's Indices
}

void global_pool(InferCtx& c) {
    c.need_inputs(1, 1);
    Shape s = c.shape(0);
    if (s.size() < 3) c.fail("X must have rank >= 3, got " + shape_str(s));
    for (size_t i = 2; i < s.size(); ++i) s[i] = Dim::of(1);
    c.set(0, c.elem(0), s);
}

// The inputs BatchNormalization and BatchNormTraining share: X (rank >= 2), then scale, B, mean,
// var, each 1-D.
static const Shape& batchnorm_inputs(InferCtx& c) {
    c.need_inputs(5, 5);
    c.need_float(0);
    const Shape& x = c.shape(0);
    if (x.size() < 2) c.fail("X must have rank >= 2");
    for (size_t i = 1; i < 5; ++i)
        if (c.rank(i) != 1) c.fail("input " + std::to_string(i) + " must be 1-D of size C");
    return x;
}

void batchnorm(InferCtx& c) {
    const Shape& x = batchnorm_inputs(c);
    if (c.attrs().get_int("training_mode", 0) != 0 || (c.num_outputs() > 1 && c.has_output(1)))
        c.fail("training mode (running statistics outputs) is not supported");
    c.set(0, c.elem(0), x);
}

// BatchNormTraining (sfumato-only, a training step's BatchNormalization): Y, running_mean,
// running_var (the type of input_mean), batch_mean, batch_var (fp32).
void batchnorm_training(InferCtx& c) {
    const Shape& x = batchnorm_inputs(c);
    c.set(0, c.elem(0), x);
    for (size_t i = 1; i < 5; ++i) c.set(i, i < 3 ? c.elem(3) : ref::ElemType::Float, Shape{x[1]});
}

void instancenorm(InferCtx& c) {
    c.need_inputs(3, 3);
    c.need_float(0);
    if (c.rank(0) < 3) c.fail("input must have rank >= 3");
    c.set(0, c.elem(0), c.shape(0));
}

void layernorm(InferCtx& c) {
    c.need_inputs(2, 3);
    c.need_float(0);
    const Shape& x = c.shape(0);
    const int64_t axis = c.axis(c.attrs().get_int("axis", -1), x.size());
    c.set(0, c.elem(0), x);
    Shape stat = x;
    for (size_t i = static_cast<size_t>(axis); i < stat.size(); ++i) stat[i] = Dim::of(1);
    const auto stash = static_cast<ref::ElemType>(c.attrs().get_int("stash_type", 1));
    c.set(1, stash, stat);
    c.set(2, stash, stat);
}

void softmax(InferCtx& c) {
    c.need_inputs(1, 1);
    c.need_float(0);
    const Shape& x = c.shape(0);
    if (!x.empty()) c.axis(c.attrs().get_int("axis", c.opset() >= 13 ? -1 : 1), x.size());
    c.set(0, c.elem(0), x);
}

// FusedAttention(Q [.., Sq, D], K [.., Sk, D], V [.., Sk, Dv] [, mask]) -> [.., Sq, Dv].
void fused_attention(InferCtx& c) {
    c.need_inputs(3, 4);
    c.same_type(0, 1);
    c.same_type(0, 2);
    const Shape& q = c.shape(0);
    const Shape& k = c.shape(1);
    const Shape& v = c.shape(2);
    if (q.size() < 2 || k.size() != q.size() || v.size() != q.size())
        c.fail("Q, K and V must have the same rank >= 2");
    if (q.back().known() && k.back().known() && q.back().v != k.back().v)
        c.fail("Q and K head dimensions differ");
    Shape out = q;
    out.back() = v.back();
    c.set(0, c.elem(0), out);
}

}  // namespace

SFUMATO_REGISTER_INFER(fused_attention, fused_attention, "FusedAttention");
SFUMATO_REGISTER_INFER(matmul, matmul, "MatMul");
SFUMATO_REGISTER_INFER(gemm, gemm, "Gemm");
SFUMATO_REGISTER_INFER(conv, conv, "Conv");
SFUMATO_REGISTER_INFER(conv_transpose, conv_transpose, "ConvTranspose");
SFUMATO_REGISTER_INFER(pool, pool, "MaxPool", "AveragePool", "LpPool");
SFUMATO_REGISTER_INFER(global_pool, global_pool, "GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool");
SFUMATO_REGISTER_INFER(batchnorm, batchnorm, "BatchNormalization");
SFUMATO_REGISTER_INFER(batchnorm_training, batchnorm_training, "BatchNormTraining");
SFUMATO_REGISTER_INFER(instancenorm, instancenorm, "InstanceNormalization");
SFUMATO_REGISTER_INFER(layernorm, layernorm, "LayerNormalization");
SFUMATO_REGISTER_INFER(softmax, softmax, "Softmax", "LogSoftmax", "Hardmax");

}  // namespace sfumato::graph
