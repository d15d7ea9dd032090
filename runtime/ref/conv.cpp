// Host references of Conv and ConvTranspose in ONNX semantics, any number of spatial
// dimensions (geometry: runtime/ref/conv_shape.h), in double:
//   Conv:          y[n, m, o] = b[m] + sum_{c in group(m), k} x[n, c, o * s + k * d - p] w[m, c, k]
//   ConvTranspose: y[n, m, i * s + k * d - p] += x[n, c, i] w[c, m, k]   (c in group(m)), + b[m]
// Taps outside the input (Conv) or outputs outside [0, out) (ConvTranspose) drop out. The
// fused `activation` attribute applies last; one rounding to the output type.
// Conv2DBackpropFilter (sfumato-only, the weight gradient of a 2-D Conv with group 1; inputs X
// and dY, attributes kernel_shape, strides, pads, dilations as the Conv's):
//   dW[m, c, r, s] = sum_{n, i, j} dY[n, m, i, j] x[n, c, i * sh + r * dh - pt, j * sw + s * dw - pl]
#include "runtime/ref/activation.h"
#include "runtime/ref/conv_shape.h"
#include "runtime/ref/ref_ops.h"
#include "sim/error.h"

namespace sfumato::ref {

namespace {

// Row-major index helpers over a spatial shape.
int64_t volume(const std::vector<int64_t>& s) {
    int64_t v = 1;
    for (int64_t d : s) v *= d;
    return v;
}
void unflatten(int64_t flat, const std::vector<int64_t>& shape, std::vector<int64_t>& idx) {
    for (size_t i = shape.size(); i-- > 0;) idx[i] = flat % shape[i], flat /= shape[i];
}

std::vector<HostTensor> ref_conv(const RefNode& node, const std::vector<const HostTensor*>& in) {
    if (in.size() < 2 || !in[0] || !in[1])
        throw InputError("node '" + node.name + "' (" + node.op_type + "): needs inputs X and W");
    const HostTensor &x = *in[0], &w = *in[1];
    const HostTensor* b = in.size() > 2 ? in[2] : nullptr;
    const ConvGeometry g = conv_geometry(node.name, node.op_type, node.attrs, x.shape, w.shape);
    if (b && b->numel() != static_cast<uint64_t>(g.m))
        throw InputError("node '" + node.name + "' (" + node.op_type + "): B needs " + std::to_string(g.m) +
                         " values");
    HostTensor y(x.type, g.out_shape());
    const size_t r = g.rank();
    const int64_t isz = volume(g.in), osz = volume(g.out), ksz = volume(g.kernel);
    const int64_t cg = g.c_per_group(), mg = g.m_per_group();
    std::vector<int64_t> o(r), k(r), i(r);
    for (int64_t n = 0; n < g.n; ++n)
        for (int64_t m = 0; m < g.m; ++m) {
            double* yo = &y.data[(n * g.m + m) * osz];
            for (int64_t q = 0; q < osz; ++q) yo[q] = b ? b->data[m] : 0.0;
            const int64_t grp = m / mg;
            for (int64_t cl = 0; cl < cg; ++cl) {
                const int64_t c = grp * cg + cl;
                const double* xc = &x.data[(n * g.c + c) * isz];
                // Conv: W[m][cl]; ConvTranspose: W[c][m % mg].
                const double* wk =
                    g.transpose ? &w.data[(c * mg + m % mg) * ksz] : &w.data[(m * cg + cl) * ksz];
                for (int64_t kk = 0; kk < ksz; ++kk) {
                    unflatten(kk, g.kernel, k);
                    if (!g.transpose) {
                        for (int64_t q = 0; q < osz; ++q) {
                            unflatten(q, g.out, o);
                            int64_t at = 0;
                            bool inside = true;
                            for (size_t d = 0; d < r && inside; ++d) {
                                const int64_t p = o[d] * g.stride[d] + k[d] * g.dilation[d] - g.pad_begin[d];
                                inside = p >= 0 && p < g.in[d];
                                at = at * g.in[d] + p;
                            }
                            if (inside) yo[q] += xc[at] * wk[kk];
                        }
                    } else {
                        for (int64_t s = 0; s < isz; ++s) {
                            unflatten(s, g.in, i);
                            int64_t at = 0;
                            bool inside = true;
                            for (size_t d = 0; d < r && inside; ++d) {
                                const int64_t p = i[d] * g.stride[d] + k[d] * g.dilation[d] - g.pad_begin[d];
                                inside = p >= 0 && p < g.out[d];
                                at = at * g.out[d] + p;
                            }
                            if (inside) yo[at] += xc[s] * wk[kk];
                        }
                    }
                }
            }
        }
    apply_activation(activation_of(node.attrs), y);
    round_to_type(y);
    return {y};
}

std::vector<HostTensor> ref_conv_wgrad(const RefNode& node, const std::vector<const HostTensor*>& in) {
    const std::string who = "node '" + node.name + "' (" + node.op_type + "): ";
    if (in.size() < 2 || !in[0] || !in[1]) throw InputError(who + "needs inputs X and dY");
    const HostTensor &x = *in[0], &dy = *in[1];
    if (x.shape.size() != 4 || dy.shape.size() != 4 || x.shape[0] != dy.shape[0])
        throw InputError(who + "X and dY must be 4-D with the same batch");
    const std::vector<int64_t> k = node.attrs.ints("kernel_shape");
    const std::vector<int64_t> s = node.attrs.get_ints("strides", {1, 1}), d = node.attrs.get_ints("dilations", {1, 1});
    const std::vector<int64_t> p = node.attrs.get_ints("pads", {0, 0, 0, 0});
    if (k.size() != 2 || s.size() != 2 || d.size() != 2 || p.size() != 4) throw InputError(who + "2-D attributes expected");
    const int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], w = x.shape[3];
    const int64_t m = dy.shape[1], oh = dy.shape[2], ow = dy.shape[3];
    for (int a = 0; a < 2; ++a) {
        const int64_t o = ((a ? w : h) + p[a] + p[a + 2] - (k[a] - 1) * d[a] - 1) / s[a] + 1;
        if (o != (a ? ow : oh)) throw InputError(who + "dY's spatial size does not follow from X's and the attributes");
    }
    HostTensor dw(x.type, {m, c, k[0], k[1]});
    for (int64_t mm = 0; mm < m; ++mm)
        for (int64_t cc = 0; cc < c; ++cc)
            for (int64_t r = 0; r < k[0]; ++r)
                for (int64_t q = 0; q < k[1]; ++q) {
                    double acc = 0;
                    for (int64_t nn = 0; nn < n; ++nn)
                        for (int64_t i = 0; i < oh; ++i) {
                            const int64_t ih = i * s[0] + r * d[0] - p[0];
                            if (ih < 0 || ih >= h) continue;
                            for (int64_t j = 0; j < ow; ++j) {
                                const int64_t iw = j * s[1] + q * d[1] - p[1];
                                if (iw < 0 || iw >= w) continue;
                                acc += dy.data[((nn * m + mm) * oh + i) * ow + j] * x.data[((nn * c + cc) * h + ih) * w + iw];
                            }
                        }
                    dw.data[((mm * c + cc) * k[0] + r) * k[1] + q] = acc;
                }
    round_to_type(dw);
    return {dw};
}

}  // namespace

SFUMATO_REGISTER_REF(conv_wgrad, "Conv2DBackpropFilter", ref_conv_wgrad);
SFUMATO_REGISTER_REF(conv, "Conv", ref_conv);
SFUMATO_REGISTER_REF(conv_transpose, "ConvTranspose", ref_conv);

}  // namespace sfumato::ref
