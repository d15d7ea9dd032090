// A graph-node kernel task's `node` object in workload files: the node as planned (ONNX op
// type, attributes, small plan-time constants) and the tensors it ran on, each placed in a
// named buffer at an offset. Written by the recorder from a launch's ops::NodeLaunch, read by
// replay to plan the node again for the target chip. Constants larger than kMaxConstElems
// (weights) are not written: operators plan from shapes, not weight values.
#pragma once
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/ops/node_launch.h"

namespace sfumato::workload {

constexpr uint64_t kMaxConstElems = 4096;

// Names the buffer holding a device address: (buffer, offset), or nothing.
using BufferOf = std::function<std::optional<std::pair<std::string, uint64_t>>(uint64_t addr)>;
nlohmann::json node_to_json(const ops::NodeLaunch& n, const BufferOf& buffer_of);

// Reads it back: tensors with addresses unset and, per tensor, the buffer ("" = none) and
// offset it names. Throws InputError naming the field.
struct Placement {
    std::string buffer;  // "" = not placed
    uint64_t offset = 0;
};
struct NodeJson {
    ops::NodeDesc node;  // inputs = the input tensors
    std::vector<ops::TensorRef> out;
    std::vector<Placement> in_at, out_at;
    uint64_t workspace_bytes = 0;
    Placement workspace_at;
};
NodeJson node_from_json(const nlohmann::json& j, const std::string& where);

}  // namespace sfumato::workload
