#include "runtime/ops/ew/onnx_ew.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "runtime/ops/node_op.h"
#include "runtime/ref/ew_scalar.h"
#include "sim/error.h"

namespace sfumato::ops::ew {

using isa::CmpMode;
using isa::DType;
using isa::Opcode;
using ref::ElemType;

namespace {

using List = std::initializer_list<const char*>;
constexpr List kBinary = {"Add", "Sub", "Mul", "Div", "Pow", "PRelu"};
constexpr List kVariadic = {"Max", "Min", "Sum", "Mean"};
constexpr List kCompare = {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"};
constexpr List kLogic = {"And", "Or", "Xor", "Not"};
constexpr List kUnary = {"Relu", "LeakyRelu", "Sigmoid", "Tanh", "Gelu", "Erf", "Exp", "Log", "Sqrt", "Reciprocal",
                         "Neg", "Abs", "HardSigmoid", "HardSwish", "Elu", "Selu", "Softplus", "Softsign", "Sign",
                         "Floor", "Ceil", "Round", "Identity"};
constexpr List kOther = {"Clip", "Where", "Cast", "CastLike", "ElementwiseChain"};
// sfumato-only training ops (the backward of `sfumato train-step`): ReluGrad(y, dy[, dy2]) = y > 0 ?
// dy (+ dy2) : 0 (y: the ReLU's output, or its input; dy2: a second gradient summed in, the
// residual Add's gradient sum fused into the ReLU's backward); LossGrad(y, t) = (y - t) * scale (the gradient of
// 0.5 * scale * |y - t|^2, and of a softmax's cross-entropy at its logits); SgdUpdate(w, g) =
// w - lr * g; ClipGrad(y, dy) = min < y < max ? dy : 0 (attributes min, max: Clip's bounds, y its
// output or input; ReLU6 is Clip(0, 6)); MovingAverage(r, v) = r * momentum + v * (1 - momentum)
// (BatchNorm's running statistics); GeluGrad(x, dy) = Gelu'(x) dy (x: the GELU's input; attribute
// approximate: none for the erf form, tanh for the tanh form); ActivationGrad(x, dy) = f'(x) dy for
// the unary op f named by attribute `activation` (its own attributes alpha, beta, gamma beside it;
// the list in activation_grad_ops()).
constexpr List kTrain = {"ReluGrad", "LossGrad", "SgdUpdate", "ClipGrad", "MovingAverage", "GeluGrad", "ActivationGrad"};
constexpr List kActivationGrad = {"Sigmoid", "Tanh",     "HardSigmoid", "HardSwish", "LeakyRelu",
                                  "Elu",     "Selu",     "Softplus",    "Softsign",  "Erf",
                                  "Exp",     "Log",      "Sqrt",        "Reciprocal", "Abs"};

bool in_list(List l, const std::string& s) {
    for (const char* x : l)
        if (s == x) return true;
    return false;
}

bool float_elem(ElemType t) { return ref::is_float(t); }
bool narrow_int(ElemType t) { return t == ElemType::Int8 || t == ElemType::Uint8 || t == ElemType::Int16; }

[[noreturn]] void unsupported(const EwNode& n, const std::string& what) {
    NodeDesc d;
    d.name = n.name;
    d.op_type = n.op;
    throw UnsupportedError(d, what);
}

// The type a value of element type t computes in.
DType compute_type(ElemType t, bool precise) {
    switch (t) {
        case ElemType::Float16: return precise ? DType::FP32 : DType::FP16;
        case ElemType::Bool: return DType::FP16;
        case ElemType::Float: case ElemType::Double: case ElemType::Bfloat16: return DType::FP32;
        default: return DType::INT32;
    }
}

struct Em {
    Builder& b;
    DType ct;
    ElemType elem;  // the values' ONNX type (integer wrapping, division)

    Val s(Opcode op, const Val& a, double x) { return b.scal(op, a, x); }
    Val v(Opcode op, const Val& a, const Val& c) { return b.bin(op, a, c); }
    Val u(Opcode op, const Val& a) { return b.un(op, a); }
    Val neg(const Val& a) { return s(Opcode::VMULS, a, -1); }
    Val lt0(const Val& a) { return b.cmp(CmpMode::LT, a, Builder::imm(0, b.type_of(a))); }

    // Two's-complement wrap of an int32 value to the storage width of a narrow integer type.
    Val wrap(const Val& x) {
        if (!narrow_int(elem)) return x;
        const int bits = elem == ElemType::Int16 ? 16 : 8;
        const double mask = std::ldexp(1.0, bits) - 1, half = std::ldexp(1.0, bits - 1);
        if (elem == ElemType::Uint8) return v(Opcode::VAND, x, Builder::imm(mask, DType::INT32));
        const Val y = v(Opcode::VAND, s(Opcode::VADDS, x, half), Builder::imm(mask, DType::INT32));
        return s(Opcode::VADDS, y, -half);
    }

    Val horner(const Val& x, const std::vector<double>& c) {  // c[0] + x (c[1] + x (...))
        Val h = s(Opcode::VMULS, x, c.back());
        for (size_t i = c.size() - 1; i-- > 1;) h = v(Opcode::VMUL, s(Opcode::VADDS, h, c[i]), x);
        return s(Opcode::VADDS, h, c[0]);
    }

    // erf(x), or 1 + erf(x) without the cancellation for x << 0 (Gelu's left tail).
    Val erf(const Val& x, bool one_plus = false) {
        const Val ax = u(Opcode::VABS, x);
        // Abramowitz & Stegun 7.1.26 for |x| >= 0.5: erfc(|x|) = q exp(-x^2), |error| <= 1.5e-7 ...
        const Val t = u(Opcode::VREC, s(Opcode::VADDS, s(Opcode::VMULS, ax, 0.3275911), 1.0));
        const Val q = v(Opcode::VMUL, horner(t, {0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429}), t);
        const Val x2 = v(Opcode::VMUL, x, x);
        const Val c = v(Opcode::VMUL, q, u(Opcode::VEXP, neg(x2)));  // erfc(|x|)
        const Val big = one_plus ? b.sel(lt0(x), c, s(Opcode::VADDS, neg(c), 2.0))
                                 : b.sel(lt0(x), s(Opcode::VADDS, c, -1.0), s(Opcode::VADDS, neg(c), 1.0));
        // ... and its Taylor series through x^9 (relative error < 1e-6) below 0.5.
        Val h = s(Opcode::VMULS, v(Opcode::VMUL, horner(x2, {1.0, -1.0 / 3, 1.0 / 10, -1.0 / 42, 1.0 / 216}), x),
                  2.0 / std::sqrt(M_PI));
        if (one_plus) h = s(Opcode::VADDS, h, 1.0);
        return b.sel(b.cmp(CmpMode::LT, ax, Builder::imm(0.5, ct)), h, big);
    }

    Val tanh(const Val& x) {
        const Val ax = u(Opcode::VABS, x);
        const Val e = u(Opcode::VEXP, s(Opcode::VMULS, ax, -2.0));
        const Val r = v(Opcode::VDIV, s(Opcode::VADDS, neg(e), 1.0), s(Opcode::VADDS, e, 1.0));
        const Val rs = b.sel(lt0(x), neg(r), r);
        const Val x2 = v(Opcode::VMUL, x, x);
        const Val h = v(Opcode::VMUL, horner(x2, {1.0, -1.0 / 3, 2.0 / 15, -17.0 / 315, 62.0 / 2835}), x);
        return b.sel(b.cmp(CmpMode::LT, ax, Builder::imm(0.25, ct)), h, rs);
    }

    // Gelu'(x): Phi(x) + x phi(x) (erf form); with t = tanh(u), u = k (x + c x^3) (tanh form):
    // 0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 c x^2) = q (1 + 2 k x e q (1 + 3 c x^2)) with
    // e = exp(-2u), q = 1 / (1 + e) = (1 + t) / 2 and 1 - t^2 = 4 e q^2: no cancellation of 1 + t
    // in the left tail (u clamped to +-15, where 1 + t < 1e-12).
    Val gelu_grad(const ref::Attrs& a, const Val& x) {
        const Val x2 = v(Opcode::VMUL, x, x);
        if (a.get_string("approximate", "none") == "tanh") {
            const double k = std::sqrt(2.0 / M_PI), c = 0.044715;
            const Val uu = s(Opcode::VMULS, v(Opcode::VMUL, s(Opcode::VADDS, s(Opcode::VMULS, x2, c), 1.0), x), k);
            const Val e = u(Opcode::VEXP, s(Opcode::VMULS, s(Opcode::VMAXS, s(Opcode::VMINS, uu, 15.0), -15.0), -2.0));
            const Val q = u(Opcode::VREC, s(Opcode::VADDS, e, 1.0));
            const Val poly = s(Opcode::VMULS, s(Opcode::VADDS, s(Opcode::VMULS, x2, 3 * c), 1.0), 2 * k);
            const Val inner = v(Opcode::VMUL, v(Opcode::VMUL, v(Opcode::VMUL, x, e), q), poly);
            return v(Opcode::VMUL, q, s(Opcode::VADDS, inner, 1.0));
        }
        const Val cdf = s(Opcode::VMULS, erf(s(Opcode::VMULS, x, M_SQRT1_2), true), 0.5);
        const Val pdf = s(Opcode::VMULS, u(Opcode::VEXP, s(Opcode::VMULS, x2, -0.5)), 1.0 / std::sqrt(2.0 * M_PI));
        return v(Opcode::VADD, cdf, v(Opcode::VMUL, x, pdf));
    }

    Val sigmoid(const Val& x) { return u(Opcode::VREC, s(Opcode::VADDS, u(Opcode::VEXP, neg(x)), 1.0)); }

    // HardSigmoid's linear part lo < x < hi (0 < alpha x + beta < 1), the corners rounded to fp32;
    // its slope there (0 when alpha is 0: an empty range).
    static void hardsigmoid_corners(double alpha, double beta, double& lo, double& hi, double& slope) {
        slope = alpha;
        if (alpha == 0) {
            lo = hi = 0;
            return;
        }
        const double c0 = -beta / alpha, c1 = (1 - beta) / alpha;
        lo = static_cast<float>(std::min(c0, c1)), hi = static_cast<float>(std::max(c0, c1));
    }

    // f'(x) of the unary op f named by attribute `activation` (ActivationGrad). Sigmoid' and
    // Tanh' are written e q^2 and 4 e q^2 with e = exp(-|x|) (exp(-2|x|)), q = 1 / (1 + e): no
    // 1 - y^2 cancelling where the function saturates. The piecewise ones take the value of the
    // branch the forward took (HardSigmoid: alpha strictly between its corners, where
    // alpha x + beta is 0 and 1; HardSwish: 0 at or below -3, 1 at or above 3, x / 3 + 1/2
    // between; LeakyRelu, Elu, Selu: the x > 0 branch).
    Val activation_grad(const ref::Attrs& a, const Val& x) {
        const std::string f = a.get_string("activation", "");
        const Val zero = Builder::imm(0, ct), one = Builder::imm(1, ct);
        auto gt0 = [&](const Val& t) { return b.cmp(CmpMode::GT, t, zero); };
        if (f == "Sigmoid" || f == "Tanh") {
            const Val e = u(Opcode::VEXP, s(Opcode::VMULS, u(Opcode::VABS, x), f == "Tanh" ? -2.0 : -1.0));
            const Val q = u(Opcode::VREC, s(Opcode::VADDS, e, 1.0));
            const Val g = v(Opcode::VMUL, v(Opcode::VMUL, e, q), q);
            return f == "Tanh" ? s(Opcode::VMULS, g, 4.0) : g;
        }
        if (f == "Softplus") return sigmoid(x);
        if (f == "HardSigmoid" || f == "HardSwish") {
            // x compared with the corners (in fp32: the host reference rounds them alike).
            const bool swish = f == "HardSwish";
            double lo = -3, hi = 3, al = 0;
            if (!swish) hardsigmoid_corners(a.get_float("alpha", 0.2), a.get_float("beta", 0.5), lo, hi, al);
            const Val mid = swish ? s(Opcode::VADDS, s(Opcode::VMULS, x, 1.0 / 3), 0.5) : Builder::imm(al, ct);
            const Val in = b.sel(b.cmp(CmpMode::GT, x, Builder::imm(lo, ct)), mid, zero);
            return b.sel(b.cmp(CmpMode::LT, x, Builder::imm(hi, ct)), in, swish ? one : zero);
        }
        if (f == "LeakyRelu") return b.sel(gt0(x), one, Builder::imm(a.get_float("alpha", 0.01), ct));
        if (f == "Elu" || f == "Selu") {
            const bool selu = f == "Selu";
            const double al = a.get_float("alpha", selu ? 1.67326319217681884765625 : 1.0);
            const double ga = selu ? a.get_float("gamma", 1.05070102214813232421875) : 1.0;
            return b.sel(gt0(x), Builder::imm(ga, ct), s(Opcode::VMULS, u(Opcode::VEXP, x), al * ga));
        }
        if (f == "Softsign") {
            const Val d = s(Opcode::VADDS, u(Opcode::VABS, x), 1.0);
            return u(Opcode::VREC, v(Opcode::VMUL, d, d));
        }
        if (f == "Erf") return s(Opcode::VMULS, u(Opcode::VEXP, neg(v(Opcode::VMUL, x, x))), 2.0 / std::sqrt(M_PI));
        if (f == "Exp") return u(Opcode::VEXP, x);
        if (f == "Log") return u(Opcode::VREC, x);
        if (f == "Sqrt") return s(Opcode::VMULS, u(Opcode::VREC, u(Opcode::VSQRT, x)), 0.5);
        if (f == "Reciprocal") return neg(u(Opcode::VREC, v(Opcode::VMUL, x, x)));
        if (f == "Abs") return b.sel(gt0(x), one, b.sel(lt0(x), Builder::imm(-1, ct), zero));
        throw InputError("ActivationGrad: activation '" + f + "' has no derivative program");
    }

    Val hard_sigmoid(const Val& x, double al, double be) {
        return s(Opcode::VMAXS, s(Opcode::VMINS, s(Opcode::VADDS, s(Opcode::VMULS, x, al), be), 1.0), 0.0);
    }

    // x rounded to an integer with mode m (values beyond the int32 range or already integral
    // in the format are kept).
    Val round_int(const Val& x, isa::RoundMode m) {
        const Val f = b.conv(b.conv(x, DType::INT32, m), ct);
        const double big = ct == DType::FP16 ? 1024.0 : 8388608.0;
        return b.sel(b.cmp(CmpMode::LT, u(Opcode::VABS, x), Builder::imm(big, ct)), f, x);
    }

    Val pow(const Val& x, const Val& y) {
        if (y.imm) {
            const double p = y.v;
            if (p == 1) return x;
            if (p == 2) return v(Opcode::VMUL, x, x);
            if (p == 3) return v(Opcode::VMUL, v(Opcode::VMUL, x, x), x);
            if (p == 0.5) return u(Opcode::VSQRT, x);
            if (p == -1) return u(Opcode::VREC, x);
            if (p == 0) return Builder::imm(1.0, ct);
        }
        const Val ax = u(Opcode::VABS, x);
        const Val r = u(Opcode::VEXP, v(Opcode::VMUL, y, u(Opcode::VLN, ax)));
        if (y.imm) {
            const double p = y.v;
            if (p != std::floor(p)) return u(Opcode::VEXP, v(Opcode::VMUL, y, u(Opcode::VLN, x)));  // x < 0 -> nan
            if (std::fmod(p, 2.0) == 0) return r;
            return b.sel(lt0(x), neg(r), r);
        }
        // y a tensor: x < 0 gives -r for odd integers, r for even ones, nan otherwise; y = 0 gives 1.
        const Val yi = b.conv(y, DType::INT32, isa::RoundMode::TRUNC);
        const Val is_int = b.cmp(CmpMode::EQ, b.conv(yi, ct), y);
        const Val odd = b.cmp(CmpMode::NE, v(Opcode::VAND, yi, Builder::imm(1, DType::INT32)), Builder::imm(0, DType::INT32));
        Val rn = b.sel(odd, neg(r), r);
        rn = b.sel(is_int, rn, Builder::imm(std::numeric_limits<double>::quiet_NaN(), ct));
        const Val out = b.sel(lt0(x), rn, r);
        return b.sel(b.cmp(CmpMode::EQ, y, Builder::imm(0, ct)), Builder::imm(1, ct), out);
    }

    Val unary(const std::string& op, const ref::Attrs& a, const Val& x) {
        if (op == "Relu") return u(Opcode::VRELU, x);
        if (op == "LeakyRelu") return s(Opcode::VLRELU, x, a.get_float("alpha", 0.01));
        if (op == "Sigmoid") return sigmoid(x);
        if (op == "Tanh") return tanh(x);
        if (op == "Erf") return erf(x);
        if (op == "Gelu") {
            if (a.get_string("approximate", "none") == "tanh") {
                const Val in = s(Opcode::VMULS, v(Opcode::VADD, x, s(Opcode::VMULS, v(Opcode::VMUL, v(Opcode::VMUL, x, x), x), 0.044715)),
                                 std::sqrt(2.0 / M_PI));
                return v(Opcode::VMUL, s(Opcode::VMULS, s(Opcode::VADDS, tanh(in), 1.0), 0.5), x);
            }
            return v(Opcode::VMUL, s(Opcode::VMULS, erf(s(Opcode::VMULS, x, M_SQRT1_2), true), 0.5), x);
        }
        if (op == "Exp") return u(Opcode::VEXP, x);
        if (op == "Log") return u(Opcode::VLN, x);
        if (op == "Sqrt") return u(Opcode::VSQRT, x);
        if (op == "Reciprocal") return u(Opcode::VREC, x);
        if (op == "Neg") return wrap(neg(x));
        if (op == "Abs") return wrap(u(Opcode::VABS, x));
        if (op == "Identity") return x;
        if (op == "HardSigmoid") return hard_sigmoid(x, a.get_float("alpha", 0.2), a.get_float("beta", 0.5));
        if (op == "HardSwish") return v(Opcode::VMUL, x, hard_sigmoid(x, 1.0 / 6, 0.5));
        if (op == "Elu") {
            const Val e = s(Opcode::VMULS, s(Opcode::VADDS, u(Opcode::VEXP, x), -1.0), a.get_float("alpha", 1.0));
            return b.sel(lt0(x), e, x);
        }
        if (op == "Selu") {
            const double al = a.get_float("alpha", 1.67326319217681884765625), ga = a.get_float("gamma", 1.05070102214813232421875);
            const Val e = s(Opcode::VMULS, s(Opcode::VADDS, u(Opcode::VEXP, x), -1.0), al * ga);
            return b.sel(b.cmp(CmpMode::GT, x, Builder::imm(0, ct)), s(Opcode::VMULS, x, ga), e);
        }
        if (op == "Softplus") {
            const Val l = u(Opcode::VLN, s(Opcode::VADDS, u(Opcode::VEXP, neg(u(Opcode::VABS, x))), 1.0));
            return v(Opcode::VADD, u(Opcode::VRELU, x), l);
        }
        if (op == "Softsign") return v(Opcode::VDIV, x, s(Opcode::VADDS, u(Opcode::VABS, x), 1.0));
        if (op == "Sign") {
            const Val one = Builder::imm(1, ct), zero = Builder::imm(0, ct), m1 = Builder::imm(-1, ct);
            const Val p = b.sel(b.cmp(CmpMode::GT, x, zero), one, zero);
            return b.sel(lt0(x), m1, p);
        }
        if (op == "Floor") return ct == DType::INT32 ? x : round_int(x, isa::RoundMode::FLOOR);
        if (op == "Ceil") return ct == DType::INT32 ? x : round_int(x, isa::RoundMode::CEIL);
        if (op == "Round") return ct == DType::INT32 ? x : round_int(x, isa::RoundMode::RINT);
        if (op == "Clip") {
            Val r = x;
            if (a.has("min")) r = s(Opcode::VMAXS, r, a.get_float("min", 0));
            if (a.has("max")) r = s(Opcode::VMINS, r, a.get_float("max", 0));
            return r;
        }
        throw InputError("elementwise op '" + op + "' has no vector program");
    }

    Val binary(const std::string& op, const Val& x, const Val& y) {
        if (op == "Add") return wrap(v(Opcode::VADD, x, y));
        if (op == "Sub") {
            if (x.imm && !y.imm) return wrap(s(Opcode::VADDS, neg(y), x.v));
            return wrap(v(Opcode::VSUB, x, y));
        }
        if (op == "Mul") return wrap(v(Opcode::VMUL, x, y));
        if (op == "Div") {
            if (ct == DType::INT32) {
                const Val q = v(Opcode::VDIV, b.conv(x, DType::FP32), b.conv(y, DType::FP32));
                return wrap(b.conv(q, DType::INT32, isa::RoundMode::TRUNC));
            }
            int e = 0;
            if (y.imm && std::isfinite(y.v) && std::fabs(std::frexp(y.v, &e)) == 0.5 && std::isfinite(1.0 / y.v))
                return s(Opcode::VMULS, x, 1.0 / y.v);  // a power of two: exact
            return v(Opcode::VDIV, x, y);
        }
        if (op == "Max") return v(Opcode::VMAX, x, y);
        if (op == "Min") return v(Opcode::VMIN, x, y);
        if (op == "PRelu") return b.sel(lt0(x), v(Opcode::VMUL, x, y), x);
        if (op == "Pow") {
            if (ct != DType::INT32) return pow(x, y);
            // Integers: through fp32, rounded to the nearest integer when the fp32 result is
            // within 2^-16 of it (exp/ln round-off), truncated otherwise.
            const Val p = pow(b.conv(x, DType::FP32), b.conv(y, DType::FP32));
            const Val rn = b.conv(p, DType::INT32, isa::RoundMode::RINT);
            const Val tr = b.conv(p, DType::INT32, isa::RoundMode::TRUNC);
            const Val d = u(Opcode::VABS, v(Opcode::VSUB, p, b.conv(rn, DType::FP32)));
            const Val near = b.cmp(CmpMode::LT, d, s(Opcode::VMAXS, s(Opcode::VMULS, u(Opcode::VABS, p), 1.0 / 65536), 1e-3));
            return wrap(b.sel(near, rn, tr));
        }
        throw InputError("elementwise op '" + op + "' has no vector program");
    }
};

CmpMode cmp_mode(const std::string& op) {
    if (op == "Equal") return CmpMode::EQ;
    if (op == "Less") return CmpMode::LT;
    if (op == "Greater") return CmpMode::GT;
    if (op == "LessOrEqual") return CmpMode::LE;
    return CmpMode::GE;
}

Val bool_of(Builder& b, const Val& bits) {
    return b.sel(bits, Builder::imm(1, DType::FP16), Builder::imm(0, DType::FP16));
}

}  // namespace

const std::vector<std::string>& ew_op_types() {
    static const std::vector<std::string> all = [] {
        std::vector<std::string> v;
        for (List l : {kBinary, kVariadic, kCompare, kLogic, kUnary, kOther, kTrain}) v.insert(v.end(), l.begin(), l.end());
        return v;
    }();
    return all;
}

bool is_ew_op(const std::string& op) {
    for (const std::string& t : ew_op_types())
        if (t == op) return true;
    return false;
}

bool ew_precise(const std::string& op) {
    return op == "Sigmoid" || op == "Tanh" || op == "Gelu" || op == "Erf" || op == "Softplus" || op == "Elu" ||
           op == "Selu" || op == "Pow" || op == "HardSigmoid" || op == "HardSwish" || op == "Softsign" ||
           op == "GeluGrad" || op == "ActivationGrad";
}

bool has_activation_grad(const std::string& op) { return in_list(kActivationGrad, op); }

std::string activation_grad_list() {
    std::string s;
    for (const char* x : kActivationGrad) s += (s.empty() ? "" : " ") + std::string(x);
    return s;
}

ref::ElemType ew_output_elem(const EwNode& n, const std::vector<ElemType>& in) {
    if (in.empty()) unsupported(n, "needs an input");
    const std::string& op = n.op;
    auto need_float = [&](ElemType t) {
        if (!float_elem(t)) unsupported(n, std::string("input type ") + ref::elem_type_name(t) + " is not supported (float types only)");
    };
    if (in_list(kCompare, op) || in_list(kLogic, op)) {
        if (in_list(kLogic, op))
            for (ElemType t : in)
                if (t != ElemType::Bool) unsupported(n, std::string("input type ") + ref::elem_type_name(t) + " (bool only)");
        return ElemType::Bool;
    }
    if (op == "Where") {
        if (in.size() != 3) unsupported(n, "needs 3 inputs");
        if (in[0] != ElemType::Bool) unsupported(n, "condition must be bool");
        return in[1];
    }
    if (in_list(kTrain, op)) {
        if (in.size() != 2 && !(op == "ReluGrad" && in.size() == 3))
            unsupported(n, op == "ReluGrad" ? "needs 2 or 3 inputs" : "needs 2 inputs");
        if (in.size() == 3 && in[2] != in[1]) unsupported(n, "dy and dy2 must have one type");
        for (ElemType t : in) need_float(t);
        if (op == "ActivationGrad" && !in_list(kActivationGrad, n.attrs.get_string("activation", "")))
            unsupported(n, "attribute 'activation' = '" + n.attrs.get_string("activation", "") +
                               "' has no derivative here (" + activation_grad_list() + ")");
        return op == "ReluGrad" || op == "ClipGrad" || op == "GeluGrad" || op == "ActivationGrad" ? in[1] : in[0];
    }
    if (op == "Cast") return static_cast<ElemType>(n.attrs.int_("to"));
    if (op == "CastLike") {
        if (in.size() < 2) unsupported(n, "needs 2 inputs");
        return in[1];
    }
    if (op == "ElementwiseChain") {
        for (const auto& s : ref::parse_chain(n.name, n.attrs))
            if (ew_precise(s.op) || s.op == "Sigmoid") need_float(in[0]);
        return in[0];
    }
    const bool float_only = in_list(kUnary, op) && op != "Relu" && op != "Neg" && op != "Abs" && op != "Identity" &&
                            op != "Sign" && op != "Floor" && op != "Ceil" && op != "Round";
    if (float_only || op == "Mean" || op == "PRelu") need_float(in[0]);
    if (in[0] == ElemType::Bool && op != "Identity") unsupported(n, "bool input is not supported");
    return in[0];
}

Program build_ew_program(const EwNode& n, const std::vector<InputDesc>& in, DType out_storage, ElemType out_elem) {
    Builder b(in, out_storage);
    const std::string& op = n.op;
    const ElemType e0 = in.at(0).elem;
    bool precise = ew_precise(op) || op == "MovingAverage";  // two products that may cancel: fp32
    if (op == "ElementwiseChain") {
        for (const auto& s : ref::parse_chain(n.name, n.attrs)) precise = precise || ew_precise(s.op);
        precise = precise || n.attrs.get_int("fp32", 0) != 0;  // every step in fp32, one rounding at the end
    }
    const DType ct = compute_type(e0, precise);
    Em em{b, ct, e0};
    Val r;
    if (in_list(kCompare, op)) {
        const DType t = compute_type(e0, false);
        r = bool_of(b, b.cmp(cmp_mode(op), b.in(0, t), b.in(1, t)));
    } else if (in_list(kLogic, op)) {
        const Val x = b.in(0, DType::FP16);
        if (op == "Not") {
            r = b.scal(Opcode::VADDS, b.scal(Opcode::VMULS, x, -1.0), 1.0);
        } else {
            const Val y = b.in(1, DType::FP16);
            if (op == "And") r = b.bin(Opcode::VMIN, x, y);
            else if (op == "Or") r = b.bin(Opcode::VMAX, x, y);
            else r = b.un(Opcode::VABS, b.bin(Opcode::VSUB, x, y));
        }
    } else if (op == "Where") {
        const Val c = b.cmp(CmpMode::NE, b.in(0, DType::FP16), Builder::imm(0, DType::FP16));
        const DType t = compute_type(in.at(1).elem, false);
        r = b.sel(c, b.in(1, t), b.in(2, t));
    } else if (op == "Cast" || op == "CastLike") {
        Val x = b.in(0, in[0].storage);
        if (!float_elem(e0)) x = b.conv(x, compute_type(e0, false));  // bool -> fp16, integers -> int32
        if (out_elem == ElemType::Bool) {
            r = bool_of(b, b.cmp(CmpMode::NE, x, Builder::imm(0, b.type_of(x))));
        } else if (float_elem(e0) && !float_elem(out_elem)) {
            r = b.conv(x, DType::INT32, isa::RoundMode::TRUNC);
        } else {
            r = x;
        }
        if (narrow_int(out_elem) && b.type_of(r) == DType::INT32) r = Em{b, DType::INT32, out_elem}.wrap(r);
    } else if (op == "Clip") {
        Val x = b.in(0, ct);
        if (n.opset < 11) {
            if (n.attrs.has("min")) x = b.bin(Opcode::VMAX, x, Builder::imm(n.attrs.get_float("min", 0), ct));
            if (n.attrs.has("max")) x = b.bin(Opcode::VMIN, x, Builder::imm(n.attrs.get_float("max", 0), ct));
        } else {
            if (in.size() > 1 && in[1].present) x = b.bin(Opcode::VMAX, x, b.in(1, ct));
            if (in.size() > 2 && in[2].present) x = b.bin(Opcode::VMIN, x, b.in(2, ct));
        }
        r = x;
    } else if (op == "ElementwiseChain") {
        Val acc = b.in(0, ct);
        int next = 1;
        for (const auto& s : ref::parse_chain(n.name, n.attrs)) {
            if (s.arity == 2) {
                const Val y = b.in(next++, ct);
                acc = s.swap ? em.binary(s.op, y, acc) : em.binary(s.op, acc, y);
            } else {
                acc = em.unary(s.op, s.attrs, acc);
            }
        }
        r = acc;
    } else if (in_list(kVariadic, op)) {
        const std::string base = op == "Max" ? "Max" : op == "Min" ? "Min" : "Add";
        r = b.in(0, ct);
        for (size_t i = 1; i < in.size(); ++i) r = em.binary(base, r, b.in(static_cast<int>(i), ct));
        if (op == "Mean" && in.size() > 1) r = em.binary("Div", r, Builder::imm(static_cast<double>(in.size()), ct));
    } else if (op == "ReluGrad") {
        const DType t = compute_type(in.at(1).elem, false);
        const Val y = b.in(0, compute_type(e0, false));
        const Val dy = in.size() == 3 ? b.bin(Opcode::VADD, b.in(1, t), b.in(2, t)) : b.in(1, t);
        r = b.sel(b.cmp(CmpMode::GT, y, Builder::imm(0, b.type_of(y))), dy, Builder::imm(0, t));
    } else if (op == "ClipGrad") {
        const DType t = compute_type(in.at(1).elem, false);
        const Val y = b.in(0, compute_type(e0, false));
        const DType yt = b.type_of(y);
        Val keep = b.in(1, t);
        if (n.attrs.has("min"))
            keep = b.sel(b.cmp(CmpMode::GT, y, Builder::imm(n.attrs.get_float("min", 0), yt)), keep, Builder::imm(0, t));
        if (n.attrs.has("max"))
            keep = b.sel(b.cmp(CmpMode::LT, y, Builder::imm(n.attrs.get_float("max", 0), yt)), keep, Builder::imm(0, t));
        r = keep;
    } else if (op == "GeluGrad") {
        r = b.bin(Opcode::VMUL, em.gelu_grad(n.attrs, b.in(0, ct)), b.in(1, ct));
    } else if (op == "ActivationGrad") {
        r = b.bin(Opcode::VMUL, em.activation_grad(n.attrs, b.in(0, ct)), b.in(1, ct));
    } else if (op == "MovingAverage") {
        const double m = n.attrs.get_float("momentum", 0.9);
        r = b.bin(Opcode::VADD, b.scal(Opcode::VMULS, b.in(0, ct), m), b.scal(Opcode::VMULS, b.in(1, ct), 1 - m));
    } else if (op == "LossGrad") {
        r = b.scal(Opcode::VMULS, b.bin(Opcode::VSUB, b.in(0, ct), b.in(1, ct)), n.attrs.get_float("scale", 1.0));
    } else if (op == "SgdUpdate") {
        r = b.bin(Opcode::VSUB, b.in(0, ct), b.scal(Opcode::VMULS, b.in(1, ct), n.attrs.get_float("lr", 0.01)));
    } else if (op == "Identity") {
        r = b.in(0, in[0].storage);  // copied as bytes, any type
    } else if (in_list(kBinary, op)) {
        const Val x = b.in(0, ct);
        const Val y = b.in(1, op == "Pow" && ct == DType::INT32 && float_elem(in[1].elem) ? DType::FP32 : ct);
        r = em.binary(op, x, y);
    } else {
        r = em.unary(op, n.attrs, b.in(0, ct));
    }
    return b.finish(r, isa::RoundMode::RINT);
}

}  // namespace sfumato::ops::ew
