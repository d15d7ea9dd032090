// Sample (contract: docs/llm.md, "Operators"): next-token ids [B] from logits [B, V] on the
// device, greedy (top_k = 1) or top-k with temperature. A vector kernel, rows split over the
// vector cores. Per row the logits stream through UB in chunks; the running top-k candidates
// (value, index: fp32) sit in front of each chunk in one work row W = [candidates ; chunk], and
// k rounds of a whole-row maximum with index (the first position wins, so equal values keep the
// lower index: candidates come from earlier chunks) pick the new candidates, each taken value
// removed by a compare-and-select against an iota. The draw is the Gumbel-max trick over the
// k candidates: argmax_j fp32(v_j / T) + g_j, with g_j computed by the scalar unit from the
// counter-based generator of (seed, row, rank) in runtime/ref/llm_sample.h and placed in UB by
// masked duplicates, so device and host draw identically; the chosen index is gathered from
// the candidates' indices by a vector gather (data flows; no control flow depends on data).
// Simplified: -inf logits rank with the padding (an all -inf row returns an unspecified id);
// the candidate search costs k passes over each chunk (the vendor's TopK sorts).
#pragma once
#include <cstdint>

#include "isa/dtype.h"
#include "isa/instr_sink.h"
#include "sim/device_if.h"

namespace sfumato::ops::llm {

struct SamplePlan {
    isa::DType t = isa::DType::FP16;
    uint64_t x = 0, y = 0;  // GM: logits, ids (int32)
    uint64_t B = 0, V = 0;
    uint32_t k = 1, kp = 64;  // candidates, rounded up to 64 lanes
    uint32_t C = 64;          // chunk of the row per round (multiple of 64)
    double inv_temp = 1.0;
    uint64_t seed = 0;
    uint64_t per_block = 1;
    uint32_t blocks = 1;
};

uint64_t sample_ub_bytes(const SamplePlan& p, uint32_t C);
void sample_kernel(isa::IInstrSink& sink, const SamplePlan& p);

}  // namespace sfumato::ops::llm
