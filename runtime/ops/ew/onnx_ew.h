// ONNX elementwise operators as vector programs (runtime/ops/ew/program.h): which op types
// exist, what type their output has, in which type they compute, and the instruction sequence
// of each — including the ones the ISA has no instruction for, composed from vector
// instructions as a real kernel would (sigmoid = 1 / (1 + exp(-x)); tanh and erf from exp and a
// short odd polynomial near zero; pow = exp(y ln |x|) with the sign and zero cases selected).
#pragma once
#include <string>
#include <vector>

#include "runtime/ops/ew/program.h"
#include "runtime/ref/attrs.h"

namespace sfumato::ops::ew {

// Elementwise op types with a device program (ElementwiseChain included).
const std::vector<std::string>& ew_op_types();
bool is_ew_op(const std::string& op_type);

struct EwNode {
    std::string name;
    std::string op;
    int opset = 17;
    ref::Attrs attrs;
};

// Element type of the output, from the inputs' element types (throws UnsupportedError-style
// InputError naming the node for types the op does not take).
ref::ElemType ew_output_elem(const EwNode& n, const std::vector<ref::ElemType>& in);
// The program of a node whose inputs are described by `in` (Imm inputs are folded).
Program build_ew_program(const EwNode& n, const std::vector<InputDesc>& in, isa::DType out_storage,
                         ref::ElemType out_elem);
// Whether the op computes in fp32 even for fp16 data (transcendental compositions).
bool ew_precise(const std::string& op_type);
// Whether ActivationGrad has the derivative of unary op `op_type` (its `activation` attribute),
// and the list of those, space separated.
bool has_activation_grad(const std::string& op_type);
std::string activation_grad_list();

}  // namespace sfumato::ops::ew
