// Embedding lookup at vocabulary scale: ONNX Gather(table [V, ...], ids, axis
// 0) with ids known only at run time, as a row gather (contract: docs/llm.md,
// "Operators"). The scalar unit reads each id from GM (LD_GM through its data
// cache), wraps a negative id and clamps into [0, V), and MTE2 copies that row
// into UB; a tile of k rows leaves UB in one MTE3 burst (the output rows are
// contiguous), and double-buffered tiles overlap loads and stores. Tokens are
// split evenly over the vector cores. Traffic is T rows, not the table.
// Host-known ids: timing mode holds no data, so a row address read from GM
// would be row 0 there and the two modes' cycles would differ by which rows the
// L2 and HBM row buffers hold. The optional attribute `host_ids` (ints, one per
// index) gives the ids as the host knows them (the model builder: the prompt at
// prefill; at decode the sampled ids read back in functional mode, a seeded
// draw in timing mode, as for MoE routing); rows are then addressed from it
// (the scalar unit still loads each id, as the chip's kernel does) and both
// modes take the same cycles. Routing (runtime/ops/mv/movement.cpp): the row
// gather runs when `host_ids` is given, the table is larger than the L2, or
// it is larger than the UB and the ids fill more than one in-UB gather tile
// (which streams such a table through UB once per tile);
// otherwise mv's in-UB gather, whose cost grows with the table but whose
// addresses do not depend on data, is kept. `known_ids` (ints, one per index)
// gives the ids the same way without choosing the row gather: the graph
// executor sets it for a Gather whose indices are a graph input, from the
// values the caller passes in both modes (train-step's token ids, the `kernel
// gather` command's generated ids), so whichever gather the routing picks, the
// two modes take the same cycles. Without either the loaded id is used
// (functional mode exact; timing mode reads row 0 for every token).
// Simplified: an out-of-range loaded id is clamped (ONNX makes it an error; the
// device cannot report one).
#pragma once
#include <memory>

#include "runtime/ops/node_op.h"

namespace sfumato::ops::llm {

// True when a run-time Gather on this node takes the row gather (axis 0;
// host_ids, a table beyond the L2, or beyond the UB for several tiles of ids).
bool embedding_gather_applies(const NodeDesc& n, const DeviceInfo& dev, int64_t axis);
std::unique_ptr<INodeOp> make_embedding_gather(const NodeDesc& n, const DeviceInfo& dev,
                                               const TensorRef& out);

}  // namespace sfumato::ops::llm
