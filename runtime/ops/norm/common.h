// Host-side helpers of the normalisation, reduction and pooling operators: input checks that
// name the node and input, splitting work items over the vector cores, and KernelDesc
// assembly with the roofline fields (compulsory GM bytes, a vector lower bound from the
// number of fp32 passes the algorithm makes over its data).
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "runtime/ops/node_op.h"
#include "sim/device_if.h"

namespace sfumato::ops::norm {

// The storage dtype of input i when it is a float the vector unit computes on (fp16, bf16,
// fp32); otherwise UnsupportedError naming the input and its type.
isa::DType float_input(const NodeDesc& n, size_t i, const char* what);
// Input i must be present.
const TensorRef& need_input(const NodeDesc& n, size_t i, const char* what);

struct WorkSplit {
    uint32_t blocks = 1;
    uint64_t per_block = 1;
};
// Contiguous ranges of `items` work items over at most `cores` blocks.
WorkSplit split_work(uint64_t items, uint32_t cores);

// A vector kernel launch: fp32 passes over `elems` elements give the compute lower bound.
KernelDesc vector_launch(const std::string& name, const std::string& type, uint32_t blocks,
                         std::function<void(isa::IInstrSink&)> body, double flops, uint64_t bytes, double fp32_passes,
                         uint64_t elems, const DeviceInfo& dev);

// Output TensorRef like `like` with another shape / element type.
TensorRef tensor_like(const TensorRef& like, const std::vector<int64_t>& shape);

}  // namespace sfumato::ops::norm
