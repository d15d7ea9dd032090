// The record a graph-node operator's launches carry (KernelDesc::origin): the node as planned
// and the tensors it ran on (placed, with device addresses), shared by every kernel of the
// node. Workload recording (traces/workload_record.h) turns it into a `node` kernel task, so a
// replay can plan the same node again for another chip (re-tiling it) on the same buffers.
#pragma once
#include <vector>

#include "runtime/ops/node_op.h"

namespace sfumato::ops {

struct NodeLaunch : KernelOrigin {
    NodeDesc node;
    std::vector<TensorRef> in, out;
    uint64_t workspace = 0, workspace_bytes = 0;
};

// Stamps ks with one shared NodeLaunch (origin_part = the launch's position).
void stamp_node_launch(std::vector<KernelDesc>& ks, const NodeDesc& node, const std::vector<TensorRef>& in,
                       const std::vector<TensorRef>& out, uint64_t workspace, uint64_t workspace_bytes);

}  // namespace sfumato::ops
