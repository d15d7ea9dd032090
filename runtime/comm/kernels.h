// The collective library's device work besides peer copies: vector-core kernels (written with
// the kernel API, so they take AIV cores and HBM bandwidth like any other kernel) that copy
// elements between buffers (staging user data in and out of the communication buffers) and
// reduce k inputs elementwise (sum, max or min, in the data type, in input order: one rounding
// per operation, as the vector unit computes). Each block streams its share of the elements in
// tiles through UB with double-buffered queues.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/comm/comm_types.h"
#include "sim/device_if.h"

namespace sfumato::comm {

struct CopyRun {
    uint64_t dst = 0, src = 0;  // device addresses
    uint64_t count = 0;         // elements
};

KernelDesc copy_kernel(const DeviceInfo& dev, isa::DType t, std::vector<CopyRun> runs, const std::string& name);
KernelDesc reduce_kernel(const DeviceInfo& dev, isa::DType t, RedOp op, uint64_t dst, std::vector<uint64_t> srcs,
                         uint64_t count, const std::string& name);

}  // namespace sfumato::comm
