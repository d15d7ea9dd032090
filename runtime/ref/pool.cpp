// Pooling geometry (runtime/ref/pool.h) and the host references (ONNX semantics, in double) of
// MaxPool (with the optional Indices output: flat index into the whole input, row-major or,
// with storage_order = 1, column-major over the spatial dims), AveragePool (count_include_pad
// counts the explicit or SAME padding but never the ceil-mode overhang beyond it),
// GlobalAveragePool and GlobalMaxPool, for any number of spatial dims.
#include "runtime/ref/pool.h"

#include <cmath>
#include <limits>

#include "runtime/ref/ref_ops.h"
#include "sim/error.h"

namespace sfumato::ref {

uint64_t PoolGeom::taps() const {
    uint64_t t = 1;
    for (int64_t k : kernel) t *= static_cast<uint64_t>(k);
    return t;
}

namespace {
[[noreturn]] void pool_bad(const std::string& node, const std::string& op, const std::string& what) {
    throw InputError("node '" + node + "' (" + op + "): " + what);
}

std::vector<int64_t> per_dim(const std::string& node, const std::string& op, const Attrs& a, const char* name,
                             size_t n, int64_t dflt) {
    std::vector<int64_t> v = a.get_ints(name, std::vector<int64_t>(n, dflt));
    if (v.size() != n)
        pool_bad(node, op, "attribute '" + std::string(name) + "' has " + std::to_string(v.size()) + " values for " +
                          std::to_string(n) + " spatial dims");
    for (int64_t x : v)
        if (x < 1) pool_bad(node, op, "attribute '" + std::string(name) + "' value " + std::to_string(x) + " must be >= 1");
    return v;
}
}  // namespace

PoolGeom pool_geometry(const std::string& node, const std::string& op, const Attrs& a, const std::vector<int64_t>& x) {
    PoolGeom g;
    if (x.size() < 3) pool_bad(node, op, "input rank " + std::to_string(x.size()) + " < 3 (N, C, spatial...)");
    g.spatial = x.size() - 2;
    const size_t n = g.spatial;
    g.in.assign(x.begin() + 2, x.end());
    if (!a.has("kernel_shape")) pool_bad(node, op, "missing attribute 'kernel_shape'");
    g.kernel = per_dim(node, op, a, "kernel_shape", n, 1);
    g.stride = per_dim(node, op, a, "strides", n, 1);
    g.dilation = per_dim(node, op, a, "dilations", n, 1);
    g.ceil_mode = a.get_int("ceil_mode", 0) != 0;
    g.count_include_pad = a.get_int("count_include_pad", 0) != 0;
    g.storage_order = static_cast<int>(a.get_int("storage_order", 0));
    if (g.storage_order != 0 && g.storage_order != 1)
        pool_bad(node, op, "attribute 'storage_order' = " + std::to_string(g.storage_order) + " (valid: 0, 1)");
    const std::string auto_pad = a.get_string("auto_pad", "NOTSET");
    std::vector<int64_t> pads = a.get_ints("pads", std::vector<int64_t>(2 * n, 0));
    if (pads.size() != 2 * n)
        pool_bad(node, op, "attribute 'pads' has " + std::to_string(pads.size()) + " values for " + std::to_string(n) +
                          " spatial dims (needs begin and end values)");
    g.pad_begin.assign(pads.begin(), pads.begin() + static_cast<long>(n));
    g.pad_end.assign(pads.begin() + static_cast<long>(n), pads.end());
    g.out.resize(n);
    for (size_t d = 0; d < n; ++d) {
        const int64_t span = (g.kernel[d] - 1) * g.dilation[d] + 1;
        if (g.pad_begin[d] < 0 || g.pad_end[d] < 0) pool_bad(node, op, "attribute 'pads' has a negative value");
        if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
            g.out[d] = (g.in[d] + g.stride[d] - 1) / g.stride[d];
            const int64_t total = std::max<int64_t>(0, (g.out[d] - 1) * g.stride[d] + span - g.in[d]);
            const int64_t small = total / 2;
            g.pad_begin[d] = auto_pad == "SAME_UPPER" ? small : total - small;
            g.pad_end[d] = total - g.pad_begin[d];
            continue;
        }
        if (auto_pad == "VALID") {
            g.pad_begin[d] = g.pad_end[d] = 0;
        } else if (auto_pad != "NOTSET") {
            pool_bad(node, op, "attribute 'auto_pad' = '" + auto_pad + "' (valid: NOTSET, VALID, SAME_UPPER, SAME_LOWER)");
        }
        const int64_t room = g.in[d] + g.pad_begin[d] + g.pad_end[d] - span;
        if (room < 0)
            pool_bad(node, op, "attribute 'kernel_shape' window " + std::to_string(span) + " exceeds the padded input " +
                              std::to_string(g.in[d] + g.pad_begin[d] + g.pad_end[d]) + " in spatial dim " +
                              std::to_string(d));
        int64_t o = (g.ceil_mode ? (room + g.stride[d] - 1) / g.stride[d] : room / g.stride[d]) + 1;
        if (g.ceil_mode && (o - 1) * g.stride[d] >= g.in[d] + g.pad_begin[d]) --o;
        g.out[d] = o;
    }
    return g;
}

namespace {

// Calls f(out_index, in_coords-of-window-start) for every output position of one plane.
template <class F>
void for_each_window(const PoolGeom& g, F&& f) {
    const size_t n = g.spatial;
    std::vector<int64_t> o(n, 0);
    uint64_t total = 1;
    for (int64_t v : g.out) total *= static_cast<uint64_t>(v);
    for (uint64_t flat = 0; flat < total; ++flat) {
        f(flat, o);
        for (size_t d = n; d-- > 0;) {
            if (++o[d] < g.out[d]) break;
            o[d] = 0;
        }
    }
}

std::vector<HostTensor> pool(const RefNode& nd, const std::vector<const HostTensor*>& in, bool is_max) {
    if (in.empty() || !in[0]) pool_bad(nd.name, nd.op_type, "missing input 'X'");
    const HostTensor& x = *in[0];
    const PoolGeom g = pool_geometry(nd.name, nd.op_type, nd.attrs, x.shape);
    const size_t n = g.spatial;
    std::vector<int64_t> yshape = {x.shape[0], x.shape[1]};
    yshape.insert(yshape.end(), g.out.begin(), g.out.end());
    HostTensor y(x.type, yshape), idx(ElemType::Int64, yshape);
    uint64_t plane_in = 1, plane_out = 1;
    for (size_t d = 0; d < n; ++d) plane_in *= static_cast<uint64_t>(g.in[d]), plane_out *= static_cast<uint64_t>(g.out[d]);
    const uint64_t planes = static_cast<uint64_t>(x.shape[0] * x.shape[1]);
    const uint64_t taps = g.taps();
    std::vector<int64_t> pos(n), t(n);
    for (uint64_t p = 0; p < planes; ++p) {
        for_each_window(g, [&](uint64_t of, const std::vector<int64_t>& o) {
            double best = -std::numeric_limits<double>::infinity(), sum = 0;
            int64_t best_i = -1;
            uint64_t valid = 0, padded = 0;
            std::fill(t.begin(), t.end(), 0);
            for (uint64_t k = 0; k < taps; ++k) {
                bool inside = true, in_pad_box = true;
                for (size_t d = 0; d < n; ++d) {
                    pos[d] = o[d] * g.stride[d] - g.pad_begin[d] + t[d] * g.dilation[d];
                    inside = inside && pos[d] >= 0 && pos[d] < g.in[d];
                    in_pad_box = in_pad_box && pos[d] >= -g.pad_begin[d] && pos[d] < g.in[d] + g.pad_end[d];
                }
                padded += in_pad_box;
                if (inside) {
                    uint64_t off = 0;
                    if (g.storage_order == 0) {
                        for (size_t d = 0; d < n; ++d) off = off * static_cast<uint64_t>(g.in[d]) + static_cast<uint64_t>(pos[d]);
                    } else {
                        for (size_t d = n; d-- > 0;) off = off * static_cast<uint64_t>(g.in[d]) + static_cast<uint64_t>(pos[d]);
                    }
                    uint64_t row = 0;
                    for (size_t d = 0; d < n; ++d) row = row * static_cast<uint64_t>(g.in[d]) + static_cast<uint64_t>(pos[d]);
                    const double v = x.data[p * plane_in + row];
                    ++valid;
                    sum += v;
                    if (v > best || best_i < 0) best = v, best_i = static_cast<int64_t>(p * plane_in + off);
                }
                for (size_t d = n; d-- > 0;) {
                    if (++t[d] < g.kernel[d]) break;
                    t[d] = 0;
                }
            }
            const uint64_t at = p * plane_out + of;
            if (is_max) {
                y.data[at] = best;
                idx.data[at] = static_cast<double>(best_i);
            } else {
                const uint64_t div = g.count_include_pad ? padded : valid;
                y.data[at] = div ? sum / static_cast<double>(div) : 0.0;
            }
        });
    }
    round_to_type(y);
    if (is_max) return {y, idx};
    return {y};
}

std::vector<HostTensor> global_pool(const RefNode& nd, const std::vector<const HostTensor*>& in, bool is_max) {
    if (in.empty() || !in[0]) pool_bad(nd.name, nd.op_type, "missing input 'X'");
    const HostTensor& x = *in[0];
    if (x.rank() < 3) pool_bad(nd.name, nd.op_type, "input rank " + std::to_string(x.rank()) + " < 3 (N, C, spatial...)");
    std::vector<int64_t> yshape(x.shape.size(), 1);
    yshape[0] = x.shape[0], yshape[1] = x.shape[1];
    HostTensor y(x.type, yshape);
    const uint64_t plane = x.numel() / static_cast<uint64_t>(x.shape[0] * x.shape[1]);
    for (uint64_t p = 0; p < y.numel(); ++p) {
        double acc = is_max ? -std::numeric_limits<double>::infinity() : 0.0;
        for (uint64_t k = 0; k < plane; ++k) {
            const double v = x.data[p * plane + k];
            acc = is_max ? std::max(acc, v) : acc + v;
        }
        y.data[p] = is_max ? acc : acc / static_cast<double>(plane);
    }
    round_to_type(y);
    return {y};
}

// MaxPoolGrad (sfumato-only; inputs X, Y = MaxPool(X), dY; MaxPool's attributes, 2-D, dilation
// 1): every input pixel that equals the maximum of a window holding it takes that window's
// gradient (ties pass it to every maximum), summed over the windows.
std::vector<HostTensor> max_pool_grad(const RefNode& node, const std::vector<const HostTensor*>& in) {
    const std::string who = "node '" + node.name + "' (" + node.op_type + "): ";
    if (in.size() < 3 || !in[0] || !in[1] || !in[2]) throw InputError(who + "needs inputs X, Y and dY");
    const HostTensor &x = *in[0], &y = *in[1], &dy = *in[2];
    const PoolGeom g = pool_geometry(node.name, node.op_type, node.attrs, x.shape);
    if (g.spatial != 2) throw InputError(who + "2-D pooling only");
    if (y.shape != dy.shape || y.shape.size() != 4 || y.shape[2] != g.out[0] || y.shape[3] != g.out[1] ||
        y.shape[0] != x.shape[0] || y.shape[1] != x.shape[1])
        throw InputError(who + "Y and dY must have MaxPool's output shape");
    const int64_t planes = x.shape[0] * x.shape[1], H = g.in[0], W = g.in[1], OH = g.out[0], OW = g.out[1];
    HostTensor dx(x.type, x.shape);
    for (int64_t pl = 0; pl < planes; ++pl)
        for (int64_t i = 0; i < OH; ++i)
            for (int64_t j = 0; j < OW; ++j) {
                const double m = y.data[(pl * OH + i) * OW + j], d = dy.data[(pl * OH + i) * OW + j];
                for (int64_t a = 0; a < g.kernel[0]; ++a)
                    for (int64_t b = 0; b < g.kernel[1]; ++b) {
                        const int64_t h = i * g.stride[0] + a * g.dilation[0] - g.pad_begin[0];
                        const int64_t w = j * g.stride[1] + b * g.dilation[1] - g.pad_begin[1];
                        if (h < 0 || w < 0 || h >= H || w >= W) continue;
                        if (x.data[(pl * H + h) * W + w] == m) dx.data[(pl * H + h) * W + w] += d;
                    }
            }
    round_to_type(dx);
    return {dx};
}

}  // namespace

SFUMATO_REGISTER_REF(max_pool_grad, "MaxPoolGrad", max_pool_grad);
SFUMATO_REGISTER_REF(max_pool, "MaxPool",
                     [](const RefNode& n, const std::vector<const HostTensor*>& in) { return pool(n, in, true); });
SFUMATO_REGISTER_REF(average_pool, "AveragePool",
                     [](const RefNode& n, const std::vector<const HostTensor*>& in) { return pool(n, in, false); });
SFUMATO_REGISTER_REF(global_average_pool, "GlobalAveragePool",
                     [](const RefNode& n, const std::vector<const HostTensor*>& in) { return global_pool(n, in, false); });
SFUMATO_REGISTER_REF(global_max_pool, "GlobalMaxPool",
                     [](const RefNode& n, const std::vector<const HostTensor*>& in) { return global_pool(n, in, true); });

}  // namespace sfumato::ref
