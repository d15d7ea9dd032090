// The counter-based random numbers of the Sample operator (contract: docs/llm.md,
// "Operators"), shared by the host reference and the device kernel's scalar code so that both
// draw identically: a Gumbel variate per (seed, row, rank) from a SplitMix64 hash, and the
// reference of Sample itself.
#pragma once
#include <cstdint>
#include <vector>

namespace sfumato::ref {

// g = -ln(-ln(u)), u = (h >> 11 + 0.5) / 2^53 with h = splitmix64(seed, row, rank), rounded to
// fp32 (the kernel places it in UB as fp32).
float sample_gumbel(uint64_t seed, uint64_t row, uint64_t rank);

// The candidates of one row: the top_k logits (value descending, lower index first on ties);
// the chosen one: greedy = rank 0; top_k > 1 = argmax over ranks j of
// fp32(fp32(v_j * (1 / temperature)) + g_j) (first rank on ties): the Gumbel-max draw from
// softmax(v / temperature) over the candidates, in the fp32 steps the kernel takes.
int64_t sample_row(const double* logits, int64_t V, int64_t top_k, double temperature, uint64_t seed,
                   uint64_t row);

}  // namespace sfumato::ref
