// The fused optimizer kernels of `sfumato train-step` (runtime/ops/optim/fused_update.cpp:
// MomentumUpdate, AdamWUpdate, LambUpdate, SgdMasterUpdate) against the host rules
// (runtime/ref/optimizer.h) over two steps: the kernels run on the op rig's functional memory,
// their updated weights, the states they rewrite in place (momentum buffer, moments) and the fp32
// master weights are read back after each step and fed to the next, and everything is compared
// with the rule applied twice in double from the same start. fp32 and fp16 weights, with and
// without master weights, a gradient carrying a loss scale that the kernel's inv_scale removes,
// sizes that leave partial tiles and blocks. And the rules against their definitions.
#include <catch2/catch.hpp>
#include <cmath>

#include "op_rig.h"
#include "runtime/ref/optimizer.h"

using namespace sfumato;
using namespace sfumato::ops;
using namespace sfumato::ops::test;
using ref::ElemType;
using Kind = ref::OptimizerRule::Kind;

namespace {

// After one launch of node n on `vals`: every input as the memory holds it (states and master
// weights rewritten in place) and output 0.
struct StepOut {
    std::vector<ref::HostTensor> in;
    ref::HostTensor out;
    std::string error;
};

StepOut run_update(const NodeDesc& desc, const std::vector<ref::HostTensor>& vals, const DeviceInfo& dev) {
    StepOut r;
    NodeDesc n = desc;
    std::unique_ptr<INodeOp> op = make_node_op(n, dev);
    std::vector<TensorRef> outs = op->outputs();
    uint64_t top = 4096;
    auto place = [&](uint64_t bytes) {
        const uint64_t a = top;
        top += (std::max<uint64_t>(bytes, 1) + 511) / 512 * 512;
        return a;
    };
    for (auto& t : n.inputs) t.addr = place(t.storage_bytes());
    outs[0].addr = place(outs[0].storage_bytes());
    const uint64_t ws = op->workspace_bytes() ? place(op->workspace_bytes()) : 0;
    isa::test::TestMem mem(std::max<uint64_t>(dev.ub_bytes, 64 << 10), top + 4096);
    for (size_t i = 0; i < n.inputs.size(); ++i) {
        const auto b = ref::to_device_bytes(vals[i], n.inputs[i].dtype);
        std::copy(b.begin(), b.end(), mem.of(isa::Pos::GM).begin() + static_cast<long>(n.inputs[i].addr));
    }
    for (const KernelDesc& k : op->launches(n.inputs, outs, ws))
        for (uint32_t b = 0; b < k.block_dim; ++b) {
            kernel::test::KapiSink sink(isa::CoreKind::Vector, &mem);
            sink.set_block(b, k.block_dim);
            sink.set_buffer(isa::Pos::UB, dev.ub_bytes);
            sink.set_event_ids(dev.event_ids);
            k.body(sink);
            if (!sink.errors().empty() && r.error.empty()) r.error = k.name + ": " + sink.errors().front();
            if (!sink.flags_clear() && r.error.empty()) r.error = k.name + ": flags left set";
        }
    auto read = [&](const TensorRef& t) {
        return ref::from_device_bytes(mem.of(isa::Pos::GM).data() + t.addr, t.dtype, t.elem, t.shape);
    };
    for (const TensorRef& t : n.inputs) r.in.push_back(read(t));
    r.out = read(outs[0]);
    return r;
}

const char* op_of(Kind k) {
    switch (k) {
        case Kind::Sgd: return "SgdMasterUpdate";
        case Kind::Momentum: return "MomentumUpdate";
        case Kind::AdamW: return "AdamWUpdate";
        default: return "LambUpdate";
    }
}

// Largest |got - want| over the tolerance atol + rtol |want| (<= 1 passes).
double worst(const std::vector<double>& got, const std::vector<double>& want, double rtol, double atol) {
    REQUIRE(got.size() == want.size());
    double w = 0;
    for (size_t i = 0; i < got.size(); ++i)
        w = std::max(w, std::fabs(got[i] - want[i]) / (atol + rtol * std::fabs(want[i])));
    return w;
}

void two_steps(Kind kind, ElemType t, bool master, int64_t n) {
    const int ns = ref::OptimizerRule::states(kind);
    std::mt19937 rng(static_cast<unsigned>(11 + n + 3 * static_cast<int>(kind)));
    const double scale = 1024;  // the loss scale the gradients carry; inv_scale removes it
    ref::HostTensor w0 = random_tensor({n}, ElemType::Float, rng, -1, 1);
    ref::HostTensor p0 = w0;  // the fp32 master copy
    w0.type = t;
    ref::round_to_type(w0);
    std::vector<ref::HostTensor> vals = {w0, {}};
    for (int k = 0; k < ns; ++k) vals.push_back(ref::HostTensor(ElemType::Float, {n}));  // zero states
    if (master) vals.push_back(p0);
    std::vector<double> hw = master ? p0.data : w0.data;  // the host rule's weights and states
    std::vector<double> hs[2] = {std::vector<double>(static_cast<size_t>(n), 0.0),
                                 std::vector<double>(static_cast<size_t>(n), 0.0)};
    for (int64_t step = 1; step <= 2; ++step) {
        ref::HostTensor g = random_tensor({n}, ElemType::Float, rng, -1, 1);
        for (double& v : g.data) v *= scale;
        g.type = t;
        ref::round_to_type(g);
        vals[1] = g;
        std::vector<std::pair<std::vector<int64_t>, ElemType>> shapes = {{{n}, t}, {{n}, t}};
        for (size_t k = 2; k < vals.size(); ++k) shapes.push_back({{n}, ElemType::Float});
        NodeDesc d = node(op_of(kind), shapes);
        d.attrs.set("lr", ref::Attr::of_float(0.01));
        d.attrs.set("step", ref::Attr::of_int(step));
        d.attrs.set("inv_scale", ref::Attr::of_float(1 / scale));
        d.attrs.set("weight_decay", ref::Attr::of_float(kind == Kind::Momentum ? 1e-4 : 0.1));
        const StepOut got = run_update(d, vals, tiny_dev());
        INFO(op_of(kind) << " " << ref::elem_type_name(t) << (master ? " master" : "") << " n " << n << " step "
                         << step);
        REQUIRE(got.error.empty());
        const ref::OptimizerRule h = ref::OptimizerRule::of(kind, d.attrs);
        h.apply(hw, g.data, &hs[0], &hs[1]);
        ref::HostTensor want(t, {n});
        want.data = hw;
        ref::round_to_type(want);
        if (!master) hw = want.data;  // the device keeps W in its type between steps
        // fp32 arithmetic inside: an update to about 1e-6 of w; a 2-byte W rounds once more.
        const bool f32 = t == ElemType::Float;
        CHECK(worst(got.out.data, want.data, f32 ? 1e-5 : 2e-3, f32 ? 1e-6 : 2e-3) <= 1);
        for (int k = 0; k < ns; ++k)
            CHECK(worst(got.in[2 + static_cast<size_t>(k)].data, hs[k], 1e-4, 1e-7) <= 1);
        if (master) CHECK(worst(got.in.back().data, hw, 1e-5, 1e-6) <= 1);
        vals = got.in;  // states and master as rewritten
        vals[0] = got.out;
    }
}

}  // namespace

TEST_CASE("Fused optimizer kernels match the host rules over two steps, states read back") {
    for (Kind kind : {Kind::Momentum, Kind::AdamW, Kind::Lamb})
        for (ElemType t : {ElemType::Float, ElemType::Float16})
            for (int64_t n : {int64_t{77}, int64_t{20000}}) two_steps(kind, t, false, n);
    // Mixed precision: fp32 master weights, fp16 and bf16 compute copies.
    for (Kind kind : {Kind::Sgd, Kind::Momentum, Kind::AdamW, Kind::Lamb})
        for (ElemType t : {ElemType::Float16, ElemType::Bfloat16}) two_steps(kind, t, true, 3000);
}

TEST_CASE("Fused optimizer kernels refuse bad inputs naming the node") {
    NodeDesc bad = node("AdamWUpdate", {{{8}, ElemType::Float}, {{8}, ElemType::Float}, {{8}, ElemType::Float16},
                                        {{8}, ElemType::Float}});
    CHECK_THROWS_WITH(make_node_op(bad, tiny_dev()), Catch::Contains("AdamWUpdate_t") && Catch::Contains("fp32"));
    NodeDesc few = node("MomentumUpdate", {{{8}, ElemType::Float}, {{8}, ElemType::Float}});
    CHECK_THROWS_WITH(make_node_op(few, tiny_dev()), Catch::Contains("needs inputs W, G, B"));
    NodeDesc step0 = node("LambUpdate", {{{8}, ElemType::Float}, {{8}, ElemType::Float}, {{8}, ElemType::Float},
                                         {{8}, ElemType::Float}});
    step0.attrs.set("step", ref::Attr::of_int(0));
    CHECK_THROWS_WITH(make_node_op(step0, tiny_dev()), Catch::Contains("'step' must be at least 1"));
}

TEST_CASE("Optimizer rules: AdamW's first step, momentum's buffer, LAMB's trust ratio") {
    std::vector<double> s0(1), s1(1);
    ref::OptimizerRule a = ref::OptimizerRule::of(Kind::AdamW, {});
    a.lr = 0.01, a.wd = 0.1;
    for (double g : {0.3, -2e-3, 5.0}) {
        std::vector<double> w = {1.5};
        s0 = {0}, s1 = {0};
        a.apply(w, {g}, &s0, &s1);
        // m / (1 - b1) = g and v / (1 - b2) = g^2: the step is g / (|g| + eps).
        CHECK(w[0] == Approx(1.5 - 0.01 * (g / (std::fabs(g) + 1e-8) + 0.1 * 1.5)).epsilon(1e-12));
        CHECK(s0[0] == Approx(0.1 * g));
        CHECK(s1[0] == Approx(0.001 * g * g));
    }
    ref::OptimizerRule m = ref::OptimizerRule::of(Kind::Momentum, {});
    m.lr = 0.1;
    std::vector<double> w = {1.0};
    s0 = {0};
    m.apply(w, {2.0}, &s0, nullptr);  // b = g
    m.apply(w, {2.0}, &s0, nullptr);  // b = 0.9 * 2 + 2
    CHECK(s0[0] == Approx(3.8));
    CHECK(w[0] == Approx(1.0 - 0.1 * 2.0 - 0.1 * 3.8));
    // LAMB: the update's norm is lr |w| (trust ratio |w| / |r|) whatever the gradient's size.
    ref::OptimizerRule l = ref::OptimizerRule::of(Kind::Lamb, {});
    l.lr = 0.01, l.wd = 0;
    std::vector<double> lw = {3.0, 4.0}, ls0(2, 0.0), ls1(2, 0.0);
    l.apply(lw, {100.0, -0.5}, &ls0, &ls1);
    const double du = std::hypot(lw[0] - 3.0, lw[1] - 4.0);
    CHECK(du == Approx(0.01 * 5.0).epsilon(1e-9));
    // A zero weight takes the ratio 1.
    std::vector<double> z = {0.0, 0.0};
    ls0.assign(2, 0.0), ls1.assign(2, 0.0);
    l.apply(z, {1.0, -1.0}, &ls0, &ls1);
    CHECK(z[0] == Approx(-0.01 / (1 + 1e-6)));
}

TEST_CASE("NonFiniteCheck: a block's slot is NaN exactly when its range holds an infinity or a NaN") {
    for (ElemType t : {ElemType::Float, ElemType::Float16, ElemType::Bfloat16})
        for (int64_t n : {int64_t{5}, int64_t{1000}, int64_t{70001}}) {
            std::mt19937 rng(static_cast<unsigned>(n));
            const ref::HostTensor g = random_tensor({n}, t, rng, -60000, 60000);
            const NodeDesc d = node("NonFiniteCheck", {{{n}, t}});
            for (double bad : {0.0, double{INFINITY}, -double{INFINITY}, double{NAN}})
                for (int64_t at : {int64_t{0}, n / 2, n - 1}) {
                    ref::HostTensor v = g;
                    if (bad != 0) v.data[static_cast<size_t>(at)] = bad;
                    const StepOut got = run_update(d, {v}, tiny_dev());
                    INFO(ref::elem_type_name(t) << " n " << n << " value " << bad << " at " << at);
                    REQUIRE(got.error.empty());
                    size_t nans = 0;
                    for (double x : got.out.data) nans += std::isnan(x) ? 1 : 0;
                    CHECK(nans == (bad != 0 ? 1u : 0u));  // one block's slot, and only there
                    for (double x : got.out.data) CHECK((std::isnan(x) || x == 0));
                }
        }
}
