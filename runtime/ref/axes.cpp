// Axis helpers (runtime/ref/axes.h).
#include "runtime/ref/axes.h"

#include <cmath>

#include "sim/error.h"

namespace sfumato::ref {

int64_t normalize_axis_attr(const std::string& node, const std::string& attr, int64_t axis, size_t rank,
                            bool inclusive_end) {
    const int64_t r = static_cast<int64_t>(rank);
    const int64_t hi = inclusive_end ? r : r - 1;
    if (axis < -r || axis > hi)
        throw InputError("node '" + node + "': attribute '" + attr + "' = " + std::to_string(axis) +
                         " is out of range [" + std::to_string(-r) + ", " + std::to_string(hi) + "] for rank " +
                         std::to_string(rank));
    return axis < 0 ? axis + r : axis;
}

uint64_t dim_product(const std::vector<int64_t>& shape, size_t lo, size_t hi) {
    uint64_t p = 1;
    for (size_t i = lo; i < hi && i < shape.size(); ++i) p *= static_cast<uint64_t>(shape[i]);
    return p;
}

AxisView axis_view(const std::vector<int64_t>& shape, size_t lo, size_t hi) {
    return {dim_product(shape, 0, lo), dim_product(shape, lo, hi), dim_product(shape, hi, shape.size())};
}

bool reduce_axes_from_input(const std::string& op_type, int opset) {
    return op_type == "ReduceSum" ? opset >= 13 : opset >= 18;
}

ReduceAxes reduce_axes(const std::string& node, const Attrs& attrs, bool axes_attr_form, const HostTensor* axes_input,
                       size_t rank) {
    ReduceAxes r;
    r.keepdims = attrs.get_int("keepdims", 1) != 0;
    std::vector<int64_t> axes;
    // From the opset where the axes became input 1 (ReduceSum 13, the others 18) the attribute
    // is not read: a node still carrying it would reduce over every axis, silently.
    if (!axes_attr_form && attrs.has("axes"))
        throw InputError("node '" + node + "': attribute 'axes' is not part of this opset's form (the axes are input 1 "
                         "from ReduceSum opset 13 and the other reductions' opset 18); give them as an input or "
                         "declare an older opset");
    if (axes_attr_form) {
        axes = attrs.get_ints("axes", {});
    } else if (axes_input) {
        for (double v : axes_input->data) axes.push_back(static_cast<int64_t>(v));
    }
    r.reduced.assign(rank, false);
    if (axes.empty()) {
        if (!axes_attr_form && attrs.get_int("noop_with_empty_axes", 0) != 0) {
            r.noop = true;
            return r;
        }
        r.reduced.assign(rank, true);
        return r;
    }
    for (int64_t a : axes) {
        const int64_t n = normalize_axis_attr(node, "axes", a, rank);
        r.reduced[static_cast<size_t>(n)] = true;
    }
    return r;
}

std::vector<int64_t> reduced_shape(const std::vector<int64_t>& shape, const ReduceAxes& r) {
    if (r.noop) return shape;
    std::vector<int64_t> out;
    for (size_t i = 0; i < shape.size(); ++i) {
        if (!r.reduced[i]) out.push_back(shape[i]);
        else if (r.keepdims) out.push_back(1);
    }
    return out;
}

}  // namespace sfumato::ref
