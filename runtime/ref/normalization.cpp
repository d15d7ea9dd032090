// Host references (ONNX semantics, in double) of Softmax, LogSoftmax, LayerNormalization,
// BatchNormalization and InstanceNormalization, opsets 1-17:
// - Softmax/LogSoftmax: from opset 13 along one axis (default -1); before, the input is
//   coerced to 2-D at `axis` (default 1) and the softmax runs over the flattened second part.
// - LayerNormalization (17): statistics over dims [axis, rank), Scale and B broadcast to them
//   (numpy, right-aligned); outputs Y, Mean and InvStdDev (the last two float, shape of X with
//   the normalised dims set to 1).
// - BatchNormalization: inference y = (x - mean) / sqrt(var + eps) * scale + B per channel
//   (dim 1); with training_mode = 1 (opset 14+) the batch statistics over every dim but 1 are
//   used and running_mean/running_var are returned (momentum-weighted, population variance).
//   BatchNormTraining (sfumato-only, what a training step runs): the same with batch statistics,
//   and the batch mean and variance (fp32) as outputs 4 and 5; attribute relu = 1: Y = max(Y, 0).
// - InstanceNormalization: statistics per (n, c) over the spatial dims.
// Outputs are rounded to their element type.
#include <cmath>
#include <limits>

#include "runtime/ref/axes.h"
#include "runtime/ref/node_checks.h"
#include "runtime/ref/ref_ops.h"
#include "sim/error.h"

namespace sfumato::ref {

namespace {

// Value of `t` broadcast (numpy, right-aligned) to `shape` at the row-major index of `shape`.
double bcast_at(const HostTensor& t, const std::vector<int64_t>& shape, uint64_t flat) {
    uint64_t off = 0, stride = 1;
    const size_t r = shape.size(), tr = t.shape.size();
    for (size_t k = 0; k < r; ++k) {
        const size_t d = r - 1 - k;
        const uint64_t idx = flat % static_cast<uint64_t>(shape[d]);
        flat /= static_cast<uint64_t>(shape[d]);
        if (k < tr) {
            const uint64_t td = static_cast<uint64_t>(t.shape[tr - 1 - k]);
            off += (td == 1 ? 0 : idx) * stride;
            stride *= td;
        }
    }
    return t.data[off];
}

void check_bcast(const RefNode& n, const HostTensor& t, const std::vector<int64_t>& to, const char* what) {
    bool ok = t.shape.size() <= to.size();
    for (size_t k = 0; ok && k < t.shape.size(); ++k) {
        const int64_t a = t.shape[t.shape.size() - 1 - k], b = to[to.size() - 1 - k];
        ok = a == b || a == 1;
    }
    if (!ok)
        throw InputError("node '" + n.name + "' (" + n.op_type + "): input '" + what + "' " + shape_str(t.shape) +
                         " does not broadcast to " + shape_str(to));
}

std::vector<HostTensor> softmax_family(const RefNode& n, const std::vector<const HostTensor*>& in, bool log) {
    const HostTensor& x = need(n, in, 0, "input");
    const size_t rank = x.rank();
    AxisView v;
    if (n.opset >= 13) {
        const int64_t a = normalize_axis_attr(n.name, "axis", n.attrs.get_int("axis", -1), rank);
        v = axis_view(x.shape, static_cast<size_t>(a), static_cast<size_t>(a) + 1);
    } else {
        const int64_t a = normalize_axis_attr(n.name, "axis", n.attrs.get_int("axis", 1), rank, true);
        v = axis_view(x.shape, static_cast<size_t>(a), rank);
    }
    HostTensor y(x.type, x.shape);
    for (uint64_t o = 0; o < v.outer; ++o)
        for (uint64_t i = 0; i < v.inner; ++i) {
            const uint64_t base = o * v.len * v.inner + i;
            double m = -std::numeric_limits<double>::infinity();
            for (uint64_t k = 0; k < v.len; ++k) m = std::max(m, x.data[base + k * v.inner]);
            double s = 0;
            for (uint64_t k = 0; k < v.len; ++k) s += std::exp(x.data[base + k * v.inner] - m);
            for (uint64_t k = 0; k < v.len; ++k) {
                const double d = x.data[base + k * v.inner] - m;
                y.data[base + k * v.inner] = log ? d - std::log(s) : std::exp(d) / s;
            }
        }
    round_to_type(y);
    return {y};
}

std::vector<HostTensor> layer_norm(const RefNode& n, const std::vector<const HostTensor*>& in) {
    const HostTensor& x = need(n, in, 0, "X");
    const HostTensor& scale = need(n, in, 1, "Scale");
    const HostTensor* bias = in.size() > 2 ? in[2] : nullptr;
    const size_t rank = x.rank();
    const size_t a = static_cast<size_t>(normalize_axis_attr(n.name, "axis", n.attrs.get_int("axis", -1), rank));
    const double eps = n.attrs.get_float("epsilon", 1e-5);
    const std::vector<int64_t> norm_shape(x.shape.begin() + static_cast<long>(a), x.shape.end());
    check_bcast(n, scale, norm_shape, "Scale");
    if (bias) check_bcast(n, *bias, norm_shape, "B");
    const AxisView v = axis_view(x.shape, a, rank);
    std::vector<int64_t> stat_shape = x.shape;
    for (size_t d = a; d < rank; ++d) stat_shape[d] = 1;
    HostTensor y(x.type, x.shape), mean(ElemType::Float, stat_shape), inv(ElemType::Float, stat_shape);
    for (uint64_t o = 0; o < v.outer; ++o) {
        const double* row = x.data.data() + o * v.len;
        double s = 0;
        for (uint64_t k = 0; k < v.len; ++k) s += row[k];
        const double m = v.len ? s / static_cast<double>(v.len) : 0.0;
        double q = 0;
        for (uint64_t k = 0; k < v.len; ++k) q += (row[k] - m) * (row[k] - m);
        const double var = v.len ? q / static_cast<double>(v.len) : 0.0;
        const double r = 1.0 / std::sqrt(var + eps);
        mean.data[o] = m;
        inv.data[o] = r;
        for (uint64_t k = 0; k < v.len; ++k) {
            double val = (row[k] - m) * r * bcast_at(scale, norm_shape, k);
            if (bias) val += bcast_at(*bias, norm_shape, k);
            y.data[o * v.len + k] = val;
        }
    }
    round_to_type(y);
    round_to_type(mean);
    round_to_type(inv);
    return {y, mean, inv};
}

// Per-channel parameter c of a [C] tensor (named `what`).
const HostTensor& channel_param(const RefNode& n, const std::vector<const HostTensor*>& in, size_t i, const char* what,
                                int64_t channels) {
    const HostTensor& t = need(n, in, i, what);
    if (t.numel() != static_cast<uint64_t>(channels))
        throw InputError("node '" + n.name + "' (" + n.op_type + "): input '" + what + "' has " +
                         std::to_string(t.numel()) + " values for " + std::to_string(channels) + " channels");
    return t;
}

std::vector<HostTensor> batch_norm(const RefNode& n, const std::vector<const HostTensor*>& in) {
    const HostTensor& x = need(n, in, 0, "X");
    if (x.rank() < 2) throw InputError("node '" + n.name + "' (BatchNormalization): input 'X' needs rank >= 2");
    const int64_t C = x.shape[1];
    const HostTensor& scale = channel_param(n, in, 1, "scale", C);
    const HostTensor& bias = channel_param(n, in, 2, "B", C);
    const HostTensor& mean = channel_param(n, in, 3, "input_mean", C);
    const HostTensor& var = channel_param(n, in, 4, "input_var", C);
    const double eps = n.attrs.get_float("epsilon", 1e-5);
    const bool batch_stats = n.op_type == "BatchNormTraining";
    const bool training = batch_stats || (n.opset >= 14 && n.attrs.get_int("training_mode", 0) != 0);
    const AxisView v = axis_view(x.shape, 1, 2);
    std::vector<double> m(static_cast<size_t>(C)), s2(static_cast<size_t>(C));
    for (int64_t c = 0; c < C; ++c) {
        if (!training) {
            m[c] = mean.data[c], s2[c] = var.data[c];
            continue;
        }
        double sum = 0, sq = 0;
        const double cnt = static_cast<double>(v.outer * v.inner);
        for (uint64_t o = 0; o < v.outer; ++o)
            for (uint64_t i = 0; i < v.inner; ++i) sum += x.data[(o * C + c) * v.inner + i];
        m[c] = sum / cnt;
        for (uint64_t o = 0; o < v.outer; ++o)
            for (uint64_t i = 0; i < v.inner; ++i) {
                const double d = x.data[(o * C + c) * v.inner + i] - m[c];
                sq += d * d;
            }
        s2[c] = sq / cnt;
    }
    HostTensor y(x.type, x.shape);
    for (uint64_t o = 0; o < v.outer; ++o)
        for (int64_t c = 0; c < C; ++c)
            for (uint64_t i = 0; i < v.inner; ++i) {
                const uint64_t k = (o * C + c) * v.inner + i;
                y.data[k] = (x.data[k] - m[c]) / std::sqrt(s2[c] + eps) * scale.data[c] + bias.data[c];
            }
    if (batch_stats && n.attrs.get_int("relu", 0) != 0)  // a training step's fused Relu
        for (double& v : y.data) v = std::max(v, 0.0);
    round_to_type(y);
    if (!training) return {y};
    const double mom = n.attrs.get_float("momentum", 0.9);
    HostTensor rm(mean.type, mean.shape), rv(var.type, var.shape);
    for (int64_t c = 0; c < C; ++c) {
        rm.data[c] = mean.data[c] * mom + m[c] * (1 - mom);
        rv.data[c] = var.data[c] * mom + s2[c] * (1 - mom);
    }
    round_to_type(rm);
    round_to_type(rv);
    if (!batch_stats) return {y, rm, rv};
    HostTensor bm(ElemType::Float, mean.shape), bv(ElemType::Float, var.shape);
    for (int64_t c = 0; c < C; ++c) bm.data[c] = m[c], bv.data[c] = s2[c];
    round_to_type(bm);
    round_to_type(bv);
    return {y, rm, rv, bm, bv};
}

std::vector<HostTensor> instance_norm(const RefNode& n, const std::vector<const HostTensor*>& in) {
    const HostTensor& x = need(n, in, 0, "input");
    if (x.rank() < 3) throw InputError("node '" + n.name + "' (InstanceNormalization): input needs rank >= 3");
    const int64_t C = x.shape[1];
    const HostTensor& scale = channel_param(n, in, 1, "scale", C);
    const HostTensor& bias = channel_param(n, in, 2, "B", C);
    const double eps = n.attrs.get_float("epsilon", 1e-5);
    const AxisView v = axis_view(x.shape, 2, x.rank());
    HostTensor y(x.type, x.shape);
    for (uint64_t o = 0; o < v.outer; ++o) {
        const uint64_t c = o % static_cast<uint64_t>(C);
        const double* row = x.data.data() + o * v.len;
        double s = 0, q = 0;
        for (uint64_t k = 0; k < v.len; ++k) s += row[k];
        const double m = s / static_cast<double>(v.len);
        for (uint64_t k = 0; k < v.len; ++k) q += (row[k] - m) * (row[k] - m);
        const double r = 1.0 / std::sqrt(q / static_cast<double>(v.len) + eps);
        for (uint64_t k = 0; k < v.len; ++k) y.data[o * v.len + k] = (row[k] - m) * r * scale.data[c] + bias.data[c];
    }
    round_to_type(y);
    return {y};
}

}  // namespace

SFUMATO_REGISTER_REF(softmax, "Softmax",
                     [](const RefNode& n, const std::vector<const HostTensor*>& in) { return softmax_family(n, in, false); });
SFUMATO_REGISTER_REF(log_softmax, "LogSoftmax",
                     [](const RefNode& n, const std::vector<const HostTensor*>& in) { return softmax_family(n, in, true); });
SFUMATO_REGISTER_REF(layer_norm, "LayerNormalization", layer_norm);
SFUMATO_REGISTER_REF(batch_norm, "BatchNormalization", batch_norm);
SFUMATO_REGISTER_REF(batch_norm_training, "BatchNormTraining", batch_norm);
SFUMATO_REGISTER_REF(instance_norm, "InstanceNormalization", instance_norm);

}  // namespace sfumato::ref
