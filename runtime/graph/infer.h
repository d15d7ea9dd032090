// Shape and type inference, per op family (infer_*.cpp, one registration line
// per ONNX op type). Walks the graph in order, checks every node's inputs
// (count, element types, ranks, broadcastable shapes) and sets its outputs'
// element types and shapes, symbolic dimensions included ("N", "N*128",
// "(H+2)/2"). Nodes of opsets older than 11 are first rewritten to their
// opset-11 form (upgrade.h). Shape arithmetic is evaluated as it goes: a node
// whose inputs are all constant and whose output is a small integer tensor
// (Shape, Gather of a shape, Concat of dims, ...) gets a constant output, so
// Reshape targets and Slice bounds are known at plan time with or without the
// fold pass. Errors name the node, the op and the input.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/graph/ir.h"
#include "sim/error.h"

namespace sfumato::graph {

// A node no part of sfumato can run (no inference rule, or the operator library
// refused it).
class UnsupportedOp : public InputError {
public:
    UnsupportedOp(const std::string& op_type, const std::string& msg) : InputError(msg), m_op(op_type) {}
    const std::string& op_type() const { return m_op; }

private:
    std::string m_op;
};

class InferCtx {
public:
    InferCtx(Graph& g, Node& n) : m_g(g), m_n(n) {}
    Graph& graph() { return m_g; }
    const Node& node() const { return m_n; }
    const ref::Attrs& attrs() const { return m_n.attrs; }
    int opset() const { return m_n.opset; }

    size_t num_inputs() const { return m_n.inputs.size(); }
    bool has(size_t i) const { return i < m_n.inputs.size() && m_n.inputs[i] >= 0; }
    // Input i (required: throws naming the node and the input index).
    const Value& in(size_t i) const;
    ref::ElemType elem(size_t i) const { return in(i).elem; }
    // Input i's shape; throws ShapeUnknown (caught by the driver) when its rank
    // is not known.
    const Shape& shape(size_t i) const;
    size_t rank(size_t i) const { return shape(i).size(); }
    // Input i's value when constant (null otherwise).
    const ref::HostTensor* constant(size_t i);
    // Input i as integers when constant; false if absent or not constant.
    bool const_ints(size_t i, std::vector<int64_t>& out);

    size_t num_outputs() const { return m_n.outputs.size(); }
    bool has_output(size_t o) const { return o < m_n.outputs.size() && m_n.outputs[o] >= 0; }
    void set(size_t o, ref::ElemType elem, const Shape& shape);
    void set_elem(size_t o, ref::ElemType elem);  // rank unknown

    // Checks.
    void need_inputs(size_t lo,
                     size_t hi) const;  // count of inputs given (trailing omitted ok)
    void same_type(size_t a, size_t b) const;
    void need_float(size_t i) const;
    // Normalises an axis attribute/input against a rank (negative counts from the
    // end).
    int64_t axis(int64_t a, size_t rank, const char* what = "axis") const;
    [[noreturn]] void fail(const std::string& msg) const;

    struct ShapeUnknown {};

private:
    Graph& m_g;
    Node& m_n;
    std::map<size_t, std::shared_ptr<const ref::HostTensor>> m_consts;
};

using InferFn = std::function<void(InferCtx&)>;
void register_infer(const std::string& op_type, InferFn f);
bool has_infer(const std::string& op_type);
struct InferRegistrar {
    InferRegistrar(std::initializer_list<const char*> ops, InferFn f) {
        for (const char* o : ops) register_infer(o, f);
    }
};
#define SFUMATO_REGISTER_INFER(var, fn, ...) \
    static ::sfumato::graph::InferRegistrar sfumato_infer_##var({__VA_ARGS__}, fn)

// Broadcasts shapes numpy-style; throws via ctx naming both shapes when they do
// not fit.
Shape broadcast_shapes(const InferCtx& ctx, const Shape& a, const Shape& b);

struct InferOptions {
    // Integer outputs up to this many elements are computed at plan time when
    // their inputs are constant (shape arithmetic).
    uint64_t max_shape_const = 4096;
};
// Runs inference over the whole graph (values' elem/shape are overwritten for
// node outputs). Graph inputs keep their declared shapes (bind concrete ones
// first to specialise).
void infer_shapes(Graph& g, const InferOptions& opt = {});

// Computes node `n`'s outputs on the host from constant inputs (reference
// implementations), rounding to the output types. Throws if an input is not
// constant.
std::vector<ref::HostTensor> eval_constant_node(const Graph& g, const Node& n);

}  // namespace sfumato::graph
