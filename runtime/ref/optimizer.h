// The optimizer update rules of `sfumato train-step` in double, over one weight tensor: the host
// references of the fused update kernels (runtime/ops/optim/) and the training step's check
// (runtime/graph/train_step.cpp). One rule per optimizer, with the usual defaults:
//   - Sgd: w -= lr (g + wd w) (PyTorch's torch.optim.SGD without momentum);
//   - Momentum: b = mu b + (g + wd w), w -= lr b (torch.optim.SGD with momentum, dampening 0,
//     not Nesterov: its first step's buffer is g, the same as mu 0 + g from a zero buffer);
//   - AdamW: m = b1 m + (1 - b1) g, v = b2 v + (1 - b2) g^2,
//     w -= lr (m / c1 / (sqrt(v / c2) + eps) + wd w) with c = 1 - b^t (Loshchilov & Hutter);
//   - Lamb: the AdamW direction r = m / c1 / (sqrt(v / c2) + eps) + wd w, then
//     w -= lr (|w| / |r|) r over the whole tensor, the trust ratio 1 where either norm is zero
//     (You et al., "Large Batch Optimization for Deep Learning", Algorithm 2, phi the identity).
// g is the gradient as the kernels read it: multiplied by inv_scale first (the unscale of loss
// scaling, fused into the update).
#pragma once
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/ref/attrs.h"

namespace sfumato::ref {

struct OptimizerRule {
    enum class Kind : uint8_t { Sgd, Momentum, AdamW, Lamb } kind = Kind::Sgd;
    double lr = 0.01, wd = 0, mu = 0.9, b1 = 0.9, b2 = 0.999, eps = 1e-8, inv_scale = 1;
    int64_t t = 1;  // the step (AdamW and LAMB bias corrections 1 - b^t)

    // The fp32 state tensors the rule keeps per weight (momentum buffer; first and second moments).
    static int states(Kind k) { return k == Kind::Sgd ? 0 : k == Kind::Momentum ? 1 : 2; }

    static OptimizerRule of(Kind k, const Attrs& a) {
        OptimizerRule h;
        h.kind = k;
        if (k == Kind::AdamW || k == Kind::Lamb) h.wd = 0.01;  // decoupled decay: the papers' BERT setting
        if (k == Kind::Lamb) h.eps = 1e-6;                      // LAMB's paper and NVIDIA's FusedLAMB
        h.lr = a.get_float("lr", h.lr), h.wd = a.get_float("weight_decay", h.wd);
        h.mu = a.get_float("momentum", h.mu), h.b1 = a.get_float("beta1", h.b1), h.b2 = a.get_float("beta2", h.b2);
        h.eps = a.get_float("epsilon", h.eps), h.inv_scale = a.get_float("inv_scale", h.inv_scale);
        h.t = a.get_int("step", h.t);
        return h;
    }

    // One step over a tensor: w (the weights the rule updates: the fp32 master copy or the weight
    // itself) and the states s0, s1 (as many as states(kind)) in place; g unscaled here.
    void apply(std::vector<double>& w, const std::vector<double>& g, std::vector<double>* s0,
               std::vector<double>* s1) const {
        const size_t n = w.size();
        const double c1 = 1 - std::pow(b1, static_cast<double>(t)), c2 = 1 - std::pow(b2, static_cast<double>(t));
        std::vector<double> r(kind == Kind::Lamb ? n : 0);
        double nw = 0, nr = 0;
        for (size_t i = 0; i < n; ++i) {
            const double gi = g[i] * inv_scale;
            switch (kind) {
                case Kind::Sgd: w[i] -= lr * (gi + wd * w[i]); break;
                case Kind::Momentum:
                    (*s0)[i] = mu * (*s0)[i] + gi + wd * w[i];
                    w[i] -= lr * (*s0)[i];
                    break;
                case Kind::AdamW:
                case Kind::Lamb: {
                    double& m = (*s0)[i];
                    double& v = (*s1)[i];
                    m = b1 * m + (1 - b1) * gi;
                    v = b2 * v + (1 - b2) * gi * gi;
                    const double d = m / c1 / (std::sqrt(v / c2) + eps) + wd * w[i];
                    if (kind == Kind::AdamW) {
                        w[i] -= lr * d;
                    } else {
                        r[i] = d;
                        nw += w[i] * w[i];
                        nr += d * d;
                    }
                    break;
                }
            }
        }
        if (kind != Kind::Lamb) return;
        const double ratio = nw > 0 && nr > 0 ? std::sqrt(nw) / std::sqrt(nr) : 1.0;
        for (size_t i = 0; i < n; ++i) w[i] -= lr * ratio * r[i];
    }
};

}  // namespace sfumato::ref
