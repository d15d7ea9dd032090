// RmsNorm of the LLM decoder layers (contract: docs/llm.md, "Operators"),
// optionally fused with the residual add before it as the vendor's AddRmsNorm:
// s = x + residual, y = s * rsqrt(mean(s^2)
// + eps) * weight, residual_out = s. A vector kernel over rows of H elements:
// each block takes a contiguous range of rows, a tile is k rows padded to cp (a
// multiple of 64) fp32 lanes in UB. Per tile MTE2 loads x (and the residual) in
// one burst set, V converts to fp32, adds, squares, folds each row pairwise and
// reduces the last 64 lanes, spreads the per-row rsqrt over a 256-byte vector
// and applies it and the weight (held in UB as fp32 for the whole kernel), and
// MTE3 stores y (and s); double-buffered queues overlap the pipes. Statistics
// in fp32. Simplified: a row must fit in UB single-buffered (H up to about 10k
// fp16 on a 192 KiB UB); longer rows are rejected with a clear message rather
// than chunked.
#pragma once
#include <cstdint>

#include "isa/dtype.h"
#include "isa/instr_sink.h"
#include "sim/device_if.h"

namespace sfumato::ops::llm {

struct RmsPlan {
    isa::DType xt = isa::DType::FP16, wt = isa::DType::FP16;
    uint64_t x = 0, res = 0, w = 0, y = 0,
             res_out = 0;  // GM; res/res_out 0 = absent
    bool has_res = false, has_res_out = false;
    uint64_t rows = 0, cols = 0;
    uint32_t cp = 64, k = 1, buffers = 2;
    uint64_t per_block = 1;
    uint32_t blocks = 1;
    double eps = 1e-6;
};

uint64_t rms_ub_bytes(const RmsPlan& p, uint32_t k);
// Fills cp, k, buffers, per_block, blocks; false when one row does not fit in
// UB.
bool plan_rms(RmsPlan& p, const DeviceInfo& dev);
void rms_norm_kernel(isa::IInstrSink& sink, const RmsPlan& p);

}  // namespace sfumato::ops::llm
