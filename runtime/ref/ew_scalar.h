// The scalar functions behind the elementwise references (one value or one pair at a time, in
// double, ONNX semantics), and the step syntax of sfumato's ElementwiseChain.
//
// ElementwiseChain (the graph's fusion target): attribute `program` is a list of strings, one
// per step, "OpType[ key=value]...", applied left to right to an accumulator that starts as
// input 0. A unary step (Relu, LeakyRelu alpha=0.1, Clip min=0 max=6, Sigmoid, Gelu
// approximate=tanh, ...) sets acc = op(acc). A binary step (Add, Sub, Mul, Div, Pow, Max, Min,
// PRelu) takes the chain's next tensor input b and sets acc = op(acc, b), or op(b, acc) when
// the step has `swap=1`. Inputs may broadcast (numpy) against each other; the output has the
// type of input 0. Attribute values are numbers, or words for string attributes.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "runtime/ref/attrs.h"
#include "runtime/ref/host_tensor.h"

namespace sfumato::ref {

struct ScalarOp {
    std::function<double(double)> f1;          // unary ops
    std::function<double(double, double)> f2;  // binary ops
    bool bool_out = false;                     // comparisons and logical ops
};
// The scalar function of an elementwise ONNX op type with its attributes; `type` is the
// input's element type (integer division truncates). Throws InputError for unknown types.
ScalarOp scalar_op(const std::string& op_type, const Attrs& attrs, ElemType type);
// Whether op_type is one of the binary ops a chain step may use.
bool chain_binary(const std::string& op_type);

struct ChainStep {
    std::string op;
    Attrs attrs;
    int arity = 1;
    bool swap = false;
};
// Parses attribute `program` of an ElementwiseChain node; errors name the node and the step.
std::vector<ChainStep> parse_chain(const std::string& node, const Attrs& attrs);

}  // namespace sfumato::ref
