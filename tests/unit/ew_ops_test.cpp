// Elementwise operators without the chip model: the program builder's choices (scalar forms,
// constant blocks, conversions), the broadcast forms the tiling picks per shape, and every op
// run block by block on a functional memory against the host reference, over random shapes of
// rank 0-5 with numpy broadcasting, ragged tails and the element types ONNX allows.
#include <catch2/catch.hpp>

#include "op_rig.h"
#include "runtime/ops/ew/node.h"
#include "runtime/ops/ew/standalone_ops.h"
#include "runtime/ref/broadcast.h"

using namespace sfumato;
using namespace sfumato::ops;
using namespace sfumato::ops::test;
using ref::ElemType;

namespace {

std::vector<ref::HostTensor> random_inputs(const NodeDesc& n, std::mt19937& rng, double lo = -4, double hi = 4) {
    std::vector<ref::HostTensor> v;
    for (const auto& t : n.inputs) v.push_back(random_tensor(t.shape, t.elem, rng, lo, hi));
    return v;
}

const ew::Plan& plan_of(const NodeDesc& n, const DeviceInfo& d, std::unique_ptr<INodeOp>& keep) {
    keep = make_node_op(n, d);
    const ew::Plan* p = ew::ew_plan_of(*keep);
    REQUIRE(p);
    return *p;
}

// A random output shape and a shape that broadcasts to it.
std::pair<std::vector<int64_t>, std::vector<int64_t>> random_pair(std::mt19937& rng) {
    std::uniform_int_distribution<int> rank(0, 5), small(1, 6), coin(0, 9);
    const int r = rank(rng);
    std::vector<int64_t> a, b;
    for (int i = 0; i < r; ++i) {
        const int c = coin(rng);
        a.push_back(c == 0 ? 37 : c == 1 ? 130 : small(rng));
    }
    const int drop = r ? std::uniform_int_distribution<int>(0, r)(rng) : 0;
    for (int i = drop; i < r; ++i) b.push_back(coin(rng) < 4 ? 1 : a[static_cast<size_t>(i)]);
    if (coin(rng) < 3) std::swap(a, b);  // the broadcast operand first, sometimes
    return {a, b};
}

}  // namespace

TEST_CASE("ew program: immediates become vector-scalar instructions or constant blocks") {
    using ew::InKind;
    std::vector<ew::InputDesc> in(2);
    in[0].storage = isa::DType::FP32;
    in[1].storage = isa::DType::FP32;
    in[1].kind = InKind::Imm;
    in[1].imm = 3.0;
    auto prog = [&](const std::string& op) {
        return ew::build_ew_program({"n", op, 17, {}}, in, isa::DType::FP32, ElemType::Float).text();
    };
    CHECK(prog("Add").find("vadds") != std::string::npos);
    CHECK(prog("Sub").find("vadds") != std::string::npos);  // x - 3 = x + (-3), exactly
    CHECK(prog("Div").find("vdiv") != std::string::npos);   // 1/3 is inexact: a constant block
    CHECK(prog("Div").find("c(3") != std::string::npos);
    in[1].imm = 4.0;
    CHECK(prog("Div").find("vmuls") != std::string::npos);  // 1/4 is exact
    CHECK(prog("Pow").find("vmul ") == std::string::npos);
}

TEST_CASE("ew program: bf16 computes in fp32, fp16 simple ops in fp16") {
    std::vector<ew::InputDesc> in(2);
    in[0].storage = in[1].storage = isa::DType::BF16;
    in[0].elem = in[1].elem = ElemType::Bfloat16;
    const std::string t = ew::build_ew_program({"n", "Add", 17, {}}, in, isa::DType::BF16, ElemType::Bfloat16).text();
    CHECK(t.find("vconv") != std::string::npos);
    CHECK(t.find("vadd t2.fp32 <- t0.fp32, t1.fp32") != std::string::npos);  // out of place (UB bank rules)
    in[0].storage = in[1].storage = isa::DType::FP16;
    in[0].elem = in[1].elem = ElemType::Float16;
    const std::string h = ew::build_ew_program({"n", "Add", 17, {}}, in, isa::DType::FP16, ElemType::Float16).text();
    CHECK(h == "vadd out.fp16 <- in0.fp16, in1.fp16\n");
}

TEST_CASE("ew plan: the broadcast form follows the shape") {
    std::unique_ptr<INodeOp> keep;
    const DeviceInfo d = b910_dev();
    {  // a row broadcast: one row replicated in UB once per core
        const ew::Plan& p = plan_of(node("Add", {{{4096, 1024}, ElemType::Float16}, {{1, 1024}, ElemType::Float16}}), d, keep);
        CHECK(p.in[0].form == ew::Form::Stream);
        CHECK(p.in[1].form == ew::Form::Row);
        CHECK_FALSE(p.chunk);
        CHECK(p.block_dim == 48);
        CHECK(keep->describe().find("repeat-the-row load") != std::string::npos);
    }
    {  // rows too long for a tile: the row stays resident and is re-read (stride 0)
        const ew::Plan& p = plan_of(node("Mul", {{{64, 40000}, ElemType::Float}, {{40000}, ElemType::Float}}), d, keep);
        CHECK(p.chunk);
        CHECK(p.in[1].form == ew::Form::Row);
        CHECK(keep->describe().find("stride-0 read") != std::string::npos);
    }
    {  // a runtime scalar: one block read with stride 0
        const ew::Plan& p = plan_of(node("Sub", {{{100000}, ElemType::Float16}, {{}, ElemType::Float16}}), d, keep);
        CHECK(p.in[1].form == ew::Form::Scalar);
        CHECK(keep->describe().find("scalar operand") != std::string::npos);
    }
    {  // a constant scalar: an immediate
        NodeDesc n = node("Mul", {{{100000}, ElemType::Float16}, {{1}, ElemType::Float16}});
        auto c = std::make_shared<ref::HostTensor>(ElemType::Float16, std::vector<int64_t>{1});
        c->data[0] = 0.5;
        n.constants = {nullptr, c};
        const ew::Plan& p = plan_of(n, d, keep);
        CHECK(p.in[1].form == ew::Form::Imm);
        CHECK(p.prog.text().find("vmuls") != std::string::npos);
    }
    {  // a channel bias over NCHW: one value per row
        const ew::Plan& p = plan_of(node("Add", {{{2, 64, 56, 56}, ElemType::Float16}, {{64, 1, 1}, ElemType::Float16}}), d, keep);
        CHECK(p.in[1].form == ew::Form::Col);
        CHECK(p.L == 56 * 56);
    }
    {  // same shapes merge into one flat row split over every core
        const ew::Plan& p = plan_of(node("Add", {{{8, 1024, 1024}, ElemType::Float16}, {{8, 1024, 1024}, ElemType::Float16}}), d, keep);
        CHECK(p.R == 1);
        CHECK(p.chunk);
        CHECK(p.block_dim == 48);
        CHECK(keep->describe().find("same shape") != std::string::npos);
    }
}

TEST_CASE("ew ops: bad inputs name the culprit") {
    const DeviceInfo d = tiny_dev();
    CHECK_THROWS_WITH(make_node_op(node("Add", {{{3, 4}, ElemType::Float}, {{5}, ElemType::Float}}), d),
                      Catch::Contains("cannot broadcast input 1 [5]"));
    CHECK_THROWS_AS(make_node_op(node("Exp", {{{3, 4}, ElemType::Int32}}), d), UnsupportedError);
    CHECK_THROWS_WITH(make_node_op(node("Exp", {{{3, 4}, ElemType::Int32}}), d), Catch::Contains("Exp"));
    NodeDesc u = node("Add", {{{3}, ElemType::Float}, {{3}, ElemType::Float}});
    u.inputs[0].elem = ElemType::Uint16;
    CHECK_THROWS_AS(make_node_op(u, d), UnsupportedError);
}

TEST_CASE("ew ops: every op on random broadcast shapes matches the reference") {
    std::mt19937 rng(7);
    const DeviceInfo dev = tiny_dev();
    struct Case {
        const char* op;
        int arity;
        std::vector<ElemType> types;
        double lo, hi;
    };
    const std::vector<Case> cases = {
        {"Add", 2, {ElemType::Float16, ElemType::Float, ElemType::Bfloat16, ElemType::Int32, ElemType::Uint8}, -4, 4},
        {"Sub", 2, {ElemType::Float16, ElemType::Int8}, -4, 4},
        {"Mul", 2, {ElemType::Float, ElemType::Int16}, -4, 4},
        {"Div", 2, {ElemType::Float, ElemType::Float16}, 0.5, 4},
        {"Pow", 2, {ElemType::Float}, 0.5, 2},
        {"Max", 2, {ElemType::Float16, ElemType::Int32}, -4, 4},
        {"Min", 2, {ElemType::Bfloat16}, -4, 4},
        {"PRelu", 2, {ElemType::Float}, -4, 4},
        {"Equal", 2, {ElemType::Int32}, -0.3, 0.3},
        {"Less", 2, {ElemType::Float16}, -4, 4},
        {"GreaterOrEqual", 2, {ElemType::Float}, -4, 4},
        {"Where", 3, {ElemType::Float16, ElemType::Int32}, -4, 4},
    };
    for (const Case& c : cases)
        for (ElemType t : c.types)
            for (int rep = 0; rep < 4; ++rep) {
                auto [a, b] = random_pair(rng);
                std::vector<std::pair<std::vector<int64_t>, ElemType>> ins = {{a, t}, {b, t}};
                if (c.arity == 3) ins.insert(ins.begin(), {b.size() > a.size() ? a : b, ElemType::Bool});
                if (std::string(c.op) == "PRelu" && !ref::broadcasts_to(b, a)) std::swap(ins[0].first, ins[1].first);
                if (std::string(c.op) == "PRelu" && !ref::broadcasts_to(ins[1].first, ins[0].first)) continue;
                NodeDesc n = node(c.op, ins);
                const auto vals = random_inputs(n, rng, c.lo, c.hi);
                const RigResult r = run_node(n, vals, dev, ew::ew_tolerance(c.op, t));
                INFO(c.op << " " << ref::elem_type_name(t) << " " << ref::shape_str(a) << " with " << ref::shape_str(b) << ": "
                          << r.describe);
                CHECK(r.why == "");
                CHECK(r.passed);
            }
}

TEST_CASE("ew ops: unary activations match the reference (fp32, fp16, bf16)") {
    std::mt19937 rng(11);
    const DeviceInfo dev = tiny_dev();
    const std::vector<std::string> ops = {"Relu", "LeakyRelu", "Sigmoid", "Tanh",       "Gelu",    "Erf",        "Exp",
                                          "Neg",  "Abs",       "Elu",     "HardSigmoid", "HardSwish", "Softplus", "Selu",
                                          "Softsign", "Sign", "Floor", "Ceil", "Round"};
    for (const std::string& op : ops)
        for (ElemType t : {ElemType::Float, ElemType::Float16, ElemType::Bfloat16}) {
            NodeDesc n = node(op, {{{3, 130}, t}});
            const auto vals = random_inputs(n, rng, -6, 6);
            const RigResult r = run_node(n, vals, dev, ew::ew_tolerance(op, t));
            INFO(op << " " << ref::elem_type_name(t) << ": " << r.why);
            CHECK(r.passed);
        }
    for (std::string op : {"Log", "Sqrt", "Reciprocal"}) {
        NodeDesc n = node(op, {{{517}, ElemType::Float}});
        const RigResult r = run_node(n, random_inputs(n, rng, 0.01, 9), dev, ew::ew_tolerance(op, ElemType::Float));
        INFO(op << ": " << r.why);
        CHECK(r.passed);
    }
    // Tanh and Erf near zero (the polynomial branch) and far out (saturation).
    for (std::string op : {"Tanh", "Erf", "Gelu", "Sigmoid"}) {
        NodeDesc n = node(op, {{{256}, ElemType::Float}});
        ref::HostTensor x(ElemType::Float, {256});
        for (size_t i = 0; i < 256; ++i) x.data[i] = (static_cast<double>(i) - 128) * (i % 2 ? 1e-3 : 0.2);
        ref::round_to_type(x);
        const RigResult r = run_node(n, {x}, dev, ew::ew_tolerance(op, ElemType::Float));
        INFO(op << ": " << r.why);
        CHECK(r.passed);
    }
}

TEST_CASE("ew ops: Clip, Cast, logical ops and chains") {
    std::mt19937 rng(3);
    const DeviceInfo dev = tiny_dev();
    {  // Clip with runtime scalar bounds (opset 13) and with attributes (opset 6)
        NodeDesc n = node("Clip", {{{4, 33}, ElemType::Float16}, {{}, ElemType::Float16}, {{}, ElemType::Float16}}, 13);
        auto v = random_inputs(n, rng);
        v[1].data[0] = -1, v[2].data[0] = 2;
        CHECK(run_node(n, v, dev, ew::ew_tolerance("Clip", ElemType::Float16)).passed);
        NodeDesc m = node("Clip", {{{4, 33}, ElemType::Float}, {{}, ElemType::Float}, {{}, ElemType::Float}}, 13);
        m.inputs[1].present = false;
        CHECK(run_node(m, random_inputs(m, rng), dev, {0, 0}).passed);
        NodeDesc o = node("Clip", {{{70}, ElemType::Int8}}, 6);
        o.attrs.set("min", ref::Attr::of_float(-3));
        o.attrs.set("max", ref::Attr::of_float(5));
        CHECK(run_node(o, random_inputs(o, rng), dev, {0, 0}).passed);
    }
    for (auto [from, to] : std::vector<std::pair<ElemType, ElemType>>{{ElemType::Float, ElemType::Float16},
                                                                       {ElemType::Float16, ElemType::Float},
                                                                       {ElemType::Float, ElemType::Bfloat16},
                                                                       {ElemType::Float, ElemType::Int32},
                                                                       {ElemType::Int32, ElemType::Float16},
                                                                       {ElemType::Float, ElemType::Bool},
                                                                       {ElemType::Bool, ElemType::Float},
                                                                       {ElemType::Uint8, ElemType::Int32},
                                                                       {ElemType::Int64, ElemType::Int32}}) {
        NodeDesc n = node("Cast", {{{5, 41}, from}});
        n.attrs.set("to", ref::Attr::of_int(static_cast<int64_t>(to)));
        const RigResult r = run_node(n, random_inputs(n, rng, -9, 9), dev, {0, 0});
        INFO(ref::elem_type_name(from) << " -> " << ref::elem_type_name(to) << ": " << r.why);
        CHECK(r.passed);
    }
    for (const char* op : {"And", "Or", "Xor"}) {
        NodeDesc n = node(op, {{{3, 4, 5}, ElemType::Bool}, {{4, 1}, ElemType::Bool}});
        CHECK(run_node(n, random_inputs(n, rng), dev, {0, 0}).passed);
    }
    {
        NodeDesc n = node("Not", {{{77}, ElemType::Bool}});
        CHECK(run_node(n, random_inputs(n, rng), dev, {0, 0}).passed);
    }
    {  // x * 0.5 -> + bias -> Gelu -> * scale (a fused MLP epilogue)
        NodeDesc n = node("ElementwiseChain", {{{6, 96}, ElemType::Float16}, {{}, ElemType::Float16},
                                               {{96}, ElemType::Float16}, {{6, 1}, ElemType::Float16}});
        ref::Attr p;
        p.kind = ref::Attr::Kind::Strings;
        p.strings = {"Mul", "Add", "Gelu", "Mul swap=1", "LeakyRelu alpha=0.2"};
        n.attrs.set("program", p);
        const RigResult r = run_node(n, random_inputs(n, rng), dev, ew::ew_tolerance("ElementwiseChain", ElemType::Float16));
        INFO(r.why);
        CHECK(r.passed);
    }
    {  // variadic Max over three inputs, Mean over two
        NodeDesc n = node("Max", {{{2, 3}, ElemType::Float}, {{3}, ElemType::Float}, {{2, 1}, ElemType::Float}});
        CHECK(run_node(n, random_inputs(n, rng), dev, {0, 0}).passed);
        NodeDesc m = node("Mean", {{{40}, ElemType::Float}, {{40}, ElemType::Float}, {{40}, ElemType::Float}});
        CHECK(run_node(m, random_inputs(m, rng), dev, ew::ew_tolerance("Mean", ElemType::Float)).passed);
    }
}

TEST_CASE("ew ops: 910B-like tiles (large UB, many cores) and an empty output") {
    std::mt19937 rng(5);
    const DeviceInfo dev = b910_dev();
    NodeDesc n = node("Add", {{{300, 1000}, ElemType::Float16}, {{1000}, ElemType::Float16}});
    const RigResult r = run_node(n, random_inputs(n, rng), dev, {0, 0}, false);
    INFO(r.why << " " << r.describe);
    CHECK(r.passed);
    NodeDesc e = node("Relu", {{{0, 5}, ElemType::Float}});
    auto op = make_node_op(e, dev);
    CHECK(op->launches(e.inputs, op->outputs(), 0).empty());
}

TEST_CASE("ew ops: training ops (ReluGrad, LossGrad, SgdUpdate, ClipGrad, MovingAverage, GeluGrad) match the host reference") {
    std::mt19937 rng(13);
    const DeviceInfo dev = tiny_dev();
    for (const char* op : {"ReluGrad", "LossGrad", "SgdUpdate", "ClipGrad", "MovingAverage", "GeluGrad", "GeluGradTanh"})
        for (ElemType t : {ElemType::Float, ElemType::Float16, ElemType::Bfloat16})
            for (const auto& shapes : std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>{
                     {{3, 130}, {3, 130}}, {{517}, {517}}, {{4, 37}, {1, 37}}}) {
                const bool tanh_form = std::string(op) == "GeluGradTanh";
                NodeDesc n = node(tanh_form ? "GeluGrad" : op, {{shapes.first, t}, {shapes.second, t}});
                if (tanh_form) n.attrs.set("approximate", ref::Attr::of_string("tanh"));
                if (std::string(op) == "LossGrad") n.attrs.set("scale", ref::Attr::of_float(0.125));
                if (std::string(op) == "SgdUpdate") n.attrs.set("lr", ref::Attr::of_float(0.05));
                if (std::string(op) == "MovingAverage") n.attrs.set("momentum", ref::Attr::of_float(0.875));
                if (std::string(op) == "ClipGrad") {
                    n.attrs.set("min", ref::Attr::of_float(-1.5));
                    n.attrs.set("max", ref::Attr::of_float(2));
                }
                const auto vals = random_inputs(n, rng, -4, 4);
                const RigResult r = run_node(n, vals, dev, ew::ew_tolerance(n.op_type, t));
                INFO(op << " " << ref::elem_type_name(t) << " " << ref::shape_str(shapes.first) << ": " << r.why << " "
                        << r.describe);
                CHECK(r.why == "");
                CHECK(r.passed);
            }
    // GeluGrad's host reference is the derivative of Gelu's: central differences of the Gelu
    // reference at a few points, both forms.
    for (const char* form : {"none", "tanh"})
        for (double x : {-3.0, -0.7, 0.0, 0.3, 1.9}) {
            ref::RefNode g;
            g.name = "g", g.op_type = "Gelu";
            g.attrs.set("approximate", ref::Attr::of_string(form));
            auto at = [&](double v) {
                ref::HostTensor t(ElemType::Double, {1});
                t.data[0] = v;
                return ref::run_ref(g, {&t})[0].data[0];
            };
            ref::HostTensor xt(ElemType::Double, {1}), one(ElemType::Double, {1});
            xt.data[0] = x, one.data[0] = 1;
            ref::RefNode d = g;
            d.op_type = "GeluGrad";
            const double fd = (at(x + 1e-6) - at(x - 1e-6)) / 2e-6;
            INFO(form << " x " << x);
            CHECK(ref::run_ref(d, {&xt, &one})[0].data[0] == Approx(fd).margin(1e-8));
        }
    // ReluGrad passes the gradient exactly where y > 0 and zeroes it elsewhere (y = 0 included).
    NodeDesc n = node("ReluGrad", {{{8}, ElemType::Float}, {{8}, ElemType::Float}});
    ref::HostTensor y(ElemType::Float, {8}), dy(ElemType::Float, {8});
    for (size_t i = 0; i < 8; ++i) {
        y.data[i] = static_cast<double>(i) - 4;
        dy.data[i] = 0.5 + static_cast<double>(i);
    }
    const RigResult r = run_node(n, {y, dy}, dev, {0, 0});
    CHECK(r.passed);
    ref::RefNode rn;
    rn.name = "g";
    rn.op_type = "ReluGrad";
    const auto want = ref::run_ref(rn, {&y, &dy});
    for (size_t i = 0; i < 8; ++i) CHECK(want[0].data[i] == (i > 4 ? dy.data[i] : 0.0));
    // With a second gradient (the residual Add's sum fused in): y > 0 ? dy + dy2 : 0, the sum
    // rounded to dy's type as a separate Add would; the kernel over fp16 and fp32 tilings.
    ref::HostTensor dy2(ElemType::Float, {8});
    for (size_t i = 0; i < 8; ++i) dy2.data[i] = 0.25 * static_cast<double>(i) - 1;
    const auto want2 = ref::run_ref(rn, {&y, &dy, &dy2});
    for (size_t i = 0; i < 8; ++i) CHECK(want2[0].data[i] == (i > 4 ? dy.data[i] + dy2.data[i] : 0.0));
    for (ElemType t : {ElemType::Float, ElemType::Float16})
        for (const std::vector<int64_t>& s : {std::vector<int64_t>{517}, std::vector<int64_t>{3, 2, 130}}) {
            NodeDesc n3 = node("ReluGrad", {{s, t}, {s, t}, {s, t}});
            const RigResult r3 = run_node(n3, random_inputs(n3, rng, -4, 4), dev, ew::ew_tolerance("Add", t));
            INFO(ref::elem_type_name(t) << " " << ref::shape_str(s) << ": " << r3.why);
            CHECK(r3.why == "");
            CHECK(r3.passed);
        }
    // ClipGrad (ReLU6: Clip(0, 6)) passes it strictly inside the bounds: y in {-4, ..., 3} at 0
    // and a bound of 2: only y = 1 passes.
    NodeDesc c = node("ClipGrad", {{{8}, ElemType::Float}, {{8}, ElemType::Float}});
    c.attrs.set("min", ref::Attr::of_float(0));
    c.attrs.set("max", ref::Attr::of_float(2));
    CHECK(run_node(c, {y, dy}, dev, {0, 0}).passed);
    rn.op_type = "ClipGrad";
    rn.attrs = c.attrs;
    const auto clipped = ref::run_ref(rn, {&y, &dy});
    for (size_t i = 0; i < 8; ++i) CHECK(clipped[0].data[i] == (i == 5 ? dy.data[i] : 0.0));
}

TEST_CASE("ew ops: ActivationGrad (the backward of each unary activation) matches the host reference, and the host reference is the forward's derivative") {
    std::mt19937 rng(29);
    const DeviceInfo dev = tiny_dev();
    const std::vector<std::string> acts = {"Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "LeakyRelu",
                                           "Elu", "Selu", "Softplus", "Softsign", "Erf",
                                           "Exp", "Log", "Sqrt", "Reciprocal", "Abs"};
    auto with_attrs = [](ref::Attrs& a, const std::string& f) {
        a.set("activation", ref::Attr::of_string(f));
        if (f == "HardSigmoid") a.set("alpha", ref::Attr::of_float(0.25)), a.set("beta", ref::Attr::of_float(0.375));
        if (f == "LeakyRelu") a.set("alpha", ref::Attr::of_float(0.125));
        if (f == "Elu") a.set("alpha", ref::Attr::of_float(0.75));
    };
    for (const std::string& f : acts)
        for (ElemType t : {ElemType::Float, ElemType::Float16, ElemType::Bfloat16})
            for (const auto& shapes : std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>{
                     {{3, 130}, {3, 130}}, {{517}, {517}}}) {
                NodeDesc n = node("ActivationGrad", {{shapes.first, t}, {shapes.second, t}});
                with_attrs(n.attrs, f);
                // Log, Sqrt and Reciprocal away from 0 (their derivatives' poles); the others
                // over [-6, 6], across HardSigmoid's and HardSwish's corners.
                const bool pos = f == "Log" || f == "Sqrt" || f == "Reciprocal";
                auto vals = random_inputs(n, rng, -6, 6);
                vals[0] = random_tensor(shapes.first, t, rng, pos ? 0.25 : -6, pos ? 4 : 6);
                const RigResult r = run_node(n, vals, dev, ew::ew_tolerance(n.op_type, t));
                INFO(f << " " << ref::elem_type_name(t) << " " << ref::shape_str(shapes.first) << ": " << r.why << " "
                       << r.describe);
                CHECK(r.why == "");
                CHECK(r.passed);
            }
    // The host reference against central differences of each forward reference (points off the
    // corners), so the kernel above is checked against the derivative itself.
    for (const std::string& f : acts)
        for (double x : {-4.5, -2.2, -0.7, 0.3, 1.9, 3.4}) {
            const double at = f == "Log" || f == "Sqrt" || f == "Reciprocal" ? std::fabs(x) : x;
            ref::RefNode g;
            g.name = "g", g.op_type = f;
            ref::Attrs fa;
            with_attrs(fa, f);
            for (const char* k : {"alpha", "beta"})
                if (fa.has(k)) g.attrs.set(k, *fa.find(k));
            auto fwd = [&](double v) {
                ref::HostTensor t(ElemType::Double, {1});
                t.data[0] = v;
                return ref::run_ref(g, {&t})[0].data[0];
            };
            ref::HostTensor xt(ElemType::Double, {1}), one(ElemType::Double, {1});
            xt.data[0] = at, one.data[0] = 1;
            ref::RefNode d;
            d.name = "d", d.op_type = "ActivationGrad", d.attrs = fa;
            const double fd = (fwd(at + 1e-6) - fwd(at - 1e-6)) / 2e-6;
            INFO(f << " x " << at);
            CHECK(ref::run_ref(d, {&xt, &one})[0].data[0] == Approx(fd).epsilon(1e-6).margin(1e-7));
        }
    // An activation without a derivative is refused naming the node and the attribute.
    NodeDesc bad = node("ActivationGrad", {{{8}, ElemType::Float}, {{8}, ElemType::Float}});
    bad.attrs.set("activation", ref::Attr::of_string("Floor"));
    try {
        (void)make_node_op(bad, dev);
        FAIL("ActivationGrad of Floor was accepted");
    } catch (const InputError& e) {
        CHECK(std::string(e.what()).find("'Floor'") != std::string::npos);
    }
}

TEST_CASE("ew ops: an fp32 chain over 2-byte and fp32 operands (the BatchNorm backward's) matches the host reference") {
    // ((x - mean) k1 + dy + k2) k3 with x, dy fp16 and the channel vectors fp32, computed in fp32
    // and rounded once; and (x - mean) dy.
    std::mt19937 rng(17);
    const DeviceInfo dev = tiny_dev();
    ref::Attr p;
    p.kind = ref::Attr::Kind::Strings;
    for (ElemType t : {ElemType::Float16, ElemType::Bfloat16, ElemType::Float}) {
        NodeDesc n = node("ElementwiseChain", {{{2, 5, 3, 7}, t}, {{5, 1, 1}, ElemType::Float}, {{5, 1, 1}, ElemType::Float},
                                               {{2, 5, 3, 7}, t}, {{5, 1, 1}, ElemType::Float}, {{5, 1, 1}, ElemType::Float}});
        p.strings = {"Sub", "Mul", "Add", "Add", "Mul"};
        n.attrs.set("program", p);
        n.attrs.set("fp32", ref::Attr::of_int(1));
        RigResult r = run_node(n, random_inputs(n, rng), dev, ew::ew_tolerance("ElementwiseChain", t));
        INFO(ref::elem_type_name(t) << ": " << r.why);
        CHECK(r.passed);
        NodeDesc m = node("ElementwiseChain", {{{2, 5, 3, 7}, t}, {{5, 1, 1}, ElemType::Float}, {{2, 5, 3, 7}, t}});
        p.strings = {"Sub", "Mul"};
        m.attrs.set("program", p);
        m.attrs.set("fp32", ref::Attr::of_int(1));
        r = run_node(m, random_inputs(m, rng), dev, ew::ew_tolerance("ElementwiseChain", t));
        INFO(r.why);
        CHECK(r.passed);
    }
}

TEST_CASE("ew ops: a tile narrower than 256 elements (five operands in a small UB) writes no further than its buffers") {
    // The GroupNorm backward's dX chain ((g - xhat m2) - m1) inv over fp16 rows of 256 with fp32
    // per-row vectors: in 32 KiB of UB the tile is under 256 elements, and a step that computed
    // whole 256-element repeats wrote past its slot into the next one, which a later step read.
    std::mt19937 rng(29);
    const DeviceInfo dev = tiny_dev();
    ref::Attr p;
    p.kind = ref::Attr::Kind::Strings;
    p.strings = {"Mul", "Sub swap=1", "Sub", "Mul"};
    const std::vector<int64_t> rows = {2, 4, 256}, col = {2, 4, 1};
    NodeDesc n = node("ElementwiseChain", {{rows, ElemType::Float16}, {col, ElemType::Float}, {rows, ElemType::Float16},
                                           {col, ElemType::Float}, {col, ElemType::Float}});
    n.attrs.set("program", p);
    n.attrs.set("fp32", ref::Attr::of_int(1));
    std::unique_ptr<INodeOp> keep;
    const ew::Plan& plan = plan_of(n, dev, keep);
    INFO(plan.prog.text() << "tile " << plan.T << (plan.chunk ? " (chunks of a row)" : " (rows)"));
    REQUIRE(plan.T < 256);  // the case this covers
    REQUIRE(plan.prog.slot_bits.size() >= 2);
    const RigResult r = run_node(n, random_inputs(n, rng), dev, ew::ew_tolerance("ElementwiseChain", ElemType::Float16));
    INFO(r.why);
    CHECK(r.passed);
}
