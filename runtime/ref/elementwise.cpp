// Host references of the elementwise operators in ONNX semantics (opsets 6-20), computed in
// double on broadcast copies of the inputs and rounded once to the output type (integers wrap
// as the type does): arithmetic (Add Sub Mul Div Pow Mod-free), variadic Max/Min/Sum/Mean,
// comparisons and logical ops (bool outputs), Where, the unary activations, Cast/CastLike and
// sfumato's ElementwiseChain. Legacy forms: opset < 7 binary ops with `broadcast`/`axis`
// attributes, opset < 7 PRelu with a per-channel slope, opset < 11 Clip with min/max
// attributes. Simplified: int64 arithmetic is exact only below 2^53; integer division
// truncates toward zero (ONNX leaves negative operands implementation-defined).
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "runtime/ref/broadcast.h"
#include "runtime/ref/ew_scalar.h"
#include "runtime/ref/node_checks.h"
#include "runtime/ref/ref_ops.h"
#include "sim/error.h"

namespace sfumato::ref {

namespace {

using In = std::vector<const HostTensor*>;

// Opset < 7 binary ops broadcast B onto A only with broadcast=1, aligned at `axis` (default: the
// trailing dims). Returns B reshaped so that numpy broadcasting gives the same result.
HostTensor legacy_operand(const RefNode& n, const HostTensor& a, const HostTensor& b) {
    if (n.opset >= 7 || !n.attrs.get_int("broadcast", 0) || !n.attrs.has("axis")) return b;
    const int64_t axis = normalize_axis(n.name, "axis", n.attrs.get_int("axis", 0), static_cast<int64_t>(a.rank()));
    HostTensor r = b;
    const int64_t trail = static_cast<int64_t>(a.rank()) - axis - static_cast<int64_t>(b.rank());
    if (trail < 0) throw InputError("node '" + n.name + "': attribute 'axis' leaves no room for input 1 " + shape_str(b.shape));
    for (int64_t i = 0; i < trail; ++i) r.shape.push_back(1);
    return r;
}

// out[i] = f(x0[i], x1[i], ...) over the broadcast of every given input.
HostTensor map_n(const RefNode& n, const std::vector<const HostTensor*>& xs, ElemType out_type,
                 const std::function<double(const double*)>& f) {
    std::vector<std::vector<int64_t>> shapes;
    for (const HostTensor* x : xs) shapes.push_back(x->shape);
    const std::vector<int64_t> shape = broadcast_shapes(n.name, shapes);
    std::vector<HostTensor> b;
    for (const HostTensor* x : xs) b.push_back(broadcast_to(*x, shape));
    HostTensor out(out_type, shape);
    std::vector<double> args(xs.size());
    for (uint64_t i = 0; i < out.data.size(); ++i) {
        for (size_t k = 0; k < b.size(); ++k) args[k] = b[k].data[i];
        out.data[i] = f(args.data());
    }
    round_to_type(out);
    return out;
}

std::vector<HostTensor> binary(const RefNode& n, const In& in) {
    const HostTensor& a = need(n, in, 0);
    const HostTensor b = legacy_operand(n, a, need(n, in, 1));
    const ScalarOp op = scalar_op(n.op_type, n.attrs, a.type);
    const ElemType out = op.bool_out ? ElemType::Bool : a.type;
    return {map_n(n, {&a, &b}, out, [&](const double* v) { return op.f2(v[0], v[1]); })};
}

std::vector<HostTensor> unary(const RefNode& n, const In& in) {
    const HostTensor& a = need(n, in, 0);
    const ScalarOp op = scalar_op(n.op_type, n.attrs, a.type);
    return {map_n(n, {&a}, op.bool_out ? ElemType::Bool : a.type, [&](const double* v) { return op.f1(v[0]); })};
}

std::vector<HostTensor> variadic(const RefNode& n, const In& in) {
    std::vector<const HostTensor*> xs;
    for (const HostTensor* t : in)
        if (t) xs.push_back(t);
    if (xs.empty()) throw InputError("node '" + n.name + "' (" + n.op_type + "): needs at least one input");
    const bool mean = n.op_type == "Mean";
    const std::string base = n.op_type == "Max" ? "Max" : n.op_type == "Min" ? "Min" : "Add";
    const ScalarOp op = scalar_op(base, n.attrs, xs[0]->type);
    const double k = static_cast<double>(xs.size());
    return {map_n(n, xs, xs[0]->type, [&](const double* v) {
        double acc = v[0];
        for (size_t i = 1; i < xs.size(); ++i) acc = op.f2(acc, v[i]);
        return mean ? acc / k : acc;
    })};
}

std::vector<HostTensor> where(const RefNode& n, const In& in) {
    const HostTensor &c = need(n, in, 0), &x = need(n, in, 1), &y = need(n, in, 2);
    return {map_n(n, {&c, &x, &y}, x.type, [](const double* v) { return v[0] != 0.0 ? v[1] : v[2]; })};
}

std::vector<HostTensor> prelu(const RefNode& n, const In& in) {
    const HostTensor& x = need(n, in, 0);
    HostTensor s = need(n, in, 1);
    if (n.opset < 7 && s.rank() == 1 && x.rank() >= 2 && s.shape[0] == x.shape[1] && s.shape[0] != 1) {
        s.shape.resize(x.rank() - 1, 1);  // [C] -> [C, 1, ...]: one slope per channel
    }
    if (!broadcasts_to(s.shape, x.shape))
        throw InputError("node '" + n.name + "' (PRelu): slope " + shape_str(s.shape) + " does not broadcast to input " +
                         shape_str(x.shape));
    return {map_n(n, {&x, &s}, x.type, [](const double* v) { return v[0] < 0 ? v[0] * v[1] : v[0]; })};
}

std::vector<HostTensor> clip(const RefNode& n, const In& in) {
    const HostTensor& x = need(n, in, 0);
    double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
    if (n.opset < 11) {
        lo = n.attrs.get_float("min", -std::numeric_limits<float>::max());
        hi = n.attrs.get_float("max", std::numeric_limits<float>::max());
    } else {
        auto bound = [&](size_t i, double& v) {
            if (i >= in.size() || !in[i]) return;
            if (in[i]->numel() != 1)
                throw InputError("node '" + n.name + "' (Clip): input " + std::to_string(i) + " must be a scalar, got " +
                                 shape_str(in[i]->shape));
            v = in[i]->data[0];
        };
        bound(1, lo);
        bound(2, hi);
    }
    return {map_n(n, {&x}, x.type, [&](const double* v) {
        if (std::isnan(v[0])) return v[0];
        return std::min(hi, std::max(lo, v[0]));
    })};
}

std::vector<HostTensor> cast(const RefNode& n, const In& in) {
    const HostTensor& x = need(n, in, 0);
    ElemType to;
    if (n.op_type == "CastLike") {
        to = need(n, in, 1).type;
    } else {
        to = static_cast<ElemType>(n.attrs.int_("to"));
        isa::DType dummy;
        if (!device_dtype(to, dummy) && to != ElemType::Double)
            throw InputError("node '" + n.name + "' (Cast): attribute 'to' = " + elem_type_name(to) + " is not supported");
    }
    HostTensor r = x;
    r.type = to;
    if (is_integer(to) && to != ElemType::Bool && is_float(x.type)) {
        for (double& v : r.data) v = std::isnan(v) ? 0.0 : std::trunc(v);
    }
    round_to_type(r);
    return {r};
}

// ElementwiseChain: acc = input 0; each step applies one elementwise op to acc (and, for a
// binary step, the next tensor input). See runtime/ref/ew_scalar.h for the step syntax.
std::vector<HostTensor> chain(const RefNode& n, const In& in) {
    const std::vector<ChainStep> steps = parse_chain(n.name, n.attrs);
    const HostTensor& x0 = need(n, in, 0);
    std::vector<const HostTensor*> xs{&x0};
    size_t next = 1;
    for (const ChainStep& s : steps) {
        if (s.arity == 2) xs.push_back(&need(n, in, next++));
    }
    if (next != in.size())
        throw InputError("node '" + n.name + "' (ElementwiseChain): program uses " + std::to_string(next) +
                         " inputs, node has " + std::to_string(in.size()));
    std::vector<ScalarOp> ops;
    for (const ChainStep& s : steps) ops.push_back(scalar_op(s.op, s.attrs, x0.type));
    HostTensor out = map_n(n, xs, x0.type, [&](const double* v) {
        double acc = v[0];
        size_t k = 1;
        for (size_t i = 0; i < steps.size(); ++i) {
            if (steps[i].arity == 2) {
                const double b = v[k++];
                acc = steps[i].swap ? ops[i].f2(b, acc) : ops[i].f2(acc, b);
            } else {
                acc = ops[i].f1(acc);
            }
            // Integer intermediates wrap as the unfused graph's would; float ones stay exact
            // (the fused kernel keeps them in a wider type; only the result is rounded).
            if (!is_float(x0.type)) {
                HostTensor t(x0.type, {});
                t.data[0] = acc;
                round_to_type(t);
                acc = t.data[0];
            }
        }
        return acc;
    });
    return {out};
}

// Training ops of `sfumato train-step` (sfumato-only; see runtime/ops/ew/onnx_ew.cpp), with
// numpy broadcasting like the other binary ops.
std::vector<HostTensor> relu_grad(const RefNode& n, const In& in) {
    const HostTensor &y = need(n, in, 0), &dy = need(n, in, 1);
    if (in.size() > 2) {  // the sum dy + dy2 in dy's type (as a separate Add would round it), masked
        const HostTensor& d2 = need(n, in, 2);
        HostTensor s = map_n(n, {&dy, &d2}, dy.type, [](const double* v) { return v[0] + v[1]; });
        round_to_type(s);
        return {map_n(n, {&y, &s}, dy.type, [](const double* v) { return v[0] > 0 ? v[1] : 0.0; })};
    }
    return {map_n(n, {&y, &dy}, dy.type, [](const double* v) { return v[0] > 0 ? v[1] : 0.0; })};
}

std::vector<HostTensor> loss_grad(const RefNode& n, const In& in) {
    const HostTensor &y = need(n, in, 0), &t = need(n, in, 1);
    const double scale = n.attrs.get_float("scale", 1.0);
    return {map_n(n, {&y, &t}, y.type, [scale](const double* v) { return (v[0] - v[1]) * scale; })};
}

std::vector<HostTensor> sgd_update(const RefNode& n, const In& in) {
    const HostTensor &w = need(n, in, 0), &g = need(n, in, 1);
    const double lr = n.attrs.get_float("lr", 0.01);
    return {map_n(n, {&w, &g}, w.type, [lr](const double* v) { return v[0] - lr * v[1]; })};
}

std::vector<HostTensor> clip_grad(const RefNode& n, const In& in) {
    const HostTensor &y = need(n, in, 0), &dy = need(n, in, 1);
    const double lo = n.attrs.get_float("min", -std::numeric_limits<double>::infinity());
    const double hi = n.attrs.get_float("max", std::numeric_limits<double>::infinity());
    return {map_n(n, {&y, &dy}, dy.type, [lo, hi](const double* v) { return v[0] > lo && v[0] < hi ? v[1] : 0.0; })};
}

// Gelu'(x) dy: Phi(x) + x phi(x), or the derivative of the tanh form (approximate = tanh).
std::vector<HostTensor> gelu_grad(const RefNode& n, const In& in) {
    const HostTensor &x = need(n, in, 0), &dy = need(n, in, 1);
    const bool tanh_form = n.attrs.get_string("approximate", "none") == "tanh";
    return {map_n(n, {&x, &dy}, dy.type, [tanh_form](const double* v) {
        const double x = v[0];
        if (tanh_form) {
            const double k = std::sqrt(2.0 / M_PI), c = 0.044715;
            const double t = std::tanh(k * (x + c * x * x * x));
            return (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * c * x * x)) * v[1];
        }
        return (0.5 * (1 + std::erf(x / std::sqrt(2.0))) + x * std::exp(-0.5 * x * x) / std::sqrt(2 * M_PI)) * v[1];
    })};
}

// ActivationGrad(x, dy) = f'(x) dy for the unary op f named by attribute `activation` (with its
// alpha, beta, gamma): the derivative in double; at a kink, the branch the forward's comparison
// takes (x > 0 for LeakyRelu / Elu / Selu / Abs; HardSigmoid alpha strictly between its corners;
// HardSwish 0 at or below -3, 1 at or above 3).
std::vector<HostTensor> activation_grad(const RefNode& n, const In& in) {
    const HostTensor &x = need(n, in, 0), &dy = need(n, in, 1);
    const std::string f = n.attrs.get_string("activation", "");
    const double al = n.attrs.get_float("alpha", f == "LeakyRelu"     ? 0.01
                                                 : f == "HardSigmoid" ? 0.2
                                                 : f == "Selu"        ? 1.67326319217681884765625
                                                                      : 1.0);
    const double be = n.attrs.get_float("beta", 0.5), ga = n.attrs.get_float("gamma", 1.05070102214813232421875);
    std::function<double(double)> d;
    auto sig = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
    if (f == "Sigmoid") d = [sig](double v) { return sig(v) * (1 - sig(v)); };
    else if (f == "Tanh") d = [](double v) { return 1 - std::tanh(v) * std::tanh(v); };
    else if (f == "Softplus") d = sig;
    else if (f == "HardSigmoid") {
        // lo < x < hi with 0 < alpha x + beta < 1 at the corners, rounded to fp32 as the kernel
        // compares them (the corners of alpha 1/6 are not representable).
        double lo = 0, hi = 0;
        if (al != 0) {
            lo = static_cast<float>(std::min(-be / al, (1 - be) / al));
            hi = static_cast<float>(std::max(-be / al, (1 - be) / al));
        }
        d = [al, lo, hi](double v) { return v > lo && v < hi ? al : 0.0; };
    } else if (f == "HardSwish") d = [](double v) { return v <= -3 ? 0.0 : v >= 3 ? 1.0 : v / 3 + 0.5; };
    else if (f == "LeakyRelu") d = [al](double v) { return v > 0 ? 1.0 : al; };
    else if (f == "Elu") d = [al](double v) { return v > 0 ? 1.0 : al * std::exp(v); };
    else if (f == "Selu") d = [al, ga](double v) { return v > 0 ? ga : ga * al * std::exp(v); };
    else if (f == "Softsign") d = [](double v) { return 1 / ((1 + std::fabs(v)) * (1 + std::fabs(v))); };
    else if (f == "Erf") d = [](double v) { return 2 / std::sqrt(M_PI) * std::exp(-v * v); };
    else if (f == "Exp") d = [](double v) { return std::exp(v); };
    else if (f == "Log") d = [](double v) { return 1 / v; };
    else if (f == "Sqrt") d = [](double v) { return 0.5 / std::sqrt(v); };
    else if (f == "Reciprocal") d = [](double v) { return -1 / (v * v); };
    else if (f == "Abs") d = [](double v) { return v > 0 ? 1.0 : v < 0 ? -1.0 : 0.0; };
    else throw InputError("node '" + n.name + "' (ActivationGrad): attribute 'activation' = '" + f + "' has no derivative");
    return {map_n(n, {&x, &dy}, dy.type, [&d](const double* v) { return d(v[0]) * v[1]; })};
}

std::vector<HostTensor> moving_average(const RefNode& n, const In& in) {
    const HostTensor &r = need(n, in, 0), &v = need(n, in, 1);
    const double m = n.attrs.get_float("momentum", 0.9);
    return {map_n(n, {&r, &v}, r.type, [m](const double* x) { return x[0] * m + x[1] * (1 - m); })};
}

}  // namespace

SFUMATO_REGISTER_REF(clip_grad, "ClipGrad", clip_grad);
SFUMATO_REGISTER_REF(moving_average, "MovingAverage", moving_average);
SFUMATO_REGISTER_REF(gelu_grad, "GeluGrad", gelu_grad);
SFUMATO_REGISTER_REF(activation_grad, "ActivationGrad", activation_grad);
SFUMATO_REGISTER_REF(relu_grad, "ReluGrad", relu_grad);
SFUMATO_REGISTER_REF(loss_grad, "LossGrad", loss_grad);
SFUMATO_REGISTER_REF(sgd_update, "SgdUpdate", sgd_update);
SFUMATO_REGISTER_REF(add, "Add", binary);
SFUMATO_REGISTER_REF(sub, "Sub", binary);
SFUMATO_REGISTER_REF(mul, "Mul", binary);
SFUMATO_REGISTER_REF(div, "Div", binary);
SFUMATO_REGISTER_REF(pow, "Pow", binary);
SFUMATO_REGISTER_REF(equal, "Equal", binary);
SFUMATO_REGISTER_REF(less, "Less", binary);
SFUMATO_REGISTER_REF(greater, "Greater", binary);
SFUMATO_REGISTER_REF(less_equal, "LessOrEqual", binary);
SFUMATO_REGISTER_REF(greater_equal, "GreaterOrEqual", binary);
SFUMATO_REGISTER_REF(and_, "And", binary);
SFUMATO_REGISTER_REF(or_, "Or", binary);
SFUMATO_REGISTER_REF(xor_, "Xor", binary);
SFUMATO_REGISTER_REF(max, "Max", variadic);
SFUMATO_REGISTER_REF(min, "Min", variadic);
SFUMATO_REGISTER_REF(sum, "Sum", variadic);
SFUMATO_REGISTER_REF(mean, "Mean", variadic);
SFUMATO_REGISTER_REF(where, "Where", where);
SFUMATO_REGISTER_REF(prelu, "PRelu", prelu);
SFUMATO_REGISTER_REF(clip, "Clip", clip);
SFUMATO_REGISTER_REF(cast, "Cast", cast);
SFUMATO_REGISTER_REF(castlike, "CastLike", cast);
SFUMATO_REGISTER_REF(chain, "ElementwiseChain", chain);
SFUMATO_REGISTER_REF(not_, "Not", unary);
SFUMATO_REGISTER_REF(relu, "Relu", unary);
SFUMATO_REGISTER_REF(leaky_relu, "LeakyRelu", unary);
SFUMATO_REGISTER_REF(sigmoid, "Sigmoid", unary);
SFUMATO_REGISTER_REF(tanh_, "Tanh", unary);
SFUMATO_REGISTER_REF(gelu, "Gelu", unary);
SFUMATO_REGISTER_REF(erf, "Erf", unary);
SFUMATO_REGISTER_REF(exp_, "Exp", unary);
SFUMATO_REGISTER_REF(log_, "Log", unary);
SFUMATO_REGISTER_REF(sqrt_, "Sqrt", unary);
SFUMATO_REGISTER_REF(reciprocal, "Reciprocal", unary);
SFUMATO_REGISTER_REF(neg, "Neg", unary);
SFUMATO_REGISTER_REF(abs_, "Abs", unary);
SFUMATO_REGISTER_REF(hard_sigmoid, "HardSigmoid", unary);
SFUMATO_REGISTER_REF(hard_swish, "HardSwish", unary);
SFUMATO_REGISTER_REF(elu, "Elu", unary);
SFUMATO_REGISTER_REF(selu, "Selu", unary);
SFUMATO_REGISTER_REF(softplus, "Softplus", unary);
SFUMATO_REGISTER_REF(softsign, "Softsign", unary);
SFUMATO_REGISTER_REF(sign, "Sign", unary);
SFUMATO_REGISTER_REF(floor_, "Floor", unary);
SFUMATO_REGISTER_REF(ceil_, "Ceil", unary);
SFUMATO_REGISTER_REF(round_, "Round", unary);

}  // namespace sfumato::ref
