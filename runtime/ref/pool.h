// Geometry of ONNX pooling (MaxPool, AveragePool), shared by the host reference and the
// operator's host tiling so both read the attributes the same way: kernel_shape, strides
// (default 1), dilations (MaxPool; default 1), pads (begin values then end values, default 0),
// auto_pad (NOTSET, VALID, SAME_UPPER, SAME_LOWER), ceil_mode. Output size per spatial dim:
// floor or ceil((in + pad_begin + pad_end - ((k - 1) * d + 1)) / s) + 1, where in ceil mode a
// last window that would start beyond the input and its begin padding is dropped (the rule
// PyTorch exports with); SAME_* pads so that out = ceil(in / s), the odd pad at the end
// (UPPER) or the beginning (LOWER); VALID pads nothing.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/ref/attrs.h"

namespace sfumato::ref {

struct PoolGeom {
    size_t spatial = 0;  // number of spatial dims (input rank - 2)
    std::vector<int64_t> in, out, kernel, stride, dilation, pad_begin, pad_end;
    bool ceil_mode = false;
    bool count_include_pad = false;  // AveragePool
    int storage_order = 0;           // MaxPool indices: 0 row-major, 1 column-major
    // Taps of one window (product of kernel).
    uint64_t taps() const;
};

// Reads the pooling attributes of node `node` (op_type names it in errors) for an input of shape
// `x` (N, C, spatial...). Throws InputError naming the node and the attribute.
PoolGeom pool_geometry(const std::string& node, const std::string& op_type, const Attrs& attrs,
                       const std::vector<int64_t>& x);

}  // namespace sfumato::ref
