// Rewrites nodes of opsets older than 11 (PyTorch's early exporters wrote opset
// 6-9) to their opset-11 form, so the operator library and its references see
// opsets 11-17 only: obsolete attributes dropped (consumed_inputs, is_test,
// spatial, Gemm's broadcast), attributes that became inputs turned into
// constant inputs (Clip min/max, Pad pads/value, Slice starts/ends/axes,
// Reshape shape), legacy broadcasting (broadcast=1, axis) made numpy-style,
// opset-6 PRelu's per-channel slope reshaped to broadcast over N, C, spatial.
#pragma once
#include <cstddef>

#include "runtime/graph/ir.h"

namespace sfumato::graph {

// Upgrades g.nodes[i] (its inputs' types and shapes must be inferred). Returns
// the number of nodes it inserted before i (0 when it rewrote the node in
// place).
size_t upgrade_node(Graph& g, size_t i);

}  // namespace sfumato::graph
