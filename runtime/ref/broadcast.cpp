#include "runtime/ref/broadcast.h"

#include <cmath>
#include <algorithm>
#include <limits>

#include "sim/error.h"

namespace sfumato::ref {

std::vector<int64_t> broadcast_shapes(const std::string& node, const std::vector<std::vector<int64_t>>& shapes) {
    size_t rank = 0;
    for (const auto& s : shapes) rank = std::max(rank, s.size());
    std::vector<int64_t> out(rank, 1);
    std::vector<int> from(rank, -1);  // which input fixed each dimension (for the message)
    for (size_t i = 0; i < shapes.size(); ++i) {
        const auto& s = shapes[i];
        for (size_t k = 0; k < s.size(); ++k) {
            const size_t d = rank - s.size() + k;
            if (s[k] == 1) continue;
            if (out[d] == 1) {
                out[d] = s[k];
                from[d] = static_cast<int>(i);
            } else if (out[d] != s[k]) {
                throw InputError("node '" + node + "': cannot broadcast input " + std::to_string(i) + " " +
                                 shape_str(s) + " with input " + std::to_string(from[d]) + " " +
                                 shape_str(shapes[static_cast<size_t>(from[d])]) + " (dimension " + std::to_string(d) +
                                 ": " + std::to_string(s[k]) + " vs " + std::to_string(out[d]) + ")");
            }
        }
    }
    // A zero-size dimension stays zero when another input has 1 there (numpy semantics).
    for (const auto& s : shapes)
        for (size_t k = 0; k < s.size(); ++k)
            if (s[k] == 0) out[rank - s.size() + k] = 0;
    return out;
}

bool broadcasts_to(const std::vector<int64_t>& shape, const std::vector<int64_t>& out) {
    if (shape.size() > out.size()) return false;
    for (size_t k = 0; k < shape.size(); ++k) {
        const int64_t o = out[out.size() - shape.size() + k];
        if (shape[k] != 1 && shape[k] != o) return false;
    }
    return true;
}

std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& shape, const std::vector<int64_t>& out) {
    std::vector<int64_t> st(out.size(), 0);
    const std::vector<int64_t> c = contiguous_strides(shape);
    for (size_t k = 0; k < shape.size(); ++k) {
        const size_t d = out.size() - shape.size() + k;
        st[d] = shape[k] == 1 && out[d] != 1 ? 0 : c[k];
    }
    return st;
}

HostTensor broadcast_to(const HostTensor& t, const std::vector<int64_t>& out) {
    HostTensor r(t.type, out);
    const std::vector<int64_t> st = broadcast_strides(t.shape, out);
    const size_t rank = out.size();
    std::vector<int64_t> idx(rank, 0);
    for (uint64_t i = 0; i < r.data.size(); ++i) {
        int64_t off = 0;
        for (size_t d = 0; d < rank; ++d) off += idx[d] * st[d];
        r.data[i] = t.data[static_cast<size_t>(off)];
        for (size_t d = rank; d-- > 0;) {
            if (++idx[d] < out[d]) break;
            idx[d] = 0;
        }
    }
    return r;
}

int64_t normalize_axis(const std::string& node, const std::string& what, int64_t axis, int64_t rank) {
    if (axis < -rank || axis >= std::max<int64_t>(rank, 1))
        throw InputError("node '" + node + "': " + what + " " + std::to_string(axis) + " out of range for rank " +
                         std::to_string(rank));
    return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> int_values(const HostTensor& t) {
    std::vector<int64_t> v;
    v.reserve(t.data.size());
    // Saturating: ONNX uses INT64_MAX/MIN as "to the end" (their double is just outside int64).
    for (double x : t.data) {
        if (std::isnan(x)) throw InputError("a NaN where an integer (shape, axis, pad or index) is expected");
        v.push_back(x >= 9.2e18 ? std::numeric_limits<int64_t>::max()
                    : x <= -9.2e18 ? std::numeric_limits<int64_t>::min()
                                  : static_cast<int64_t>(x));
    }
    return v;
}

uint64_t numel_of(const std::vector<int64_t>& shape) {
    uint64_t n = 1;
    for (int64_t d : shape) n *= static_cast<uint64_t>(d);
    return n;
}

}  // namespace sfumato::ref
