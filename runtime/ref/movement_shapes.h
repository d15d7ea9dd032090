// Attribute and shape rules of the data-movement operators, shared by their host references
// and their device ops so both read a node the same way: Transpose's perm, Concat's axis,
// Split's sizes, Slice's clamped starts/steps, Pad's pads and value, and the output shape of
// the reshape family. Values that ONNX passes as inputs (opset-dependent) come in as host
// tensors (null = absent); errors name the node and the attribute or input.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/ref/attrs.h"
#include "runtime/ref/host_tensor.h"

namespace sfumato::ref {

std::vector<int64_t> transpose_perm(const std::string& node, const Attrs& a, int64_t rank);

int64_t concat_axis(const std::string& node, const Attrs& a, const std::vector<std::vector<int64_t>>& shapes);
std::vector<int64_t> concat_shape(const std::string& node, int64_t axis, const std::vector<std::vector<int64_t>>& shapes);

// Sizes of Split's outputs along the axis: input `split` (opset >= 13), attribute `split`
// (older), else attribute `num_outputs` parts (opset 18; the last one smaller when it does not
// divide) or one equal part per output the node lists (`num_outputs`, earlier opsets).
std::vector<int64_t> split_sizes(const std::string& node, int opset, const Attrs& a, const HostTensor* split, int64_t dim,
                                 int num_outputs = 0);

struct SliceSpec {
    std::vector<int64_t> start, step, out_shape;  // per dimension of the input
};
SliceSpec slice_spec(const std::string& node, int opset, const Attrs& a, const std::vector<int64_t>& shape,
                     const HostTensor* starts, const HostTensor* ends, const HostTensor* axes, const HostTensor* steps);

struct PadSpec {
    std::string mode;                     // constant | reflect | edge | wrap
    std::vector<int64_t> begin, end;      // per dimension (negative crops)
    std::vector<int64_t> out_shape;
    double value = 0;
};
PadSpec pad_spec(const std::string& node, int opset, const Attrs& a, const std::vector<int64_t>& shape,
                 const HostTensor* pads, const HostTensor* value, const HostTensor* axes);

// Output shape of Reshape / Flatten / Squeeze / Unsqueeze / Identity (input 1: shape or axes).
std::vector<int64_t> view_shape(const std::string& node, const std::string& op, int opset, const Attrs& a,
                                const std::vector<int64_t>& shape, const HostTensor* in1);

}  // namespace sfumato::ref
