// The row kernel of Softmax, LogSoftmax, LayerNormalization and InstanceNormalization: every
// work row (a contiguous run of `cols` elements in GM) is normalised on its own, in one pass
// over the data when the row fits in UB. Work rows are indexed [P][Q] (row (p, q) starts at
// element p * sp + q * sq), so LayerNorm/Softmax walk plain rows (P = 1) and InstanceNorm walks
// channel-major (p = channel, q = batch), which gives every tile one channel and its scale and
// bias as two scalars. A block takes a contiguous range of work rows; a tile is up to k rows of
// one p, padded to cp (a multiple of 64) fp32 lanes in UB.
//
// Per tile: MTE2 loads the rows (byte-exact bursts, the UB side padded to 32 B), V converts to
// fp32, fills the padding lanes with the reduction's neutral value, folds each row pairwise in
// 256-byte units and reduces the last unit (WholeReduce), spreads the per-row statistics over
// one 32-byte block per row (Brcb) and applies them with block-stride-0 operands, converts back
// and MTE3 stores. Queues double-buffer the loads and stores, so MTE2, V and MTE3 overlap.
// Statistics stay in fp32 whatever the storage type.
//
// A Softmax/LogSoftmax row longer than UB runs in two passes over chunks of cp elements: an
// online pass keeps the running maximum M and sum S (S = S * exp(M - M') + sum exp(x - M') per
// chunk), the second pass writes exp(x - M) / S (or x - M - ln S). A LayerNorm/InstanceNorm row
// longer than UB merges per-chunk means and squared deviations in pass 1 (Chan et al.) and
// normalises in pass 2, reloading Scale/B chunks with each x chunk.
#pragma once
#include <cstdint>

#include "isa/dtype.h"
#include "isa/instr_sink.h"

namespace sfumato::ops::norm {

struct RowPlan {
    enum class Kind : uint8_t { Softmax, LogSoftmax, LayerNorm };
    Kind kind = Kind::Softmax;
    isa::DType xt = isa::DType::FP16, yt = isa::DType::FP16;
    uint64_t x = 0, y = 0;       // GM
    uint64_t P = 1, Q = 1;       // work rows [P][Q]
    uint64_t sp = 0, sq = 0;     // element strides of p and q in GM
    uint64_t cols = 0;           // row length
    uint32_t cp = 64;            // padded row length in UB
    uint32_t k = 1;              // rows per tile
    uint64_t nch = 1;            // chunks per row (> 1: a row longer than UB, k = 1, cp = chunk)
    uint64_t per_block = 1;      // work rows per block
    uint32_t blocks = 1;
    uint32_t buffers = 2;
    // LayerNorm / InstanceNorm
    double eps = 1e-5;
    enum class Affine : uint8_t { None, Lanes, PerP };
    Affine affine = Affine::None;
    uint64_t gamma = 0, beta = 0;  // GM; beta 0 = absent
    isa::DType gt = isa::DType::FP32, bt = isa::DType::FP32;
    bool gamma_scalar = false, beta_scalar = false;  // Lanes: one value for every lane
    uint64_t mean = 0, rstd = 0;   // GM of the fp32 statistics outputs (one per work row), 0 = none
};

// UB bytes the kernel needs with k rows per tile.
uint64_t row_ub_bytes(const RowPlan& p, uint32_t k);
void row_kernel(isa::IInstrSink& sink, const RowPlan& p);

}  // namespace sfumato::ops::norm
