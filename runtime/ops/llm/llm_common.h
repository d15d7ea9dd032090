// Helpers shared by the LLM operators (runtime/ops/llm/): activation input
// checks that name the node and input, the fp32 conversions every vector kernel
// here starts and ends with, and the UB-side gap of a burst set whose rows are
// padded to a lane multiple.
#pragma once
#include <cstdint>
#include <limits>
#include <string>

#include "runtime/kernel/kernel_context.h"
#include "runtime/ops/node_op.h"

namespace sfumato::ops::llm {

constexpr isa::DType F32 = isa::DType::FP32;
constexpr isa::DType I32 = isa::DType::INT32;
constexpr double kInf = std::numeric_limits<double>::infinity();
inline uint32_t u32(uint64_t v) { return static_cast<uint32_t>(v); }

// Storage dtype of an activation input (fp16, bf16 or fp32, contiguous ND);
// otherwise UnsupportedError naming the input.
isa::DType act_input(const NodeDesc& n, size_t i, const char* what);
// An index input (int32 or int64 in the graph, int32 on the device, contiguous
// ND).
const TensorRef& index_input(const NodeDesc& n, size_t i, const char* what);

// dst (fp32) = src (dtype t) for n elements (n a multiple of 64 or the exact
// count); fp32 sources are copied.
void to_f32(kernel::KernelContext& ctx, uint32_t dst, uint32_t src, isa::DType t, uint64_t n);
// dst (dtype t) = src (fp32), rounded to nearest even.
void from_f32(kernel::KernelContext& ctx, uint32_t dst, uint32_t src, isa::DType t, uint64_t n);

// UB bytes to reserve for a buffer: a few KiB and more staggered over the bank
// groups (runtime/ops/norm/vec_nest.h), smaller ones only aligned (a small UB
// cannot spare the gaps).
inline uint64_t stag(uint64_t b) { return b >= 4096 ? (b + 2047) / 2048 * 2048 + 256 : (b + 63) / 64 * 64; }

// UB gap in 32-byte blocks between rows of `cols` elements of size es padded to
// `cp` elements.
inline uint32_t gap_blocks(uint64_t cp, uint64_t cols, uint64_t es) {
    return u32((cp * es - (cols * es + 31) / 32 * 32) / 32);
}

}  // namespace sfumato::ops::llm
