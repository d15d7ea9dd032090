#include "runtime/ref/ew_scalar.h"

#include <cmath>
#include <map>
#include <sstream>

#include "sim/error.h"

namespace sfumato::ref {

namespace {

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

double pow_onnx(double x, double y) { return std::pow(x, y); }

}  // namespace

bool chain_binary(const std::string& t) {
    return t == "Add" || t == "Sub" || t == "Mul" || t == "Div" || t == "Pow" || t == "Max" || t == "Min" ||
           t == "PRelu";
}

ScalarOp scalar_op(const std::string& t, const Attrs& a, ElemType type) {
    ScalarOp o;
    const bool integer = is_integer(type);
    // Binary
    if (t == "Add") o.f2 = [](double x, double y) { return x + y; };
    else if (t == "Sub") o.f2 = [](double x, double y) { return x - y; };
    else if (t == "Mul") o.f2 = [](double x, double y) { return x * y; };
    else if (t == "Div") {
        if (integer) o.f2 = [](double x, double y) { return y == 0 ? 0.0 : std::trunc(x / y); };
        else o.f2 = [](double x, double y) { return x / y; };
    } else if (t == "Pow") o.f2 = pow_onnx;
    else if (t == "Max") o.f2 = [](double x, double y) { return std::isnan(x) || std::isnan(y) ? NAN : std::max(x, y); };
    else if (t == "Min") o.f2 = [](double x, double y) { return std::isnan(x) || std::isnan(y) ? NAN : std::min(x, y); };
    else if (t == "PRelu") o.f2 = [](double x, double s) { return x < 0 ? x * s : x; };
    else if (t == "Equal") o.f2 = [](double x, double y) { return x == y ? 1.0 : 0.0; }, o.bool_out = true;
    else if (t == "Less") o.f2 = [](double x, double y) { return x < y ? 1.0 : 0.0; }, o.bool_out = true;
    else if (t == "Greater") o.f2 = [](double x, double y) { return x > y ? 1.0 : 0.0; }, o.bool_out = true;
    else if (t == "LessOrEqual") o.f2 = [](double x, double y) { return x <= y ? 1.0 : 0.0; }, o.bool_out = true;
    else if (t == "GreaterOrEqual") o.f2 = [](double x, double y) { return x >= y ? 1.0 : 0.0; }, o.bool_out = true;
    else if (t == "And") o.f2 = [](double x, double y) { return x != 0 && y != 0 ? 1.0 : 0.0; }, o.bool_out = true;
    else if (t == "Or") o.f2 = [](double x, double y) { return x != 0 || y != 0 ? 1.0 : 0.0; }, o.bool_out = true;
    else if (t == "Xor") o.f2 = [](double x, double y) { return (x != 0) != (y != 0) ? 1.0 : 0.0; }, o.bool_out = true;
    // Unary
    else if (t == "Not") o.f1 = [](double x) { return x != 0 ? 0.0 : 1.0; }, o.bool_out = true;
    else if (t == "Identity") o.f1 = [](double x) { return x; };
    else if (t == "Relu") o.f1 = [](double x) { return std::isnan(x) ? x : std::max(x, 0.0); };
    else if (t == "LeakyRelu") {
        const double al = a.get_float("alpha", 0.01);
        o.f1 = [al](double x) { return x < 0 ? x * al : x; };
    } else if (t == "Clip") {
        const double lo = a.get_float("min", -INFINITY), hi = a.get_float("max", INFINITY);
        o.f1 = [lo, hi](double x) { return std::isnan(x) ? x : std::min(hi, std::max(lo, x)); };
    } else if (t == "Sigmoid") o.f1 = sigmoid;
    else if (t == "Tanh") o.f1 = [](double x) { return std::tanh(x); };
    else if (t == "Gelu") {
        if (a.get_string("approximate", "none") == "tanh")
            o.f1 = [](double x) {
                return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
            };
        else
            o.f1 = [](double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); };
    } else if (t == "Erf") o.f1 = [](double x) { return std::erf(x); };
    else if (t == "Exp") o.f1 = [](double x) { return std::exp(x); };
    else if (t == "Log") o.f1 = [](double x) { return std::log(x); };
    else if (t == "Sqrt") o.f1 = [](double x) { return std::sqrt(x); };
    else if (t == "Reciprocal") o.f1 = [](double x) { return 1.0 / x; };
    else if (t == "Neg") o.f1 = [](double x) { return -x; };
    else if (t == "Abs") o.f1 = [](double x) { return std::fabs(x); };
    else if (t == "HardSigmoid") {
        const double al = a.get_float("alpha", 0.2), be = a.get_float("beta", 0.5);
        o.f1 = [al, be](double x) { return std::max(0.0, std::min(1.0, al * x + be)); };
    } else if (t == "HardSwish") o.f1 = [](double x) { return x * std::max(0.0, std::min(1.0, x / 6.0 + 0.5)); };
    else if (t == "Elu") {
        const double al = a.get_float("alpha", 1.0);
        o.f1 = [al](double x) { return x < 0 ? al * (std::exp(x) - 1.0) : x; };
    } else if (t == "Selu") {
        const double al = a.get_float("alpha", 1.67326319217681884765625),
                     ga = a.get_float("gamma", 1.05070102214813232421875);
        o.f1 = [al, ga](double x) { return x > 0 ? ga * x : ga * (al * std::exp(x) - al); };
    } else if (t == "Softplus") o.f1 = [](double x) { return std::log1p(std::exp(-std::fabs(x))) + std::max(x, 0.0); };
    else if (t == "Softsign") o.f1 = [](double x) { return x / (1.0 + std::fabs(x)); };
    else if (t == "Sign") o.f1 = [](double x) { return std::isnan(x) ? x : x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0; };
    else if (t == "Floor") o.f1 = [](double x) { return std::floor(x); };
    else if (t == "Ceil") o.f1 = [](double x) { return std::ceil(x); };
    else if (t == "Round") o.f1 = [](double x) { return std::nearbyint(x); };  // ties to even
    else throw InputError("elementwise op type '" + t + "' has no scalar function");
    return o;
}

std::vector<ChainStep> parse_chain(const std::string& node, const Attrs& attrs) {
    const Attr* p = attrs.find("program");
    if (!p || p->kind != Attr::Kind::Strings || p->strings.empty())
        throw InputError("node '" + node + "' (ElementwiseChain): attribute 'program' (strings, one step each) is missing");
    std::vector<ChainStep> steps;
    for (size_t i = 0; i < p->strings.size(); ++i) {
        std::istringstream is(p->strings[i]);
        ChainStep s;
        s.attrs.set_owner(node);
        is >> s.op;
        std::string kv;
        while (is >> kv) {
            const size_t eq = kv.find('=');
            if (eq == std::string::npos || eq == 0)
                throw InputError("node '" + node + "' (ElementwiseChain): step " + std::to_string(i) + " '" + p->strings[i] +
                                 "': expected key=value, got '" + kv + "'");
            const std::string k = kv.substr(0, eq), v = kv.substr(eq + 1);
            char* end = nullptr;
            const double d = std::strtod(v.c_str(), &end);
            if (k == "swap") {
                s.swap = d != 0;
            } else if (end && *end == 0 && !v.empty()) {
                if (d == std::floor(d) && v.find_first_of(".eE") == std::string::npos) s.attrs.set(k, Attr::of_int(static_cast<int64_t>(d)));
                else s.attrs.set(k, Attr::of_float(d));
            } else {
                s.attrs.set(k, Attr::of_string(v));
            }
        }
        s.arity = chain_binary(s.op) ? 2 : 1;
        try {
            (void)scalar_op(s.op, s.attrs, ElemType::Float);
        } catch (const InputError&) {
            throw InputError("node '" + node + "' (ElementwiseChain): step " + std::to_string(i) + " '" + p->strings[i] +
                             "': op '" + s.op + "' cannot be chained");
        }
        if (scalar_op(s.op, s.attrs, ElemType::Float).bool_out)
            throw InputError("node '" + node + "' (ElementwiseChain): step " + std::to_string(i) + " '" + s.op +
                             "' has a bool output and cannot be chained");
        steps.push_back(std::move(s));
    }
    return steps;
}

}  // namespace sfumato::ref
