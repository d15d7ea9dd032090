// The fused kernels of BatchNormalization in training over an NC1HWC0 tensor whose channels fill
// whole C0 blocks (storage [N, C1, L, C0], L pixels), the structure the vendor's graph uses
// (a statistics reduction and an update kernel forward, a reduce-grad and an update-grad kernel
// backward) rather than a chain of library kernels:
//   Stats      per channel sum x and sum x^2 over N x L in one read of X (fp32 accumulation);
//   GradStats  per channel sum dy and sum (x - mean) dy in one read of X and dY;
//   Apply      Y = a x + c (a, c per channel; optionally ReLU) in one pass over X;
//   GradApply  dX = a dy + b x + c in one pass over X and dY.
// A work item is a channel block c1 and a range of the rows (planes, or chunks of a plane) of
// that block; each loads tiles of whole C0 rows (contiguous bursts, a tile's element e is channel
// lane e % C0), converts them to fp32 and accumulates elementwise over the tile (or applies the
// per-channel coefficients as a 64-lane row repeated over the tile). The reductions write one
// partial (2 x C0 fp32) per item; a finalize kernel (one block per group of channel blocks) sums
// the partials and computes the per-channel results:
//   forward:  mean, var = E[x^2] - mean^2 (population, clamped at 0), a = scale / sqrt(var + eps),
//             c = B - mean a, running statistics input * momentum + batch * (1 - momentum);
//   backward: dscale = sum (x - mean) dy / sqrt(var + eps), dB = sum dy and the coefficients of
//             dX = a dy + b x + c (a = scale invstd, b = -a dscale invstd / M,
//             c = -a (dB / M + mean b / a)), rows of a [5, C] fp32 tensor.
#pragma once
#include <cstdint>

#include "isa/dtype.h"
#include "isa/instr_sink.h"

namespace sfumato::ops::norm {

struct BnTrainPlan {
    enum class Kind : uint8_t { Stats, GradStats, Apply, GradApply };
    Kind kind = Kind::Stats;
    isa::DType xt = isa::DType::FP16;  // X, dY, Y, dX storage type
    uint64_t N = 1, C1 = 1, L = 1, C0 = 16;
    // Tiling: a row is a plane (n, c1) or a chunk of pc pixels of one; nch chunks per plane.
    // A tile is nb planes (nch == 1) or one chunk; S ranges of rows per channel block.
    uint64_t pc = 1, nch = 1, nb = 1, S = 1, tile = 64;  // tile: the largest tile's elements
    uint64_t per_block = 1;
    uint32_t blocks = 1;
    bool relu = false;  // Apply: max(Y, 0)
    // GM addresses: x, dy, y (Y or dX); mean (GradStats, fp32 [C]); part (fp32 [S][C1][2][C0]);
    // coef (Apply: fp32 [2][C] a, c; GradApply: fp32 [5][C], rows 2..4 a, b, c).
    uint64_t x = 0, dy = 0, y = 0, mean = 0, part = 0, coef = 0;
    uint64_t rows() const { return N * nch; }
    uint64_t items() const { return C1 * S; }
    uint64_t C() const { return C1 * C0; }
};

// UB bytes a plan needs (for its tile size).
uint64_t bn_ub_bytes(const BnTrainPlan& p);
// Picks the tiling for UB size ub and `cores` blocks; false when not even one C0 row fits.
bool plan_bn(BnTrainPlan& p, uint64_t ub, uint32_t cores);
void bn_kernel(isa::IInstrSink& sink, const BnTrainPlan& p);

struct BnTrainFinalPlan {
    bool grad = false;
    uint64_t C1 = 1, C0 = 16, S = 1;
    uint64_t cg = 1;  // channel blocks per chunk
    uint64_t per_block = 1;
    uint32_t blocks = 1;
    double inv_m = 1, eps = 1e-5, mom = 0.9;
    // forward: scale, B, input_mean, input_var in; mean, var (fp32), running_mean, running_var
    // out; coef fp32 [2][C]. backward: mean, var (fp32), scale in; coef fp32 [5][C] out.
    uint64_t part = 0, scale = 0, bias = 0, in_mean = 0, in_var = 0, mean = 0, var = 0, rm = 0, rv = 0, coef = 0;
    isa::DType scale_t = isa::DType::FP32, bias_t = isa::DType::FP32, in_mean_t = isa::DType::FP32,
               in_var_t = isa::DType::FP32;
    uint64_t C() const { return C1 * C0; }
};

uint64_t bn_final_ub_bytes(const BnTrainFinalPlan& p);
bool plan_bn_final(BnTrainFinalPlan& p, uint64_t ub, uint32_t cores);
void bn_final_kernel(isa::IInstrSink& sink, const BnTrainFinalPlan& p);

}  // namespace sfumato::ops::norm
