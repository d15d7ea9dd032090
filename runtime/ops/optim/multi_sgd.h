// Plain SGD (w -= lr g) over many weights in one launch, as frameworks' multi-tensor ("foreach")
// optimizers apply one kernel to a list of parameters: a training step's plain-SGD update runs
// one launch per all-reduce bucket instead of one per weight (the per-weight launches were mostly
// start-up: a BatchNorm's 64 values took a 6 us kernel).
// The segments (W, G, element count; W and G of one type) are concatenated into one index space
// split into equal contiguous shares over the vector cores; each core walks the segments its
// share overlaps in tiles: W and G in (MTE2), w - lr g in fp32 (the elementwise SgdUpdate's
// arithmetic), W out in its type (MTE3), over W's own bytes.
#pragma once
#include <string>
#include <vector>

#include "sim/device_if.h"

namespace sfumato::ops {

struct SgdSegment {
    uint64_t w = 0, g = 0;  // GM addresses (W is updated in place)
    uint64_t n = 0;         // elements
};

// Throws InputError for a type other than fp16, bf16 or fp32 or a non-finite lr.
KernelDesc multi_sgd_kernel(const std::vector<SgdSegment>& segs, isa::DType dtype, double lr, const DeviceInfo& dev,
                            const std::string& name);

}  // namespace sfumato::ops
