// The host reference interpreter: runs a graph node by node with the operator
// library's host references (runtime/ref, ONNX semantics, double precision), to
// check models end to end. Small and obviously correct rather than fast: no
// fusion, no layouts, weights converted to doubles one node at a time,
// intermediates dropped after their last use.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "runtime/graph/ir.h"

namespace sfumato::graph {

struct RefOptions {
    // Round every intermediate to its element type (an fp32 run) instead of
    // keeping doubles.
    bool round_intermediates = false;
    // Called with every node output as it is computed (and with the graph inputs first), by
    // value name: numerics diagnostics compare the device's tensors with these.
    std::function<void(const std::string& name, const ref::HostTensor& t)> on_value;
};

// `inputs` in the order of g.inputs; returns the graph outputs in the order of
// g.outputs. The graph must have been inferred (infer_shapes) for these input
// shapes. Throws InputError naming the node whose reference is missing or
// fails.
std::vector<ref::HostTensor> run_reference(const Graph& g, const std::vector<ref::HostTensor>& inputs,
                                           const RefOptions& opt = {});

}  // namespace sfumato::graph
