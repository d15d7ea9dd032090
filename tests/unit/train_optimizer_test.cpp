// The AdamW update kernel (runtime/ops/adamw.cpp, a fused vector kernel of `sfumato train-step
// --optimizer adamw`) against its host reference (runtime/ref/adamw.h) on the op rig: a later step
// (nonzero moments, bias corrections of step 3), fp32 and fp16 weights, sizes that leave partial
// tiles and blocks; and the reference rule against a direct evaluation of AdamW's definition.
#include <catch2/catch.hpp>
#include <cmath>

#include "op_rig.h"
#include "runtime/ref/adamw.h"

using namespace sfumato;
using namespace sfumato::ops;
using namespace sfumato::ops::test;
using ref::ElemType;

TEST_CASE("AdamWUpdate: the fused kernel matches the host reference at a later step") {
    std::mt19937 rng(5);
    for (ElemType t : {ElemType::Float, ElemType::Float16})
        for (int64_t n : {int64_t{1000}, int64_t{77}, int64_t{20000}}) {
            NodeDesc d = node("AdamWUpdate", {{{n}, t}, {{n}, t}, {{n}, ElemType::Float}, {{n}, ElemType::Float}});
            d.attrs.set("lr", ref::Attr::of_float(0.01));
            d.attrs.set("step", ref::Attr::of_int(3));
            d.attrs.set("weight_decay", ref::Attr::of_float(0.1));
            const std::vector<ref::HostTensor> vals = {random_tensor({n}, t, rng, -1, 1), random_tensor({n}, t, rng, -1, 1),
                                                       random_tensor({n}, ElemType::Float, rng, -0.1, 0.1),
                                                       random_tensor({n}, ElemType::Float, rng, 0, 0.01)};
            // fp32 arithmetic inside: the update (lr-sized) to about 1e-6 of w; fp16 w rounds once.
            const Tolerance tol = t == ElemType::Float ? Tolerance{1e-6, 1e-6} : Tolerance{1e-3, 1e-3};
            const RigResult r = run_node(d, vals, tiny_dev(), tol, n < 5000);
            INFO(ref::elem_type_name(t) << " n " << n << ": " << r.why << " | " << r.describe);
            CHECK(r.passed);
        }
    // Bad inputs are refused naming the node.
    NodeDesc bad = node("AdamWUpdate", {{{8}, ElemType::Float}, {{8}, ElemType::Float}, {{8}, ElemType::Float16},
                                        {{8}, ElemType::Float}});
    CHECK_THROWS_WITH(make_node_op(bad, tiny_dev()), Catch::Contains("M and V must be fp32"));
}

TEST_CASE("AdamW reference: one step from zero moments moves every weight by lr (sign of g) plus the decay") {
    ref::AdamW h;
    h.lr = 0.01, h.wd = 0.1;
    for (double g : {0.3, -2e-3, 5.0}) {
        double m = 0, v = 0;
        const double w = h.step(1.5, g, m, v);
        // m / (1 - b1) = g and v / (1 - b2) = g^2: the step is g / (|g| + eps).
        CHECK(w == Approx(1.5 - 0.01 * (g / (std::fabs(g) + 1e-8) + 0.1 * 1.5)).epsilon(1e-12));
        CHECK(m == Approx(0.1 * g));
        CHECK(v == Approx(0.001 * g * g));
    }
}
