// The AdamW update rule (decoupled weight decay) in double, shared by the host reference of the
// AdamWUpdate node op (runtime/ops/adamw.cpp) and the training step's check (train_step.cpp).
#pragma once
#include <cmath>
#include <cstdint>

#include "runtime/ref/attrs.h"

namespace sfumato::ref {

struct AdamW {
    double lr = 1e-3, b1 = 0.9, b2 = 0.999, eps = 1e-8, wd = 0.01;
    int64_t t = 1;  // the step (bias corrections 1 - b^t)

    static AdamW of(const Attrs& a) {
        AdamW h;
        h.lr = a.get_float("lr", h.lr), h.b1 = a.get_float("beta1", h.b1), h.b2 = a.get_float("beta2", h.b2);
        h.eps = a.get_float("epsilon", h.eps), h.wd = a.get_float("weight_decay", h.wd);
        h.t = a.get_int("step", h.t);
        return h;
    }
    // The new w for gradient g; the moments m and v are updated.
    double step(double w, double g, double& m, double& v) const {
        m = b1 * m + (1 - b1) * g;
        v = b2 * v + (1 - b2) * g * g;
        const double mh = m / (1 - std::pow(b1, static_cast<double>(t)));
        const double vh = v / (1 - std::pow(b2, static_cast<double>(t)));
        return w - lr * (mh / (std::sqrt(vh) + eps) + wd * w);
    }
};

}  // namespace sfumato::ref
