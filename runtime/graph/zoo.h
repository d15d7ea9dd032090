// The model zoo: networks built in C++ with the ONNX protobuf API (random
// weights from a fixed seed, so every build is identical): mlp, resnet18,
// resnet50, mobilenet_v2, bert_base (encoder, seq 128), gpt2_small (decoder,
// seq 128), squeezenet (parallel fire-module branches). They are written the
// way PyTorch's exporter writes these networks at opset 13 (Conv +
// BatchNormalization
// + Relu, Gemm with transB, Flatten, LayerNorm and GELU spelled out in
// primitive ops, attention as MatMul/Softmax/MatMul with Reshape and
// Transpose), so the passes have real work to do. A spec is NAME or
// NAME?key=value&key=value to change a size (e.g.
// bert_base?layers=2&hidden=128).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runtime/graph/ir.h"

namespace sfumato::graph {

struct ZooInfo {
    std::string name;
    std::string summary;
    std::map<std::string, int64_t> params;  // size parameters and their defaults
};
std::vector<ZooInfo> zoo_list();
// The serialised ModelProto of a spec (throws InputError for unknown names or
// parameters).
std::string zoo_model_bytes(const std::string& spec);
// The imported graph of a spec.
Graph zoo_graph(const std::string& spec);

}  // namespace sfumato::graph
