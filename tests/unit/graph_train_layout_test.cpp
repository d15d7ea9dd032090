// Layout propagation in a training step (runtime/graph/train_layout.cpp, pass_layout.cpp's
// training mode), on the host (no chip): the forward keeps NC1HWC0 from the input's one TransData
// to the classifier; the backward's items run on NC1HWC0 gradients; and the weight gradients
// that the host references give for the plan with the layout equal those of the all-ND plan
// (both in double: the NC1HWC0 storage views, their host permutations and the per-lane
// reductions compute the same derivatives).
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <set>

#include "runtime/graph/train_step.h"
#include "runtime/graph/zoo.h"

using namespace sfumato;
using namespace sfumato::graph;

namespace {

DeviceInfo layout_test_device() {
    DeviceInfo d;
    d.arch = "split";
    d.cube_cores = 2, d.vector_cores = 4, d.aiv_per_aic = 2;
    d.ub_bytes = 192 * 1024, d.l1_bytes = 512 * 1024;
    d.l0a_bytes = d.l0b_bytes = 64 * 1024, d.l0c_bytes = 128 * 1024;
    d.gm_bytes = 1ull << 30;
    d.functional = true;
    return d;
}

std::unique_ptr<TrainSetup> setup(const std::string& model, bool layout, Precision p = Precision::FP32) {
    auto ts = std::make_unique<TrainSetup>();
    ts->copt.precision = p;
    ts->layout = layout;
    ts->compile(zoo_graph(model), 2, layout_test_device());
    ts->make_data(1);
    return ts;
}

// The weight gradients by weight name.
std::map<std::string, ref::HostTensor> by_name(const TrainSetup& ts) {
    std::map<std::string, ref::HostTensor> out;
    for (auto& [id, g] : host_gradients(ts, 0))
        out.emplace(ts.plan->tensors[static_cast<size_t>(ts.tp.tensors[static_cast<size_t>(id)].plan)].name, g);
    return out;
}

const std::string kResNet = "resnet18?image=64&width=8&classes=10";

bool is_add_relu(const PlanStep& st) {
    const ref::Attr* p = st.desc.attrs.find("program");
    return st.op_type == "ElementwiseChain" && p && p->strings == std::vector<std::string>{"Add", "Relu"};
}

}  // namespace

TEST_CASE("train layout: a ResNet's forward keeps NC1HWC0 from the input's TransData to the classifier") {
    auto ts = setup(kResNet, true);
    size_t transdata = 0, bn_c0 = 0, bn = 0, conv_c0 = 0, conv = 0;
    for (const PlanStep& st : ts->plan->steps) {
        const auto fmt = [&](int t) { return ts->plan->tensors[static_cast<size_t>(t)].ref.format; };
        transdata += st.op_type == "TransData";
        if (st.op_type == "BatchNormTraining") {
            ++bn;
            bn_c0 += fmt(st.in[0]) == ops::Format::NC1HWC0 && fmt(st.out[0]) == ops::Format::NC1HWC0;
            // The statistics stay ND vectors (read by the backward as channel vectors).
            for (size_t k = 1; k < st.out.size(); ++k) CHECK(fmt(st.out[k]) == ops::Format::ND);
        }
        if (st.op_type == "Conv") {
            ++conv;
            conv_c0 += fmt(st.out[0]) == ops::Format::NC1HWC0;
        }
    }
    // fp32: C0 = 8 and every width (8 << stage) is whole C0 blocks; the image is the only
    // conversion, the pooled [N, 64, 1, 1] goes back to ND as a view (same bytes).
    CHECK(transdata == 1);
    CHECK(bn == 20);
    CHECK(bn_c0 == bn);
    CHECK(conv_c0 == conv);
    const nlohmann::json j = train_layout_json(*ts->plan, ts->tp);
    CHECK(j["forward"]["before"] == conv);
    CHECK(j["forward"]["after"] == 1);
    // The backward: each Conv's data gradient (19: not the stem's, whose input needs none) and
    // weight gradient (20) converted inside their kernels without the layout.
    CHECK(j["backward"]["before"] == 19 + 20);
    CHECK(j["backward"]["saved"].get<int>() > 0);
    CHECK(ts->tp.layout.kept > 0);
    // Every BatchNorm's backward on the fused kernels (runtime/ops/norm/bn_train_kernel.h): one
    // reduction and one dX item each (every BatchNorm's input needs its gradient).
    size_t reduce = 0, apply = 0;
    for (const TrainItem& it : ts->tp.backward) {
        reduce += it.desc.op_type == "BatchNormGradReduce";
        apply += it.desc.op_type == "BatchNormGradApply";
    }
    CHECK(reduce == bn);
    CHECK(apply == bn);
    // The Relu right after a BatchNorm runs in its apply kernel (pass fuse_conv in training): the
    // stem's and each block's first; the Relus after the 8 residual Adds join them in one chain.
    size_t relu_fused = 0, relu = 0, add_relu = 0;
    for (const PlanStep& st : ts->plan->steps) {
        relu_fused += st.op_type == "BatchNormTraining" && st.desc.attrs.get_int("relu", 0) == 1;
        relu += st.op_type == "Relu";
        add_relu += is_add_relu(st);
    }
    CHECK(relu_fused == 1 + 8);
    CHECK(relu == 0);
    CHECK(add_relu == 8);
    // Without the pass: nothing in NC1HWC0, the same counts before, nothing saved.
    auto nd = setup(kResNet, false);
    for (const PlanTensor& t : nd->plan->tensors) CHECK(t.ref.format == ops::Format::ND);
    const nlohmann::json k = train_layout_json(*nd->plan, nd->tp);
    CHECK(k["backward"]["before"] == 19 + 20);
    CHECK(k["backward"]["saved"] == 0);
}

TEST_CASE("train layout: the backward in NC1HWC0 gives the all-ND plan's weight gradients (host references)") {
    for (const std::string& m : {kResNet, std::string("squeezenet?image=48&classes=10")}) {
        INFO(m);
        auto on = setup(m, true), off = setup(m, false);
        const auto a = by_name(*on), b = by_name(*off);
        REQUIRE(a.size() == b.size());
        size_t compared = 0;
        for (const auto& [name, g] : b) {
            INFO(name);
            REQUIRE(a.count(name));
            const ref::HostTensor& h = a.at(name);
            REQUIRE(h.data.size() == g.data.size());
            double scale = 0;
            for (double v : g.data) scale = std::max(scale, std::fabs(v));
            for (size_t i = 0; i < g.data.size(); ++i) {
                // Both in double, each item's output rounded to fp32: only the order of sums differs.
                CHECK(std::fabs(h.data[i] - g.data[i]) <= 1e-5 * scale + 1e-12);
                ++compared;
            }
        }
        CHECK(compared > 0);
    }
}

TEST_CASE("train backward: a ReLU after a residual Add takes its two gradients in one ReluGrad (no separate sum)") {
    // Each residual block's output is an Add + Relu chain (pass fuse_conv in training); when two
    // steps read it (the next block's two paths; not the last, read by the pooling alone) its
    // gradient is their sum. The sum's Add item becomes ReluGrad(y, a, b): one such item per such
    // chain, and no '/sum' Add feeds a ReluGrad.
    auto ts = setup(kResNet, true);
    std::map<int, int> readers;
    for (const PlanStep& st : ts->plan->steps) {
        for (int i : st.in) ++readers[i];
    }
    size_t residual = 0;
    for (const PlanStep& st : ts->plan->steps) residual += is_add_relu(st) && readers[st.out[0]] == 2;
    REQUIRE(residual > 0);
    size_t fused = 0;
    std::set<int> sums;
    for (const TrainItem& it : ts->tp.backward) {
        if (it.desc.op_type == "Add" && it.name.size() > 4 && it.name.substr(it.name.size() - 4) == "/sum")
            sums.insert(it.out[0]);
        if (it.desc.op_type != "ReluGrad") continue;
        fused += it.in.size() == 3;
        for (int t : it.in) CHECK(sums.count(t) == 0);
    }
    CHECK(fused == residual);
}
