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

TEST_CASE("layout pass: on a coupled part (Conv results through UB) the chain keeps NC1HWC0 as on a split one") {
    const Graph g = conv_chain();
    DeviceInfo dev = test_device();
    CompileOptions opt;
    const auto split = compile(g, {{1, 20, 12, 12}}, dev, opt);
    dev.arch = "coupled";
    dev.vector_cores = dev.cube_cores, dev.aiv_per_aic = 0;
    dev.event_ids = 4;
    const auto coupled = compile(g, {{1, 20, 12, 12}}, dev, opt);
    CHECK(kernel_steps(*coupled) == kernel_steps(*split));
    for (size_t i = 0; i < coupled->steps.size(); ++i) {
        const PlanStep& c = coupled->steps[i];
        CHECK(c.op_type == split->steps[i].op_type);
        CHECK(out_format(*coupled, c) == out_format(*split, split->steps[i]));
        if (c.op_type == "Conv") CHECK(c.kernels == 1);
    }
    const PassReport& r = report(*coupled, "layout");
    CHECK(r.patterns.at("Conv in NC1HWC0") == 2);
    CHECK(r.patterns.at("conversions saved") == report(*split, "layout").patterns.at("conversions saved"));
    CHECK(r.patterns.at("conversions saved") == 2);
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

namespace {

// x -> conv1 -> Relu -> conv2 (c2 channels) -> GlobalAveragePool -> Flatten -> Gemm -> y
Graph conv_gap_gemm(int64_t c2) {
    zoo::Builder b("gap", 13, 1);
    std::string x = b.input("x", kF, {1, 16, 6, 6});
    x = conv(b, b.op("Relu", {conv(b, x, 16, 32, "conv1")}, {}, "relu1"), 32, c2, "conv2");
    x = b.op("Flatten", {b.op("GlobalAveragePool", {x}, {}, "gap")}, {}, "flatten");
    x = b.op("Gemm", {x, b.weight("fc.w", {10, c2}), b.weight("fc.b", {10})}, {zoo::ai("transB", 1)}, "fc");
    b.output(x, kF);
    return import_onnx_bytes(b.model().SerializeAsString(), "gap");
}

}  // namespace

TEST_CASE("layout pass: global pooling follows NC1HWC0, back to ND as a view when the bytes are the same") {
    const DeviceInfo dev = test_device();
    for (const Precision prec : {Precision::FP32, Precision::Mixed}) {
        CompileOptions opt;
        opt.precision = prec;
        INFO("mixed " << (prec == Precision::Mixed));
        // 32 channels: whole C0 blocks (C0 = 8 in fp32, 16 in fp16), so NC1HWC0 [1, C1, 1, 1, C0]
        // is ND [1, 32]: GlobalAveragePool runs on NC1HWC0 and Flatten reads a view of it.
        const Graph g = conv_gap_gemm(32);
        const auto p = compile(g, {{1, 16, 6, 6}}, dev, opt);
        CHECK(kernel_steps(*p) ==
              std::vector<std::string>{"TransData", "Conv", "Conv", "GlobalAveragePool", "Gemm"});
        int transdata = 0, gap_step = -1;
        for (size_t i = 0; i < p->steps.size(); ++i) {
            transdata += p->steps[i].op_type == "TransData";
            if (p->steps[i].op_type == "GlobalAveragePool") gap_step = static_cast<int>(i);
        }
        REQUIRE(gap_step >= 0);
        const PlanStep& gap = p->steps[static_cast<size_t>(gap_step)];
        CHECK(in_format(*p, gap, 0) == Format::NC1HWC0);
        CHECK(out_format(*p, gap) == Format::NC1HWC0);
        // Gemm reads ND through views (the conversion, then Flatten) of the pooled tensor.
        const PlanStep& fc = p->steps.back();
        int t = fc.in.at(0);
        CHECK(p->tensors[static_cast<size_t>(t)].ref.format == Format::ND);
        while (p->tensors[static_cast<size_t>(t)].kind == PlanTensor::Kind::View)
            t = p->tensors[static_cast<size_t>(t)].base;
        CHECK(t == gap.out.at(0));
        const PassReport& r = report(*p, "layout");
        CHECK(r.patterns.at("GlobalAveragePool in NC1HWC0") == 1);
        CHECK(r.patterns.at("NC1HWC0->ND as a view (same bytes)") == 1);
        CHECK(r.patterns.at("conversions before (each Conv's X)") == 2);
        CHECK(r.patterns.at("conversions after") == transdata);
        CHECK(r.patterns.at("conversions saved") == 2 - transdata);
        // Mixed precision keeps GlobalAveragePool in the low type (its kernel sums in fp32): no Cast.
        for (const PlanStep& s : p->steps) CHECK(s.op_type != "Cast");

        // 20 channels: a partial C0 block, so back to ND would be a TransData: conv2 writes ND
        // and the pooling runs on ND (the pass never adds a conversion).
        const auto q = compile(conv_gap_gemm(20), {{1, 16, 6, 6}}, dev, opt);
        CHECK(kernel_steps(*q) ==
              std::vector<std::string>{"TransData", "Conv", "Conv", "GlobalAveragePool", "Gemm"});
        for (const PlanStep& s : q->steps)
            if (s.op_type == "GlobalAveragePool") CHECK(in_format(*q, s, 0) == Format::ND);
        CHECK(report(*q, "layout").patterns.count("NC1HWC0->ND as a view (same bytes)") == 0);
        CHECK(report(*q, "layout").patterns.at("Conv X in NC1HWC0, Y ND") == 1);
    }
}

TEST_CASE("layout pass: a residual Add and a channel Concat keep NC1HWC0, one TransData per boundary") {
    // x -> conv1 -> Relu -> a;  conv2(a) + a -> Relu -> r;  Concat(r, conv3(a)) -> conv4 -> y
    zoo::Builder b("res", 13, 1);
    std::string x = b.input("x", kF, {1, 16, 8, 8});
    const std::string a = b.op("Relu", {conv(b, x, 16, 32, "conv1")}, {}, "relu1");
    const std::string r =
        b.op("Relu", {b.op("Add", {conv(b, a, 32, 32, "conv2"), a}, {}, "add")}, {}, "relu2");
    const std::string cat = b.op("Concat", {r, conv(b, a, 32, 16, "conv3")}, {zoo::ai("axis", 1)}, "cat");
    b.output(conv(b, cat, 48, 8, "conv4"), kF);
    const Graph g = import_onnx_bytes(b.model().SerializeAsString(), "res");
    const DeviceInfo dev = test_device();
    CompileOptions opt;
    const auto p = compile(g, {{1, 16, 8, 8}}, dev, opt);
    int transdata = 0, convs = 0;
    for (const PlanStep& s : p->steps) {
        if (s.view) continue;
        if (s.op_type == "TransData") {
            ++transdata;
            CHECK(p->tensors[static_cast<size_t>(s.in.at(0))].graph_input);  // only the input's
            continue;
        }
        // Every kernel step reads its data in NC1HWC0: the Convs, the fused Add+Relu, the Concat.
        CHECK(in_format(*p, s, 0) == Format::NC1HWC0);
        if (s.op_type == "Conv") {
            ++convs;
            CHECK(s.kernels == 1);
        }
        if (s.op_type != "Conv" && s.op_type != "TransData")
            for (size_t i = 0; i < s.in.size(); ++i) CHECK(in_format(*p, s, i) == Format::NC1HWC0);
    }
    CHECK(transdata == 1);
    CHECK(convs == 4);
    const PassReport& rep = report(*p, "layout");
    CHECK(rep.patterns.at("Concat in NC1HWC0") == 1);
    CHECK(rep.patterns.at("conversions before (each Conv's X)") == convs);
    CHECK(rep.patterns.at("conversions after") == transdata);
    CHECK(rep.patterns.at("conversions saved") == convs - transdata);
    // The output Conv writes ND (the graph output needs it): no TransData after it.
    CHECK(out_format(*p, p->steps.back()) == Format::ND);
    opt.passes.erase("layout");
    const auto q = compile(g, {{1, 16, 8, 8}}, dev, opt);
    CHECK(q->kernel_count() == p->kernel_count() + static_cast<size_t>(convs - transdata));
}
