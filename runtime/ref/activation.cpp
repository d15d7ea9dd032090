// Fused activation epilogues in double, ONNX semantics (see activation.h).
#include "runtime/ref/activation.h"

#include <cmath>
#include <limits>

#include "sim/error.h"

namespace sfumato::ref {

Activation activation_of(const Attrs& attrs) {
    Activation a;
    a.kind = attrs.get_string("activation", "");
    if (a.kind.empty()) return a;
    double da = 0, db = 0;
    if (a.kind == "LeakyRelu")
        da = 0.01;
    else if (a.kind == "HardSigmoid")
        da = 0.2, db = 0.5;
    else if (a.kind == "Clip")
        da = -std::numeric_limits<double>::infinity(), db = std::numeric_limits<double>::infinity();
    else if (a.kind != "Relu" && a.kind != "Sigmoid" && a.kind != "Tanh" && a.kind != "Gelu" &&
             a.kind != "HardSwish")
        throw InputError("node '" + attrs.owner() + "': unknown fused activation '" + a.kind +
                         "' (valid: Relu, LeakyRelu, Sigmoid, Tanh, Gelu, Clip, "
                         "HardSigmoid, HardSwish)");
    a.alpha = attrs.get_float("activation_alpha", da);
    a.beta = attrs.get_float("activation_beta", db);
    return a;
}

double activate(const Activation& a, double x) {
    if (a.none() || std::isnan(x)) return x;
    const std::string& k = a.kind;
    if (k == "Relu") return x > 0 ? x : 0.0;
    if (k == "LeakyRelu") return x >= 0 ? x : a.alpha * x;
    if (k == "Sigmoid") return 1.0 / (1.0 + std::exp(-x));
    if (k == "Tanh") return std::tanh(x);
    if (k == "Gelu") return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    if (k == "Clip") return std::min(std::max(x, a.alpha), a.beta);
    if (k == "HardSigmoid") return std::max(0.0, std::min(1.0, a.alpha * x + a.beta));
    // HardSwish: x * HardSigmoid(x) with alpha 1/6, beta 0.5.
    return x * std::max(0.0, std::min(1.0, x / 6.0 + 0.5));
}

void apply_activation(const Activation& a, HostTensor& t) {
    if (a.none()) return;
    for (double& v : t.data) v = activate(a, v);
    round_to_type(t);
}

}  // namespace sfumato::ref
