// Axis handling shared by the host references and the operators of the normalisation,
// reduction and pooling families: an ONNX axis attribute made non-negative (errors name the node
// and the attribute), products of dimension ranges, the [outer, axis, inner] view a reduction
// or softmax walks, and the ONNX reduction axes (attribute before opset 18, ReduceSum's input
// from opset 13; empty axes reduce everything unless noop_with_empty_axes).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/ref/attrs.h"
#include "runtime/ref/host_tensor.h"

namespace sfumato::ref {

// axis in [-rank, rank) (or [-rank, rank] when `inclusive_end`) made non-negative; otherwise
// InputError "node 'N': attribute 'axis' = 5 is out of range [-3, 2] for rank 3".
int64_t normalize_axis_attr(const std::string& node, const std::string& attr, int64_t axis, size_t rank,
                            bool inclusive_end = false);
// Product of shape[lo, hi).
uint64_t dim_product(const std::vector<int64_t>& shape, size_t lo, size_t hi);

// A tensor walked as [outer][len][inner] around axis range [lo, hi) (row-major).
struct AxisView {
    uint64_t outer = 1, len = 1, inner = 1;
};
AxisView axis_view(const std::vector<int64_t>& shape, size_t lo, size_t hi);

// The reduction a Reduce* node performs on an input of `rank` dimensions.
struct ReduceAxes {
    std::vector<bool> reduced;  // per input dimension
    bool noop = false;          // noop_with_empty_axes with no axes: the output is the input
    bool keepdims = true;
};
// Reads axes from the attribute (`axes_attr_form`) or from the axes input (`axes_input`, null
// when absent or empty), normalises and de-duplicates them. Throws InputError naming the node
// and 'axes' for an axis out of range.
ReduceAxes reduce_axes(const std::string& node, const Attrs& attrs, bool axes_attr_form,
                       const HostTensor* axes_input, size_t rank);
// True when op_type at this opset takes its axes as an input (ReduceSum from 13, the others
// from 18).
bool reduce_axes_from_input(const std::string& op_type, int opset);
// The output shape of a reduction (reduced dims kept as 1 or dropped).
std::vector<int64_t> reduced_shape(const std::vector<int64_t>& shape, const ReduceAxes& r);

}  // namespace sfumato::ref
