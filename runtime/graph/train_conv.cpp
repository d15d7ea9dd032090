// Backward planning of a training step (train.h): Gemm/MatMul, Conv (grouped and depthwise
// included) and MaxPool.
#include "runtime/graph/train_builder.h"
#include "runtime/ref/conv_shape.h"

namespace sfumato::graph::detail {

void Builder::gemm(const PlanStep& st, int gz) {
    const bool is_gemm = st.op_type == "Gemm";
    const ref::Attrs& at = st.desc.attrs;
    if (is_gemm && (at.get_int("transA", 0) != 0 || at.get_float("alpha", 1.0) != 1.0))
        refuse(st, "transA and alpha other than 1 have no backward here");
    const bool tb = is_gemm && at.get_int("transB", 0) != 0;
    const int a = st.in[0], b = st.in[1];
    if (pref(a).shape.size() != 2 || pref(b).shape.size() != 2) refuse(st, "2-D operands only");
    auto g = [&](bool ta, bool tbb) {
        return attrs_of({{"transA", ref::Attr::of_int(ta)}, {"transB", ref::Attr::of_int(tbb)}});
    };
    if (needs(a)) {  // dA = dZ B'^T
        accumulate(a, emit(st.name + "/dA", "Gemm", 13, g(false, !tb), {gz, fwd(b)}), st.name);
    }
    if (needs(b)) {  // dB = A^T dZ (transB: dZ^T A)
        const int wg = is_weight(b) ? weight_grad(b) : -1;
        const int r = tb ? emit(st.name + "/dB", "Gemm", 13, g(true, false), {gz, fwd(a)}, wg)
                         : emit(st.name + "/dB", "Gemm", 13, g(true, false), {fwd(a), gz}, wg);
        if (wg >= 0)
            weight_done(b);
        else
            accumulate(b, r, st.name);
    }
    if (st.in.size() > 2 && needs(st.in[2])) {  // dC = sum over rows
        const int c = st.in[2];
        if (!is_weight(c) || at.get_float("beta", 1.0) != 1.0) refuse(st, "C must be a weight with beta 1");
        const Shape& cs = pref(c).shape;
        const int64_t n = pref(st.out[0]).shape[1];
        if (!(cs == Shape{n} || cs == Shape{1, n})) refuse(st, "C must be a row of N values");
        const int wg = weight_grad(c);
        emit(st.name + "/dC", "ReduceSum", 11,
             attrs_of({{"axes", ref::Attr::of_ints({0})}, {"keepdims", ref::Attr::of_int(cs.size() == 2)}}),
             {gz}, wg);
        weight_done(c);
    }
}

void Builder::conv(const PlanStep& st, int gz) {
    const ref::Attrs& at = st.desc.attrs;
    const int x = st.in[0], w = st.in[1];
    const Shape &xs = pref(x).shape, &ws = pref(w).shape, &ys = pref(st.out[0]).shape;
    if (xs.size() != 4) refuse(st, "2-D convolutions only");
    const int64_t groups = at.get_int("group", 1);
    if (groups < 1 || xs[1] % groups != 0) refuse(st, "the group count does not divide the channels");
    for (int64_t d : at.get_ints("dilations", {1, 1}))
        if (d != 1) refuse(st, "dilated convolutions have no backward here");
    if (at.get_string("auto_pad", "NOTSET") != "NOTSET") refuse(st, "auto_pad has no backward here");
    const Shape s = at.get_ints("strides", {1, 1});
    Shape p = at.get_ints("pads", {0, 0, 0, 0});
    if (p[0] != p[2] || p[1] != p[3]) refuse(st, "asymmetric pads have no backward here");
    if (needs(x)) {  // dX = ConvTranspose(dZ, W) (of the same groups)
        Shape op(2);
        for (size_t d = 0; d < 2; ++d) op[d] = xs[2 + d] - ((ys[2 + d] - 1) * s[d] - 2 * p[d] + ws[2 + d]);
        if (op[0] < 0 || op[1] < 0 || op[0] >= s[0] || op[1] >= s[1])
            refuse(st, "no ConvTranspose gives X's size");
        ref::Attrs a = attrs_of({{"strides", ref::Attr::of_ints(s)},
                                 {"pads", ref::Attr::of_ints(p)},
                                 {"kernel_shape", ref::Attr::of_ints({ws[2], ws[3]})},
                                 {"output_padding", ref::Attr::of_ints(op)}});
        if (groups > 1) a.set("group", ref::Attr::of_int(groups));
        // In NC1HWC0 (X's layout in the forward): the ConvTranspose writes dX in it and reads dZ
        // as it is, also with a stride (one stride-1 convolution per phase of dX, conv_node.cpp;
        // where those cannot run, a strided one spreads an NCHW dZ in its kernel).
        ++m_tp.layout.before;
        ref::Attrs a5 = a;
        if (c0(fwd(x))) a5.set("y_format", ref::Attr::of_string("NC1HWC0"));
        auto attempt = [&](int dz) {
            try {
                const int r = emit(st.name + "/dX", "ConvTranspose", 11, a5, {dz, fwd(w)});
                ++m_tp.layout.kept;
                return r;
            } catch (const ops::UnsupportedError&) {
                return -1;
            }
        };
        int dx = c0(gz) ? attempt(gz) : -1;
        if (dx < 0 && c0(fwd(x)) && (dx = attempt(nd(gz, st.name + "/dZ"))) >= 0) ++m_tp.layout.in_kernel;
        if (dx < 0) {
            dx = emit(st.name + "/dX", "ConvTranspose", 11, a, {nd(gz, st.name + "/dZ"), fwd(w)});
            ++m_tp.layout.in_kernel;
        }
        accumulate(x, dx, st.name);
    }
    int z2 = -1;  // dZ^T as (M, N*OH*OW), made by the composed weight gradient
    const bool bias = st.in.size() > 2 && needs(st.in[2]);
    if (needs(w)) {
        const int wg = weight_grad(w);
        // dW[m, c, a, b] = sum over n, i, j of dZ[n, m, i, j] X[n, c, i*s + a - p, j*s + b - p]:
        // the weight-gradient convolution kernel (img2col of X on the cube, whole rows).
        bool done = false;
        if (groups > 1) {
            grouped_wgrad(st, nd(gz, st.name + "/dZ"), wg);
            done = true;
        } else {
            // X as the forward kept it (the kernel reads NC1HWC0 X without converting it); dZ
            // in NC1HWC0 as the backward keeps it where the kernel takes it (2-byte types: its
            // fractals transposed into L0A), else NCHW (read as M rows of pixels).
            ++m_tp.layout.before;
            try {
                const ref::Attrs a = attrs_of({{"kernel_shape", ref::Attr::of_ints({ws[2], ws[3]})},
                                               {"strides", ref::Attr::of_ints(s)},
                                               {"pads", ref::Attr::of_ints(p)},
                                               {"dilations", ref::Attr::of_ints({1, 1})}});
                bool dz5 = false;
                if (c0(gz)) {
                    try {
                        emit(st.name + "/dW", "Conv2DBackpropFilter", 1, a, {fwd(x), gz}, wg);
                        dz5 = true;
                    } catch (const ops::UnsupportedError&) {
                    }
                }
                if (!dz5) emit(st.name + "/dW", "Conv2DBackpropFilter", 1, a, {fwd(x), nd(gz, st.name + "/dZ")}, wg);
                if (c0(fwd(x)))
                    ++m_tp.layout.kept;
                else
                    ++m_tp.layout.in_kernel;
                done = true;
            } catch (const ops::UnsupportedError&) {
                --m_tp.layout.before;
            }
        }
        if (!done) conv_wgrad_composed(st, nd(gz, st.name + "/dZ"), nd(fwd(x), st.name + "/X"), z2, wg);
        weight_done(w);
    }
    if (bias) {  // dB = dZ summed over N, OH and OW (whole rows, fp32 partial sums; NC1HWC0: per lane)
        const int b = st.in[2];
        const int wg = weight_grad(b);
        const int zp = c0(gz) ? phys(gz) : -1;
        emit(st.name + "/dB", "ReduceSum", 11,
             attrs_of({{"axes", ref::Attr::of_ints({0, 2, 3})}, {"keepdims", ref::Attr::of_int(0)}}),
             {zp >= 0 ? zp : nd(gz, st.name + "/dZ")}, wg);
        weight_done(b);
    }
}

// The weight gradient of a grouped Conv (G groups of Cg input and Mg output channels).
//   - Depthwise (Cg = Mg = 1): per kernel offset (a, b), dW[c, 0, a, b] = sum over n, i, j of
//     dZ[n, c, i, j] X[n, c, i*s + a - p, j*s + b - p]: the offset's strided Slice of the padded
//     X times dZ (elementwise), summed over N, OH, OW (vector kernels, no cube work for one
//     channel per group); the offsets concatenated and transposed to (C, 1, kh, kw).
//   - Otherwise (at most kMaxWgradGroups groups): per group, the weight-gradient kernel on the
//     group's channel Slices of X and dZ; the groups concatenated along M.
void Builder::grouped_wgrad(const PlanStep& st, int gz, int wg) {
    const ref::Attrs& at = st.desc.attrs;
    const int x = st.in[0], w = st.in[1];
    const Shape &xs = pref(x).shape, &ws = pref(w).shape, &ys = pref(st.out[0]).shape;
    const int64_t g = at.get_int("group", 1), cg = xs[1] / g, mg = ys[1] / g;
    const Shape s = at.get_ints("strides", {1, 1}), p = at.get_ints("pads", {0, 0, 0, 0});
    const std::string& nm = st.name;
    auto slice = [&](int t, const std::string& what, const Shape& starts, const Shape& ends,
                     const Shape& axes, const Shape& steps) {
        std::vector<int> in = {t, constant(*ints(starts)), constant(*ints(ends)), constant(*ints(axes))};
        std::vector<std::shared_ptr<const ref::HostTensor>> c = {nullptr, ints(starts), ints(ends),
                                                                 ints(axes)};
        if (!steps.empty()) in.push_back(constant(*ints(steps))), c.push_back(ints(steps));
        return emit(nm + "/" + what, "Slice", 13, {}, in, -1, c);
    };
    std::vector<int> parts;
    if (cg == 1 && mg == 1) {
        int xpad = fwd(x);
        if (p[0] || p[1]) {
            const Shape pp = {0, 0, p[0], p[1], 0, 0, p[2], p[3]};
            const int zero = scalar(pref(x).elem, 0.0);
            xpad = emit(nm + "/x_pad", "Pad", 13, {}, {xpad, constant(*ints(pp)), zero}, -1,
                        {nullptr, ints(pp), m_tp.tensors[static_cast<size_t>(zero)].value});
        }
        const ref::Attrs red =
            attrs_of({{"axes", ref::Attr::of_ints({0, 2, 3})}, {"keepdims", ref::Attr::of_int(0)}});
        for (int64_t a = 0; a < ws[2]; ++a)
            for (int64_t b = 0; b < ws[3]; ++b) {
                const std::string tap = "dW" + std::to_string(a) + "_" + std::to_string(b);
                const int sl = slice(xpad, tap + "/x", {a, b},
                                     {a + (ys[2] - 1) * s[0] + 1, b + (ys[3] - 1) * s[1] + 1}, {2, 3}, s);
                const int prod = emit(nm + "/" + tap + "/mul", "Mul", 14, {}, {sl, gz});
                const int one = ws[2] * ws[3] == 1 ? wg : -1;  // a 1 x 1 kernel: the sums are dW
                parts.push_back(alias(emit(nm + "/" + tap, "ReduceSum", 11, red, {prod}, one), {1, xs[1]}));
            }
        if (parts.size() == 1) return;
        const int cat = emit(nm + "/dWcat", "Concat", 13, attrs_of({{"axis", ref::Attr::of_int(0)}}), parts);
        emit(nm + "/dW", "Transpose", 13, attrs_of({{"perm", ref::Attr::of_ints({1, 0})}}), {cat}, wg);
        return;
    }
    if (g > kMaxWgradGroups)
        refuse(st, std::to_string(g) + " groups of " + std::to_string(cg) +
                       " channels: grouped convolutions have a backward here up to " +
                       std::to_string(kMaxWgradGroups) + " groups (or depthwise)");
    const ref::Attrs a = attrs_of({{"kernel_shape", ref::Attr::of_ints({ws[2], ws[3]})},
                                   {"strides", ref::Attr::of_ints(s)},
                                   {"pads", ref::Attr::of_ints(p)},
                                   {"dilations", ref::Attr::of_ints({1, 1})}});
    for (int64_t k = 0; k < g; ++k) {
        const std::string gr = "g" + std::to_string(k);
        const int xk = slice(fwd(x), gr + "/x", {k * cg}, {(k + 1) * cg}, {1}, {});
        const int zk = slice(gz, gr + "/dz", {k * mg}, {(k + 1) * mg}, {1}, {});
        parts.push_back(emit(nm + "/dW" + gr, "Conv2DBackpropFilter", 1, a, {xk, zk}));
    }
    emit(nm + "/dW", "Concat", 13, attrs_of({{"axis", ref::Attr::of_int(0)}}), parts, wg);
}

// The weight gradient composed from data-movement kernels and Gemms (the fallback where the
// weight-gradient kernel cannot run): per kernel offset (a, b) one Gemm of dZ^T (M, N*OH*OW)
// with the offset's strided slice of the padded X^T (C, N*OH*OW), transposed; the offsets
// concatenated.
void Builder::conv_wgrad_composed(const PlanStep& st, int gz, int xn, int& z2, int wg) {
    const ref::Attrs& at = st.desc.attrs;
    const int x = st.in[0], w = st.in[1];
    const Shape &xs = pref(x).shape, &ws = pref(w).shape, &ys = pref(st.out[0]).shape;
    const Shape s = at.get_ints("strides", {1, 1});
    const Shape p = at.get_ints("pads", {0, 0, 0, 0});
    const int64_t n = xs[0], c = xs[1], m = ys[1], oh = ys[2], ow = ys[3];
    if (z2 < 0) {
        const int zt = emit(st.name + "/dzT", "Transpose", 13,
                            attrs_of({{"perm", ref::Attr::of_ints({1, 0, 2, 3})}}), {gz});
        z2 = alias(zt, {m, n * oh * ow});
    }
    const int xt = emit(st.name + "/xT", "Transpose", 13,
                        attrs_of({{"perm", ref::Attr::of_ints({1, 0, 2, 3})}}), {xn});
    int xpad = xt;
    if (p[0] || p[1]) {
        const Shape pp = {0, 0, p[0], p[1], 0, 0, p[2], p[3]};
        ref::HostTensor zero(pref(x).elem, {});
        xpad = emit(st.name + "/xT_pad", "Pad", 13, {}, {xt, constant(*ints(pp)), constant(zero)}, -1,
                    {nullptr, ints(pp), std::make_shared<const ref::HostTensor>(zero)});
    }
    const ref::Attrs tb = attrs_of({{"transA", ref::Attr::of_int(0)}, {"transB", ref::Attr::of_int(1)}});
    const int64_t kh = ws[2], kw = ws[3];
    if (kh == 1 && kw == 1 && s[0] == 1 && s[1] == 1) {
        emit(st.name + "/dW", "Gemm", 13, tb, {z2, alias(xpad, {c, n * oh * ow})}, wg);
    } else {
        std::vector<int> parts;
        const Shape axes = {2, 3};
        for (int64_t a = 0; a < kh; ++a)
            for (int64_t b = 0; b < kw; ++b) {
                const std::string nm = st.name + "/dW" + std::to_string(a) + "_" + std::to_string(b);
                const Shape starts = {a, b}, ends = {a + (oh - 1) * s[0] + 1, b + (ow - 1) * s[1] + 1};
                const int sl = emit(nm + "/x", "Slice", 13, {},
                                    {xpad, constant(*ints(starts)), constant(*ints(ends)),
                                     constant(*ints(axes)), constant(*ints(s))},
                                    -1, {nullptr, ints(starts), ints(ends), ints(axes), ints(s)});
                const int g = emit(nm, "Gemm", 13, tb, {z2, alias(sl, {c, n * oh * ow})});
                parts.push_back(alias(g, {1, m, c}));
            }
        // (kh*kw, M, C) -> (M, C, kh*kw): W's layout.
        const int cat =
            emit(st.name + "/dWcat", "Concat", 13, attrs_of({{"axis", ref::Attr::of_int(0)}}), parts);
        emit(st.name + "/dW", "Transpose", 13, attrs_of({{"perm", ref::Attr::of_ints({1, 2, 0})}}), {cat},
             wg);
    }
}

// MaxPool: per window offset (a, b), the input pixels x[i*s + a - p] that equal their
// window's maximum y[i] take dy[i]; spread back to the input grid (zeros between, shifted
// by the offset) and summed.
// ConvTranspose (2-D, one group): Y = ConvTranspose(X, W) is the data gradient of a Conv of Y's
// shape with W, so dX = Conv(dY, W) with its strides and pads (the output padding's rows are read
// by no window), dW[c, m, a, b] = sum over n, i, j of X[n, c, i, j] dY[n, m, i*s + a - p, j*s + b - p]:
// the weight-gradient kernel with dY as its input and X as its output gradient; dB = dY summed
// over N, OH, OW.
void Builder::conv_transpose(const PlanStep& st, int gy) {
    const ref::Attrs& at = st.desc.attrs;
    const int x = st.in[0], w = st.in[1];
    const Shape &xs = pref(x).shape, &ws = pref(w).shape;
    if (xs.size() != 4) refuse(st, "2-D transposed convolutions only");
    if (at.get_int("group", 1) != 1) refuse(st, "grouped transposed convolutions have no backward here");
    for (int64_t d : at.get_ints("dilations", {1, 1}))
        if (d != 1) refuse(st, "dilated transposed convolutions have no backward here");
    if (at.get_string("auto_pad", "NOTSET") != "NOTSET" || at.has("output_shape"))
        refuse(st, "auto_pad or output_shape has no backward here");
    const Shape s = at.get_ints("strides", {1, 1});
    const Shape p = at.get_ints("pads", {0, 0, 0, 0});
    if (p.size() != 4 || p[0] != p[2] || p[1] != p[3]) refuse(st, "asymmetric pads have no backward here");
    const Shape op = at.get_ints("output_padding", {0, 0});
    for (size_t d = 0; d < 2; ++d)
        if (op[d] >= s[d]) refuse(st, "an output padding of a stride or more has no backward here");
    const ref::Attrs a = attrs_of({{"kernel_shape", ref::Attr::of_ints({ws[2], ws[3]})},
                                   {"strides", ref::Attr::of_ints(s)},
                                   {"pads", ref::Attr::of_ints(p)},
                                   {"dilations", ref::Attr::of_ints({1, 1})}});
    const int gz = nd(through_activation(st, gy), st.name + "/dY");
    if (needs(x)) {
        const int dx = emit(st.name + "/dX", "Conv", 11, a, {gz, fwd(w)});
        if (m_tp.tensors[static_cast<size_t>(dx)].ref.shape != xs) refuse(st, "no Conv of dY gives X's size");
        accumulate(x, dx, st.name);
    }
    if (needs(w)) {
        const int wg = weight_grad(w);
        try {
            emit(st.name + "/dW", "Conv2DBackpropFilter", 1, a, {gz, nd(fwd(x), st.name + "/X")}, wg);
        } catch (const ops::UnsupportedError& e) {
            refuse(st, std::string("the weight gradient: ") + e.what());
        }
        weight_done(w);
    }
    if (st.in.size() > 2 && needs(st.in[2])) {
        const int b = st.in[2];
        const int wg = weight_grad(b);
        emit(st.name + "/dB", "ReduceSum", 11,
             attrs_of({{"axes", ref::Attr::of_ints({0, 2, 3})}, {"keepdims", ref::Attr::of_int(0)}}), {gz}, wg);
        weight_done(b);
    }
}

// AveragePool (2-D): each input pixel takes, from every window holding it, that window's dY over
// its divisor: dX = ConvTranspose(dY / count, ones) of C groups (depthwise, the pooling's kernel,
// strides and pads; output padding to X's size). The divisor is k_h k_w (a constant folded into
// the kernel's ones) unless pads are excluded from it (count_include_pad 0, the default, with
// pads): then dY is first multiplied by a constant (1, 1, OH, OW) of 1 / the window's count.
void Builder::average_pool(const PlanStep& st, int gy) {
    const ref::Attrs& at = st.desc.attrs;
    const int x = st.in[0];
    if (!needs(x)) return;
    const Shape& xs = pref(x).shape;
    const Shape& ys = pref(st.out[0]).shape;
    if (xs.size() != 4) refuse(st, "2-D pooling only");
    const Shape k = at.ints("kernel_shape");
    const Shape s = at.get_ints("strides", {1, 1});
    const Shape p = at.get_ints("pads", {0, 0, 0, 0});
    if (k.size() != 2 || s.size() != 2 || p.size() != 4) refuse(st, "2-D pooling only");
    for (int64_t d : at.get_ints("dilations", {1, 1}))
        if (d != 1) refuse(st, "dilated pooling has no backward here");
    if (at.get_string("auto_pad", "NOTSET") != "NOTSET") refuse(st, "auto_pad has no backward here");
    if (p[0] != p[2] || p[1] != p[3]) refuse(st, "asymmetric pads have no backward here");
    Shape op(2);
    for (size_t d = 0; d < 2; ++d) op[d] = xs[2 + d] - ((ys[2 + d] - 1) * s[d] - 2 * p[d] + k[d]);
    if (op[0] < 0 || op[1] < 0 || op[0] >= s[0] || op[1] >= s[1])
        refuse(st, "windows past the padded input (ceil_mode) have no backward here");
    const ElemType e = pref(x).elem;
    const bool exclude = at.get_int("count_include_pad", 0) == 0 && (p[0] || p[1]);
    gy = nd(gy, st.name + "/dY");
    if (exclude) {
        ref::HostTensor inv(e, {1, 1, ys[2], ys[3]});
        for (int64_t i = 0; i < ys[2]; ++i)
            for (int64_t j = 0; j < ys[3]; ++j) {
                auto span = [](int64_t o, int64_t st_, int64_t pad, int64_t kk, int64_t n) {
                    const int64_t lo = o * st_ - pad;
                    return std::min(lo + kk, n) - std::max<int64_t>(lo, 0);
                };
                inv.data[static_cast<size_t>(i * ys[3] + j)] =
                    1.0 / static_cast<double>(span(i, s[0], p[0], k[0], xs[2]) * span(j, s[1], p[1], k[1], xs[3]));
            }
        ref::round_to_type(inv);
        gy = emit(st.name + "/dY_count", "Mul", 14, {}, {gy, constant(inv)});
    }
    ref::HostTensor ones(e, {xs[1], 1, k[0], k[1]});
    for (double& v : ones.data) v = exclude ? 1.0 : 1.0 / static_cast<double>(k[0] * k[1]);
    ref::round_to_type(ones);
    ref::Attrs a = attrs_of({{"strides", ref::Attr::of_ints(s)},
                             {"pads", ref::Attr::of_ints(p)},
                             {"kernel_shape", ref::Attr::of_ints(k)},
                             {"output_padding", ref::Attr::of_ints(op)},
                             {"group", ref::Attr::of_int(xs[1])}});
    accumulate(x, emit(st.name + "/grad", "ConvTranspose", 11, a, {gy, constant(ones)}), st.name);
}

void Builder::max_pool(const PlanStep& st, int gy) {
    const ref::Attrs& at = st.desc.attrs;
    const int x = st.in[0];
    if (!needs(x)) return;
    const Shape& xs = pref(x).shape;
    const Shape& ys = pref(st.out[0]).shape;
    if (xs.size() != 4) refuse(st, "2-D pooling only");
    if (st.out.size() > 1 && st.out[1] >= 0) refuse(st, "the Indices output has no backward here");
    const Shape k = at.ints("kernel_shape");
    const Shape s = at.get_ints("strides", {1, 1});
    const Shape p = at.get_ints("pads", {0, 0, 0, 0});
    for (int64_t d : at.get_ints("dilations", {1, 1}))
        if (d != 1) refuse(st, "dilated pooling has no backward here");
    if (at.get_string("auto_pad", "NOTSET") != "NOTSET") refuse(st, "auto_pad has no backward here");
    // The MaxPool backward kernel: on X, Y and dY as the forward kept them in NC1HWC0 (whole C0
    // rows per tap, runtime/ops/norm/pool_c0_kernel.h), else whole rows in NCHW (X, Y and dY
    // converted); the composition below where neither can run.
    if (c0(fwd(x)) && c0(fwd(st.out[0])) && c0(gy)) {
        try {
            accumulate(x, emit(st.name + "/grad", "MaxPoolGrad", 1, at, {fwd(x), fwd(st.out[0]), gy}), st.name);
            ++m_tp.layout.kept;
            return;
        } catch (const ops::UnsupportedError&) {
        }
    }
    const int xn = nd(fwd(x), st.name + "/X"), yn = nd(fwd(st.out[0]), st.name + "/Y");
    gy = nd(gy, st.name + "/dY");
    try {
        accumulate(x, emit(st.name + "/grad", "MaxPoolGrad", 1, at, {xn, yn, gy}), st.name);
        return;
    } catch (const ops::UnsupportedError&) {
    }
    const ElemType e = pref(x).elem;
    // x padded with -inf-like values so every window offset is a plain strided slice.
    const Shape ext = {xs[2] + p[0] + p[2] + s[0] * 2, xs[3] + p[1] + p[3] + s[1] * 2};
    ref::HostTensor lowest(e, {});
    lowest.data[0] = -60000.0;  // below any activation (fp16's range ends at 65504)
    const Shape pads = {0, 0, p[0], p[1], 0, 0, ext[0] - xs[2] - p[0], ext[1] - xs[3] - p[1]};
    const int xp = emit(st.name + "/pad", "Pad", 13, {}, {xn, constant(*ints(pads)), constant(lowest)},
                        -1, {nullptr, ints(pads), std::make_shared<const ref::HostTensor>(lowest)});
    int sum = -1;
    for (int64_t a = 0; a < k[0]; ++a)
        for (int64_t b = 0; b < k[1]; ++b) {
            const std::string nm = st.name + "/win" + std::to_string(a) + std::to_string(b);
            const Shape starts = {a, b}, ends = {a + (ys[2] - 1) * s[0] + 1, b + (ys[3] - 1) * s[1] + 1},
                        axes = {2, 3};
            const int xw = emit(nm + "/x", "Slice", 13, {},
                                {xp, constant(*ints(starts)), constant(*ints(ends)), constant(*ints(axes)),
                                 constant(*ints(s))},
                                -1, {nullptr, ints(starts), ints(ends), ints(axes), ints(s)});
            const int eq = emit(nm + "/eq", "Equal", 13, {}, {xw, yn});
            ref::HostTensor zero(e, {});
            const int zc = constant(zero);
            const int m = emit(nm + "/sel", "Where", 16, {}, {eq, gy, zc});
            // Spread onto the input grid in blocks of s: x position i*s + d (d = offset - pad)
            // is block i + q, sub-position r (d = q*s + r, 0 <= r < s). [N,C,OH,OW] ->
            // [N,C,OH,1,OW,1] -> pad the sub-positions to [N,C,OH,s,OW,s] -> shift the blocks
            // by q (crop or pad whole blocks) to ceil(H/s) blocks -> [N,C,H',W'] (-> crop to H, W).
            // Whole blocks keep every row of the intermediate tensors a multiple of s long.
            const int64_t d[2] = {a - p[0], b - p[1]};
            int64_t r[2], q[2], blocks[2];
            for (int i = 0; i < 2; ++i) {
                r[i] = ((d[i] % s[i]) + s[i]) % s[i];
                q[i] = (d[i] - r[i]) / s[i];
                blocks[i] = (xs[2 + i] + s[i] - 1) / s[i];
            }
            ref::HostTensor zero_pad(e, {});
            auto pad = [&](int t, const Shape& pads, const std::string& what) {
                return emit(nm + "/" + what, "Pad", 13, {}, {t, constant(*ints(pads)), constant(zero_pad)},
                            -1, {nullptr, ints(pads), std::make_shared<const ref::HostTensor>(zero_pad)});
            };
            auto slice = [&](int t, const Shape& st0, const Shape& en, const Shape& ax,
                             const std::string& what) {
                return emit(nm + "/" + what, "Slice", 13, {},
                            {t, constant(*ints(st0)), constant(*ints(en)), constant(*ints(ax))}, -1,
                            {nullptr, ints(st0), ints(en), ints(ax)});
            };
            const int m6 = alias(m, {ys[0], ys[1], ys[2], 1, ys[3], 1});
            int t6 = pad(m6, {0, 0, 0, r[0], 0, r[1], 0, 0, 0, s[0] - 1 - r[0], 0, s[1] - 1 - r[1]}, "up");
            // Blocks: crop the ones shifted off the front or past the end, then pad.
            const int64_t crop_front[2] = {std::max<int64_t>(-q[0], 0), std::max<int64_t>(-q[1], 0)};
            const int64_t keep[2] = {std::min(ys[2], blocks[0] - q[0]) - crop_front[0],
                                     std::min(ys[3], blocks[1] - q[1]) - crop_front[1]};
            if (crop_front[0] || crop_front[1] || keep[0] + crop_front[0] < ys[2] ||
                keep[1] + crop_front[1] < ys[3])
                t6 = slice(t6, {crop_front[0], crop_front[1]},
                           {crop_front[0] + keep[0], crop_front[1] + keep[1]}, {2, 4}, "blocks");
            const int64_t before[2] = {std::max<int64_t>(q[0], 0), std::max<int64_t>(q[1], 0)};
            const int64_t after[2] = {blocks[0] - before[0] - keep[0], blocks[1] - before[1] - keep[1]};
            if (before[0] || before[1] || after[0] || after[1])
                t6 = pad(t6, {0, 0, before[0], 0, before[1], 0, 0, 0, after[0], 0, after[1], 0}, "place");
            int g = alias(t6, {ys[0], ys[1], blocks[0] * s[0], blocks[1] * s[1]});
            if (blocks[0] * s[0] != xs[2] || blocks[1] * s[1] != xs[3])
                g = slice(g, {0, 0}, {xs[2], xs[3]}, axes, "crop");
            sum = sum < 0 ? g : emit(nm + "/sum", "Add", 14, {}, {sum, g});
        }
    accumulate(x, sum, st.name);
}

}  // namespace sfumato::graph::detail
