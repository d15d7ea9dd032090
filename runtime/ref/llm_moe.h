// Host-side routing of a mixture-of-experts layer (contract: docs/llm.md, "Operators"), shared
// by the host references (runtime/ref/llm_moe.cpp), the operators' host-known attributes
// (runtime/ops/llm/moe*.cpp) and the `sfumato kernel` forms: which experts a token goes to, and
// where each (token, slot) entry lands in the expert-grouped order.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace sfumato::ref {

// Top-k of one row of router logits: the k largest, in descending order, ties to the lower
// expert index (selection on the logits equals selection on their softmax, which is monotonic,
// and cannot be disturbed by rounding of the probabilities).
std::vector<int64_t> moe_top_k(const double* logits, int64_t E, int64_t k);

// The expert-grouped order of T * k entries (entry i = token i / k, slot i % k) with expert ids
// `experts` in [0, E): experts in ascending order, entries of one expert in ascending entry
// order (stable). rows[i] = the row entry i takes; sizes[e] = entries of expert e. Throws
// InputError naming `who` for an id outside [0, E).
struct MoeGrouping {
    std::vector<int64_t> rows, sizes;
};
MoeGrouping moe_group(const std::vector<int64_t>& experts, int64_t E, const std::string& who);

// Per-token dynamic int8 quantisation of one row of n values (already the fp32 values the
// kernel converts the input to), in the kernel's fp32 arithmetic: amax = max |x| floored at
// kQuantFloor, scale = fl32(amax / 127), q = saturate(rint(fl32(x * fl32(127 / amax)))).
constexpr float kQuantFloor = 1e-30f;
float quant_row(const float* x, int64_t n, int8_t* q);

}  // namespace sfumato::ref
