// The fused activation epilogue of cube operators (Conv, ConvTranspose, MatMul,
// Gemm), as the graph's fusion pass records it (runtime/ops/node_op.h):
// attribute `activation` (Relu, LeakyRelu, Sigmoid, Tanh, Gelu, Clip,
// HardSigmoid, HardSwish) with `activation_alpha` and `activation_beta`. Each
// function follows the ONNX operator of the same name, with that operator's
// attribute defaults (LeakyRelu alpha 0.01; HardSigmoid alpha 0.2, beta 0.5;
// Clip: alpha = min, beta = max, default unbounded; Gelu: the exact erf form).
#pragma once
#include <string>

#include "runtime/ref/attrs.h"
#include "runtime/ref/host_tensor.h"

namespace sfumato::ref {

struct Activation {
    std::string kind;  // "" = none
    double alpha = 0.0, beta = 0.0;
    bool none() const { return kind.empty(); }
};

// The activation a node's attributes ask for, defaults filled in; throws
// InputError naming the node for an unknown activation.
Activation activation_of(const Attrs& attrs);
double activate(const Activation& a, double x);
// Applies the activation to every value (then rounds to the tensor's type).
void apply_activation(const Activation& a, HostTensor& t);

}  // namespace sfumato::ref
