// One reduction pass over [outer][len][inner] -> [outer][inner] (the Reduce* operators run one
// pass per group of adjacent reduced dims; GlobalAveragePool/GlobalMaxPool are one pass), on
// the vector unit in fp32 (or int32 for integer tensors):
// - rows form (inner == 1): a tile is k rows padded to 64-lane units; each row is folded
//   pairwise to one unit and reduced by WholeReduce; a row longer than UB is walked in chunks
//   whose unit results accumulate.
// - columns form (inner > 1): a tile is len rows (or a chunk of them) of an inner chunk,
//   loaded as strided bursts and folded elementwise across rows, no transpose.
// The pass applies an optional pre-op (square, abs) to its input and post-op (scale, sqrt, ln)
// to its result; LogSumExp subtracts the row maximum before exp and adds it back after ln.
// ArgMax/ArgMin: the extreme value m first, then candidates = (x == m) ? position : sentinel
// (compare + select against an on-device iota of positions) and the minimum (first index) or
// maximum (last index) candidate, converted to int32.
#pragma once
#include <cstdint>

#include "isa/dtype.h"
#include "isa/instr_sink.h"

namespace sfumato::ops::norm {

struct ReducePlan {
    enum class Op : uint8_t { Sum, Max, Min, Prod, LogSumExp, ArgMax, ArgMin };
    enum class Pre : uint8_t { None, Square, Abs };
    enum class Post : uint8_t { None, Scale, Sqrt, Ln };
    Op op = Op::Sum;
    Pre pre = Pre::None;
    Post post = Post::None;
    double scale = 1.0;
    bool select_last = false;  // ArgMax/ArgMin: the last index of the extreme value
    isa::DType xt = isa::DType::FP16, yt = isa::DType::FP16;
    isa::DType ct = isa::DType::FP32;  // compute type: fp32 or int32
    uint64_t x = 0, y = 0;
    uint64_t outer = 1, len = 1, inner = 1;
    bool rows = true;
    // rows form
    uint32_t cp = 64;       // chunk length in UB (multiple of 64)
    uint64_t nch = 1;       // chunks per row
    uint32_t k = 1;         // rows per tile
    // columns form
    uint64_t ic = 1;        // inner elements per tile
    uint32_t icp = 16;      // padded
    uint32_t g = 1;         // outer slices per tile
    uint64_t rc = 1;        // rows per chunk (== len unless chunked; then g == 1)
    uint64_t per_block = 1;
    uint32_t blocks = 1;
    uint32_t buffers = 2;
    uint64_t ub = 0;  // UB bytes (plan_reduce): the kernel places its buffers in them (reduce_layout.h)
    uint64_t items() const;
};

uint64_t reduce_ub_bytes(const ReducePlan& p);
// Picks the form and tile sizes; false when nothing fits.
bool plan_reduce(ReducePlan& p, uint64_t ub_bytes, uint32_t cores);
void reduce_kernel(isa::IInstrSink& sink, const ReducePlan& p);

}  // namespace sfumato::ops::norm
