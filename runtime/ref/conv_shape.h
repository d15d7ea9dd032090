// Geometry of ONNX Conv and ConvTranspose nodes (any number of spatial dimensions): kernel
// shape, strides, dilations, begin/end pads after auto_pad (NOTSET, VALID, SAME_UPPER,
// SAME_LOWER), output_padding / output_shape of ConvTranspose, groups, and the output shape.
// Shared by the host references and the cube operators so both read the attributes alike.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/ref/attrs.h"

namespace sfumato::ref {

struct ConvGeometry {
    bool transpose = false;
    int64_t n = 0, c = 0, m = 0, group = 1;  // batch, input and output channels
    std::vector<int64_t> in, kernel, stride, dilation, pad_begin, pad_end, out_pad, out;
    size_t rank() const { return in.size(); }
    int64_t c_per_group() const { return c / group; }
    int64_t m_per_group() const { return m / group; }
    std::vector<int64_t> out_shape() const;  // (N, M, out...)
};

// From the node's attributes and the shapes of X and W (Conv: W is M x C/group x k...;
// ConvTranspose: C x M/group x k...). Throws InputError naming the node on inconsistent shapes
// or attributes.
ConvGeometry conv_geometry(const std::string& node, const std::string& op_type, const Attrs& attrs,
                           const std::vector<int64_t>& x, const std::vector<int64_t>& w);

}  // namespace sfumato::ref
