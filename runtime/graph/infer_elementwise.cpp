// Shape inference: elementwise unary and binary ops (numpy broadcasting),
// comparisons, Where, Clip, Cast, variadic Max/Min/Sum/Mean, Identity and
// Dropout.
#include "runtime/graph/infer.h"

namespace sfumato::graph {

namespace {

void unary(InferCtx& c) {
    c.need_inputs(1, 1);
    c.set(0, c.elem(0), c.shape(0));
}

void unary_float(InferCtx& c) {
    c.need_inputs(1, 1);
    c.need_float(0);
    c.set(0, c.elem(0), c.shape(0));
}

void binary(InferCtx& c) {
    c.need_inputs(2, 2);
    c.same_type(0, 1);
    c.set(0, c.elem(0), broadcast_shapes(c, c.shape(0), c.shape(1)));
}

void pow_op(InferCtx& c) {
    c.need_inputs(2, 2);
    c.set(0, c.elem(0), broadcast_shapes(c, c.shape(0), c.shape(1)));
}

void infer_compare(InferCtx& c) {
    c.need_inputs(2, 2);
    c.same_type(0, 1);
    c.set(0, ref::ElemType::Bool, broadcast_shapes(c, c.shape(0), c.shape(1)));
}

void logical(InferCtx& c) {
    c.need_inputs(2, 2);
    for (size_t i = 0; i < 2; ++i)
        if (c.elem(i) != ref::ElemType::Bool) c.fail("input " + std::to_string(i) + " must be bool");
    c.set(0, ref::ElemType::Bool, broadcast_shapes(c, c.shape(0), c.shape(1)));
}

void variadic(InferCtx& c) {
    c.need_inputs(1, 1u << 20);
    Shape s = c.shape(0);
    for (size_t i = 1; i < c.num_inputs(); ++i) {
        c.same_type(0, i);
        s = broadcast_shapes(c, s, c.shape(i));
    }
    c.set(0, c.elem(0), s);
}

void where(InferCtx& c) {
    c.need_inputs(3, 3);
    if (c.elem(0) != ref::ElemType::Bool) c.fail("input 0 (condition) must be bool");
    c.same_type(1, 2);
    c.set(0, c.elem(1), broadcast_shapes(c, broadcast_shapes(c, c.shape(0), c.shape(1)), c.shape(2)));
}

void prelu(InferCtx& c) {
    c.need_inputs(2, 2);
    c.same_type(0, 1);
    const Shape s = broadcast_shapes(c, c.shape(0), c.shape(1));
    if (s.size() != c.rank(0))
        c.fail("slope " + shape_str(c.shape(1)) + " does not broadcast to X " + shape_str(c.shape(0)));
    c.set(0, c.elem(0), c.shape(0));
}

void clip(InferCtx& c) {
    c.need_inputs(1, 3);
    c.same_type(0, 1);
    c.same_type(0, 2);
    for (size_t i = 1; i < 3; ++i)
        if (c.has(i) && !c.shape(i).empty())
            c.fail("input " + std::to_string(i) + " (min/max) must be a scalar");
    c.set(0, c.elem(0), c.shape(0));
}

void cast(InferCtx& c) {
    c.need_inputs(1, 1);
    const ref::Attr* to = c.attrs().find("to");
    if (!to) c.fail("missing attribute 'to'");
    ref::ElemType t = static_cast<ref::ElemType>(to->i);
    if (to->kind == ref::Attr::Kind::String) {  // opset 1 spelled the type
        static const std::map<std::string, ref::ElemType> names = {
            {"FLOAT", ref::ElemType::Float},   {"FLOAT16", ref::ElemType::Float16},
            {"DOUBLE", ref::ElemType::Double}, {"INT8", ref::ElemType::Int8},
            {"INT16", ref::ElemType::Int16},   {"INT32", ref::ElemType::Int32},
            {"INT64", ref::ElemType::Int64},   {"UINT8", ref::ElemType::Uint8},
            {"BOOL", ref::ElemType::Bool}};
        auto it = names.find(to->s);
        if (it == names.end()) c.fail("attribute 'to' names an unsupported type '" + to->s + "'");
        t = it->second;
    }
    if (std::string(ref::elem_type_name(t)) == "undefined" || t == ref::ElemType::String)
        c.fail("attribute 'to' = " + std::to_string(to->i) + " is not a supported element type");
    c.set(0, t, c.shape(0));
}

void castlike(InferCtx& c) {
    c.need_inputs(2, 2);
    c.set(0, c.elem(1), c.shape(0));
}

void dropout(InferCtx& c) {
    c.need_inputs(1, 3);
    c.set(0, c.elem(0), c.shape(0));
    c.set(1, ref::ElemType::Bool, c.shape(0));
}

// sfumato's fusion targets (node_op.h): a chain has the shape of all its operands broadcast and
// the type of input 0; TransData keeps shape and type.
void chain(InferCtx& c) {
    c.need_inputs(1, 1u << 20);
    Shape s = c.shape(0);
    for (size_t i = 1; i < c.num_inputs(); ++i) s = broadcast_shapes(c, s, c.shape(i));
    c.set(0, c.elem(0), s);
}

}  // namespace

SFUMATO_REGISTER_INFER(chain, chain, "ElementwiseChain");
SFUMATO_REGISTER_INFER(transdata, unary, "TransData");
SFUMATO_REGISTER_INFER(unary, unary, "Relu", "LeakyRelu", "Abs", "Neg", "Sign", "Identity");
SFUMATO_REGISTER_INFER(unary_float, unary_float, "Sigmoid", "Tanh", "Gelu", "Erf", "Exp", "Log", "Sqrt",
                       "Reciprocal", "HardSigmoid", "HardSwish", "Elu", "Selu", "Celu", "Softplus",
                       "Softsign", "Floor", "Ceil", "Round", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan",
                       "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "ThresholdedRelu", "Mish");
SFUMATO_REGISTER_INFER(binary, binary, "Add", "Sub", "Mul", "Div", "Mod", "BitShift");
SFUMATO_REGISTER_INFER(pow, pow_op, "Pow");
SFUMATO_REGISTER_INFER(compare, infer_compare, "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual");
SFUMATO_REGISTER_INFER(logical, logical, "And", "Or", "Xor");
SFUMATO_REGISTER_INFER(not_op, unary, "Not");
SFUMATO_REGISTER_INFER(variadic, variadic, "Max", "Min", "Sum", "Mean");
SFUMATO_REGISTER_INFER(where, where, "Where");
SFUMATO_REGISTER_INFER(prelu, prelu, "PRelu");
SFUMATO_REGISTER_INFER(clip, clip, "Clip");
SFUMATO_REGISTER_INFER(cast, cast, "Cast");
SFUMATO_REGISTER_INFER(castlike, castlike, "CastLike");
SFUMATO_REGISTER_INFER(dropout, dropout, "Dropout");
// sfumato-only: a copy into fresh memory (the views-off form of a reshape).
SFUMATO_REGISTER_INFER(copy, unary, "Copy");

}  // namespace sfumato::graph
