// Gather whose indices are known only at run time (a graph input, e.g. token ids): the data is
// [pre, dim, post] and every output row of `post` elements comes from a row chosen by an index.
// A kernel cannot branch or address memory on data (timing must not depend on values), so
// rows are picked inside UB: the data rows (a column chunk of them) are loaded into UB in
// chunks, the indices become byte offsets (negative ones wrapped, all clamped into the
// chunk), and a vector gather (vgather) picks the elements; with several chunks a select keeps
// the rows whose index falls in the current chunk. Cost grows with the data, not with the
// number of indices: fine for small tables, slow for large embedding tables (documented in
// docs/operators.md). Out-of-range indices are clamped (ONNX makes them an error; the
// device cannot report one).
#pragma once
#include <memory>

#include "runtime/ops/node_op.h"

namespace sfumato::ops::mv {

// The most output elements (indices x columns) one tile of the in-UB gather holds: a table
// larger than one UB chunk streams through UB once per tile.
constexpr uint64_t kGatherTileElems = 4096;

std::unique_ptr<INodeOp> make_gather_rt(const NodeDesc& n, const DeviceInfo& dev, int64_t axis, const TensorRef& out);

}  // namespace sfumato::ops::mv
