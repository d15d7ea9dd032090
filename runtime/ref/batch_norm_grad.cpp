// Host references of the BatchNormalization training backward as a training step runs it on
// NC1HWC0 tensors (sfumato-only op types; runtime/ops/norm/bn_train_kernel.h), on logical
// [N, C, spatial...] values, in double:
// - BatchNormGradReduce(X, dY, batch_mean, batch_var, scale; epsilon) -> [5, C] fp32, rows
//   dscale = invstd sum (x - mean) dy, dB = sum dy (sums over N and the spatial dims), and the
//   coefficients of dX = a dy + b x + c: a = scale invstd, b = -a dscale invstd / M,
//   c = a (-dB / M + mean dscale invstd / M), with invstd = 1 / sqrt(var + eps), M = N x spatial
//   (the gradient through the batch statistics included);
// - BatchNormGradApply(X, dY, coefficients) -> dX = a dy + b x + c, in dY's type.
#include <cmath>

#include "runtime/ref/axes.h"
#include "runtime/ref/node_checks.h"
#include "runtime/ref/ref_ops.h"

namespace sfumato::ref {

namespace {

AxisView bn_grad_view(const RefNode& n, const HostTensor& x, const HostTensor& dy) {
    if (x.rank() < 2) fail(n, "input 'X' needs rank >= 2");
    if (dy.shape != x.shape) fail(n, "dY " + shape_str(dy.shape) + " is not X's shape " + shape_str(x.shape));
    return axis_view(x.shape, 1, 2);
}

const HostTensor& bn_channels(const RefNode& n, const std::vector<const HostTensor*>& in, size_t i, const char* what,
                              uint64_t count) {
    const HostTensor& t = need(n, in, i, what);
    if (t.numel() != count)
        fail(n, std::string("input '") + what + "' has " + std::to_string(t.numel()) + " values, want " +
                    std::to_string(count));
    return t;
}

std::vector<HostTensor> bn_grad_reduce(const RefNode& n, const std::vector<const HostTensor*>& in) {
    const HostTensor &x = need(n, in, 0, "X"), &dy = need(n, in, 1, "dY");
    const AxisView v = bn_grad_view(n, x, dy);
    const int64_t C = x.shape[1];
    const uint64_t c_count = static_cast<uint64_t>(C);
    const HostTensor& mean = bn_channels(n, in, 2, "batch_mean", c_count);
    const HostTensor& var = bn_channels(n, in, 3, "batch_var", c_count);
    const HostTensor& scale = bn_channels(n, in, 4, "scale", c_count);
    const double eps = n.attrs.get_float("epsilon", 1e-5);
    const double m = static_cast<double>(v.outer * v.inner);
    HostTensor out(ElemType::Float, {5, C});
    for (int64_t c = 0; c < C; ++c) {
        double sdy = 0, sxdy = 0;
        for (uint64_t o = 0; o < v.outer; ++o)
            for (uint64_t i = 0; i < v.inner; ++i) {
                const uint64_t k = (o * c_count + static_cast<uint64_t>(c)) * v.inner + i;
                sdy += dy.data[k];
                sxdy += (x.data[k] - mean.data[c]) * dy.data[k];
            }
        const double inv = 1.0 / std::sqrt(var.data[c] + eps), dscale = sxdy * inv, a = scale.data[c] * inv;
        const double k1 = -dscale * inv / m, k2 = -sdy / m;
        const double row[5] = {dscale, sdy, a, a * k1, a * (k2 - mean.data[c] * k1)};
        for (int64_t r = 0; r < 5; ++r) out.data[static_cast<size_t>(r * C + c)] = row[r];
    }
    round_to_type(out);
    return {out};
}

std::vector<HostTensor> bn_grad_apply(const RefNode& n, const std::vector<const HostTensor*>& in) {
    const HostTensor &x = need(n, in, 0, "X"), &dy = need(n, in, 1, "dY");
    const AxisView v = bn_grad_view(n, x, dy);
    const uint64_t C = static_cast<uint64_t>(x.shape[1]);
    const HostTensor& k = bn_channels(n, in, 2, "coefficients", 5 * C);
    HostTensor dx(dy.type, dy.shape);
    for (uint64_t o = 0; o < v.outer; ++o)
        for (uint64_t c = 0; c < C; ++c)
            for (uint64_t i = 0; i < v.inner; ++i) {
                const uint64_t e = (o * C + c) * v.inner + i;
                dx.data[e] = k.data[2 * C + c] * dy.data[e] + k.data[3 * C + c] * x.data[e] + k.data[4 * C + c];
            }
    round_to_type(dx);
    return {dx};
}

}  // namespace

SFUMATO_REGISTER_REF(batch_norm_grad_reduce, "BatchNormGradReduce", bn_grad_reduce);
SFUMATO_REGISTER_REF(batch_norm_grad_apply, "BatchNormGradApply", bn_grad_apply);

}  // namespace sfumato::ref
