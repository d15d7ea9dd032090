// ONNX import: a ModelProto (file, bytes or an in-memory model from the zoo)
// becomes a Graph. Initializers keep their bytes (raw_data or the typed fields;
// external data is refused), Constant nodes become constants, attributes are
// converted, nodes of opsets older than 11 are rewritten to their opset-11 form
// (runtime/graph/upgrade.cpp), and the structure is validated: every input must
// be a graph input, an initializer or a node output (errors name the node and
// the input), names must be unique, the graph acyclic. Types and shapes are
// checked by shape inference (infer.h), which callers run next.
#pragma once
#include <functional>
#include <map>
#include <string>

#include "runtime/graph/ir.h"

namespace onnx {
class ModelProto;
class TensorProto;
}  // namespace onnx

namespace sfumato::graph {

// Opsets of the default domain the importer accepts (older ones are upgraded,
// newer refused).
constexpr int kMinOpset = 1;
constexpr int kMaxOpset = 17;

Graph import_onnx_file(const std::string& path);
Graph import_onnx_bytes(const std::string& bytes, const std::string& source);
// Initializers whose values the caller makes when they are first asked for (by name; the
// zoo's generated weights): their TensorProto holds only the element type and dims, and the
// function returns that type and shape.
using DeferredInitializers = std::map<std::string, std::function<RawTensor()>>;
// Moves the weights out of `m` (it is left without initializer data).
Graph import_model(onnx::ModelProto& m, const std::string& source, const DeferredInitializers* deferred = nullptr);

// A TensorProto as raw bytes; `what` names it in errors (e.g. "initializer
// 'W'").
RawTensor raw_from_proto(onnx::TensorProto& t, const std::string& what);

}  // namespace sfumato::graph
