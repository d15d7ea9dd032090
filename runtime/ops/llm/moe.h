// Mixture-of-experts operators (contract: docs/llm.md, "Operators"), the vector side:
// - MoeRouter: logits [T, E] -> weights [T, k], experts [T, k]. A vector kernel, tokens split
//   over the vector cores, a tile of rows loaded in one burst; per token k rounds of a whole-row
//   max with index (the first lane on ties: the lower expert), each chosen lane then masked to
//   -inf by comparing an on-core iota with the position; exp(l - l_max) and its running sum per
//   round, one division per tile renormalises. Selection runs on the logits, not on rounded
//   probabilities (softmax is monotonic), so the host reference selects exactly the same experts.
// - MoePermute: x [T, H], experts [T, k] -> x_perm [T k, H] grouped by expert, rows [T, k] (the
//   x_perm row of each entry), group_sizes [E]. Two launches over the same contiguous split of the
//   T k entries: (1) a vector histogram per block (compare with each expert id, select 1 / 0, sum)
//   into a [blocks, E] workspace table; (2) each block's scalar unit reads the table, forms its
//   base row per expert (experts before e over all blocks, plus expert e in blocks before it),
//   reads its entries' ids, stores each entry's row (ST_GM) and copies the token's row from x once
//   to each of its rows (MTE2 into UB, MTE3 out). Block 0 stores group_sizes. A stable counting
//   sort: experts ascending, entries in order inside an expert.
// - MoeCombine: y_perm [R, H], rows [T, k], weights [T, k] -> y [T, H] = sum_j weights[t, j] *
//   y_perm[rows[t, j]]: a vector kernel over (token, column chunk) units; the scalar unit reads the
//   row index and the weight of each entry, MTE2 loads the row, V accumulates w * row in fp32.
// Host-known routing: timing mode holds no data, so a row address or a group size read from GM
// would be 0 there and the modes' cycles would differ. The optional attribute `host_experts`
// (ints, T k: the experts as the host knows them; the model builder draws them from a seed in
// timing mode) makes the kernels take ids, table entries and rows from it (the scalar unit still
// issues every load, as the chip's kernel does); both modes then take the same cycles. Without it
// the loaded values are used. Simplified: a loaded expert id outside [0, E) is clamped.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/ops/node_op.h"

namespace sfumato::ops::llm {

// The attribute `host_experts` of a MoE node checked against T k entries and E experts (empty
// when absent); UnsupportedError naming the node otherwise.
std::vector<int64_t> host_experts_attr(const NodeDesc& n, uint64_t entries, int64_t E);
// Reads an attribute `num_experts` (>= 1).
int64_t num_experts_attr(const NodeDesc& n);

}  // namespace sfumato::ops::llm
