// The layout pass on compiled plans (no chip): a conv-bn-relu-pool-conv chain keeps NC1HWC0
// from one operator to the next with a TransData only at the graph's boundary and the saving
// reported; a Conv whose readers all need ND, or a chain broken by an operator that needs ND at
// every step, is left as it was (the pass never adds conversions).
#include <catch2/catch.hpp>

#include "runtime/graph/onnx_import.h"
#include "runtime/graph/plan.h"
#include "runtime/graph/zoo/builder.h"

using namespace sfumato;
using namespace sfumato::graph;
using ops::Format;

namespace {

constexpr int kF = onnx::TensorProto::FLOAT;

DeviceInfo test_device() {
    DeviceInfo d;
    d.arch = "split";
    d.cube_cores = 2, d.vector_cores = 4, d.aiv_per_aic = 2;
    d.ub_bytes = 192 * 1024, d.l1_bytes = 512 * 1024;
    d.l0a_bytes = d.l0b_bytes = 64 * 1024, d.l0c_bytes = 128 * 1024;
    d.functional = true;
    return d;
}

std::string conv(zoo::Builder& b, const std::string& x, int64_t cin, int64_t cout, const std::string& name) {
    const std::string w = b.weight(name + ".w", {cout, cin, 3, 3});
    return b.op("Conv", {x, w}, {zoo::ais("pads", {1, 1, 1, 1})}, name);
}

std::string batch_norm(zoo::Builder& b, const std::string& x, int64_t c) {
    const std::vector<float> ones(static_cast<size_t>(c), 1.0f), zeros(static_cast<size_t>(c), 0.1f);
    return b.op("BatchNormalization", {x, b.constant("bn.s", {c}, ones), b.constant("bn.b", {c}, zeros),
                                       b.constant("bn.m", {c}, zeros), b.constant("bn.v", {c}, ones)},
                {}, "bn");
}

// x -> conv1 -> BatchNormalization -> Relu -> MaxPool -> conv2 -> Relu -> conv3 -> y
Graph conv_chain() {
    zoo::Builder b("chain", 13, 1);
    std::string x = b.input("x", kF, {1, 20, 12, 12});
    x = b.op("Relu", {batch_norm(b, conv(b, x, 20, 24, "conv1"), 24)}, {}, "relu1");
    x = b.op("MaxPool", {x}, {zoo::ais("kernel_shape", {2, 2}), zoo::ais("strides", {2, 2})}, "pool");
    x = conv(b, b.op("Relu", {conv(b, x, 24, 24, "conv2")}, {}, "relu2"), 24, 10, "conv3");
    b.output(x, kF);
    return import_onnx_bytes(b.model().SerializeAsString(), "chain");
}

const PassReport& report(const Plan& p, const std::string& name) {
    for (const PassReport& r : p.passes)
        if (r.name == name) return r;
    FAIL("no pass report " << name);
    return p.passes.front();
}

std::vector<std::string> kernel_steps(const Plan& p) {
    std::vector<std::string> out;
    for (const PlanStep& s : p.steps)
        if (!s.view) out.push_back(s.op_type);
    return out;
}

Format in_format(const Plan& p, const PlanStep& s, size_t i) {
    return p.tensors[static_cast<size_t>(s.in.at(i))].ref.format;
}
Format out_format(const Plan& p, const PlanStep& s) {
    return p.tensors[static_cast<size_t>(s.out.at(0))].ref.format;
}

}  // namespace

TEST_CASE("layout pass: a conv-bn-relu-pool-conv chain keeps NC1HWC0, TransData only at the boundary") {
    const Graph g = conv_chain();
    const DeviceInfo dev = test_device();
    CompileOptions opt;
    const auto with = compile(g, {{1, 20, 12, 12}}, dev, opt);
    // BatchNormalization and the ReLUs fold into the Convs (fuse_conv); the rest stays NC1HWC0.
    CHECK(kernel_steps(*with) == std::vector<std::string>{"TransData", "Conv", "MaxPool", "Conv", "Conv"});
    const auto& st = with->steps;
    CHECK(in_format(*with, st[0], 0) == Format::ND);
    CHECK(with->tensors[static_cast<size_t>(st[0].in[0])].graph_input);
    for (size_t i = 1; i < 5; ++i) CHECK(in_format(*with, st[i], 0) == Format::NC1HWC0);
    for (size_t i = 0; i < 4; ++i) CHECK(out_format(*with, st[i]) == Format::NC1HWC0);
    CHECK(out_format(*with, st[4]) == Format::ND);  // the output: conv3 writes ND, no TransData after it
    CHECK(with->tensors[static_cast<size_t>(st[4].out[0])].graph_output);
    // Each Conv launches its cube kernel alone (W converted at load by the format pass).
    for (size_t i : {1u, 3u, 4u}) CHECK(st[i].kernels == 1);
    const PassReport& r = report(*with, "layout");
    CHECK(r.patterns.at("conversions before (each Conv's X)") == 3);
    CHECK(r.patterns.at("conversions after") == 1);
    CHECK(r.patterns.at("conversions saved") == 2);
    CHECK(r.patterns.at("TransData ND->NC1HWC0 (boundary)") == 1);
    CHECK(r.patterns.at("Conv in NC1HWC0") == 2);
    CHECK(r.patterns.at("Conv X in NC1HWC0, Y ND") == 1);
    CHECK(r.patterns.at("MaxPool in NC1HWC0") == 1);

    // Off: every Conv converts its own X (two kernels each), no TransData.
    opt.passes.erase("layout");
    const auto without = compile(g, {{1, 20, 12, 12}}, dev, opt);
    CHECK(kernel_steps(*without) == std::vector<std::string>{"Conv", "MaxPool", "Conv", "Conv"});
    for (const PlanStep& s : without->steps)
        if (s.op_type == "Conv") CHECK(s.kernels == 2);
    CHECK(without->kernel_count() == with->kernel_count() + 2);  // the saving the report names
}

TEST_CASE("layout pass: never adds conversions, and an unfused BatchNormalization stays NC1HWC0") {
    const DeviceInfo dev = test_device();
    CompileOptions opt;
    // conv -> Relu -> Flatten -> Gemm: an NC1HWC0 Y would only be converted back: stays ND.
    zoo::Builder b("flat", 13, 1);
    std::string x = b.input("x", kF, {1, 16, 6, 6});
    x = b.op("Flatten", {b.op("Relu", {conv(b, x, 16, 16, "c")})});
    x = b.op("Gemm", {x, b.weight("fc.w", {10, 576}), b.weight("fc.b", {10})}, {zoo::ai("transB", 1)});
    b.output(x, kF);
    const Graph g = import_onnx_bytes(b.model().SerializeAsString(), "flat");
    const auto p = compile(g, {{1, 16, 6, 6}}, dev, opt);
    for (const PlanStep& s : p->steps) CHECK(s.op_type != "TransData");
    CHECK(report(*p, "layout").patterns.at("conversions saved") == 0);
    // Unfused, BatchNormalization and the ReLUs run on NC1HWC0 between the Convs too.
    opt.passes.erase("fuse_conv");
    const Graph chain = conv_chain();
    const auto q = compile(chain, {{1, 20, 12, 12}}, dev, opt);
    opt.passes.erase("layout");
    const auto r = compile(chain, {{1, 20, 12, 12}}, dev, opt);
    CHECK(q->kernel_count() + 2 == r->kernel_count());
    const PassReport& lr = report(*q, "layout");
    CHECK(lr.patterns.at("BatchNormalization in NC1HWC0") == 1);
    CHECK(lr.patterns.at("Relu in NC1HWC0") == 2);
    CHECK(lr.patterns.at("conversions saved") == 2);
    // A TransData into NC1HWC0 feeds Convs only (an ND producer's output, read by a Conv kept in
    // NC1HWC0); one out of NC1HWC0 feeds only ops that run in ND.
    for (const PlanStep& s : q->steps) {
        if (s.op_type != "TransData") continue;
        const int out = s.out[0];
        const bool to_c0 = q->tensors[static_cast<size_t>(out)].ref.format == Format::NC1HWC0;
        for (const PlanStep& u : q->steps)
            for (size_t i = 0; i < u.in.size(); ++i)
                if (u.in[i] == out) {
                    if (to_c0) CHECK(u.op_type == "Conv");
                    for (int o : u.out)
                        if (o >= 0 && !to_c0)
                            CHECK(q->tensors[static_cast<size_t>(o)].ref.format == Format::ND);
                }
    }
}
