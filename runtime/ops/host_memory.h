// Host memory of a functional run. In functional mode an operator's inputs, their device image
// (the functional global memory lives in host memory), its output and its host reference all
// take host memory; a large operator can need more than the machine has. An operator states
// what it needs before allocating any of it, and a run that cannot have it stops with a clear
// error (exit 2) naming the figure and timing mode, which holds no data, instead of failing in
// the allocator. What is available is the kernel's MemAvailable estimate (Linux); elsewhere
// the check is skipped.
#pragma once
#include <cstdint>
#include <string>

namespace sfumato::ops {

// Bytes of host memory the system can give without swapping; 0 when unknown.
uint64_t host_memory_available();
// `what` (e.g. "kernel matmul 4096x4096x4096") needs `bytes` of host memory in functional mode:
// throws InputError naming both figures and --mode timing when they are not available; states
// the figure on stderr when it is large (1 GiB or more).
void require_host_memory(const std::string& what, uint64_t bytes);

}  // namespace sfumato::ops
