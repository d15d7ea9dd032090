// Stamping a node's kernel launches with the node they came from (see node_launch.h).
#include "runtime/ops/node_launch.h"

namespace sfumato::ops {

void stamp_node_launch(std::vector<KernelDesc>& ks, const NodeDesc& node, const std::vector<TensorRef>& in,
                       const std::vector<TensorRef>& out, uint64_t workspace, uint64_t workspace_bytes) {
    if (ks.empty()) return;
    auto rec = std::make_shared<NodeLaunch>();
    rec->node = node;
    rec->in = in;
    rec->out = out;
    rec->workspace = workspace;
    rec->workspace_bytes = workspace_bytes;
    for (size_t i = 0; i < ks.size(); ++i) {
        ks[i].origin = rec;
        ks[i].origin_part = static_cast<uint32_t>(i);
    }
}

}  // namespace sfumato::ops
