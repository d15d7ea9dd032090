// Graph compilation without a chip: lowering, memory planning (liveness-based
// reuse, correct on several streams), stream planning with events, pass
// switches and plan caching. The graphs use sfumato's Copy op (a kernel per
// node) so the tests need no other operator.
#include <catch2/catch.hpp>

#include "runtime/graph/infer.h"
#include "runtime/graph/onnx_import.h"
#include "runtime/graph/plan.h"
#include "runtime/graph/zoo/builder.h"

using namespace sfumato;
using namespace sfumato::graph;

namespace {

constexpr int kF = onnx::TensorProto::FLOAT;

DeviceInfo test_device() {
    DeviceInfo d;
    d.arch = "split";
    d.cube_cores = 2;
    d.vector_cores = 4;
    d.aiv_per_aic = 2;
    d.ub_bytes = 192 * 1024;
    d.l1_bytes = 512 * 1024;
    d.functional = true;
    return d;
}

// x -> Copy -> Copy -> ... (n copies) -> output; every tensor `elems` floats.
Graph chain(int n, int64_t elems) {
    zoo::Builder b("chain", 13, 1);
    std::string x = b.input("x", kF, {elems});
    for (int i = 0; i < n; ++i) x = b.op("Copy", {x}, {}, "c" + std::to_string(i));
    b.output(x, kF);
    return import_onnx_bytes(b.model().SerializeAsString(), "chain");
}

// Two independent chains of length n from one input.
Graph two_branches(int n, int64_t elems) {
    zoo::Builder b("branches", 13, 1);
    const std::string x = b.input("x", kF, {elems});
    for (const char* br : {"a", "b"}) {
        std::string y = x;
        for (int i = 0; i < n; ++i) y = b.op("Copy", {y}, {}, std::string(br) + std::to_string(i));
        b.output(y, kF);
    }
    return import_onnx_bytes(b.model().SerializeAsString(), "branches");
}

// Whether two plan tensors' memory ranges overlap.
bool overlap(const PlanTensor& a, const PlanTensor& b) {
    return a.offset < b.offset + b.bytes && b.offset < a.offset + a.bytes;
}

}  // namespace

TEST_CASE("graph memory plan: a chain reuses memory, peak is two tensors") {
    const int64_t elems = 1 << 18;  // 1 MiB of fp32
    const Graph g = chain(6, elems);
    CompileOptions opt;
    opt.streams = 1;
    auto p = compile(g, {{elems}}, test_device(), opt);
    const uint64_t one = static_cast<uint64_t>(elems) * 4;
    REQUIRE(p->steps.size() == 6);
    CHECK(p->kernel_count() == 6);
    CHECK(p->memory.peak_bytes_no_reuse == 7 * one);  // input + 6 outputs
    CHECK(p->memory.peak_bytes == 2 * one);           // producer's input and output alive at once
    // No step's input overlaps its output.
    for (const PlanStep& s : p->steps)
        CHECK_FALSE(
            overlap(p->tensors[static_cast<size_t>(s.in[0])], p->tensors[static_cast<size_t>(s.out[0])]));
}

TEST_CASE(
    "graph stream plan: independent branches get their own streams, "
    "memory stays disjoint across them") {
    const int64_t elems = 1 << 16;
    const Graph g = two_branches(3, elems);
    CompileOptions opt;  // streams chosen by the planner
    auto p = compile(g, {{elems}}, test_device(), opt);
    CHECK(p->num_streams == 2);
    CHECK(p->num_events == 0);  // the branches never join
    std::set<int> a, b;
    for (const PlanStep& s : p->steps) (s.name[0] == 'a' ? a : b).insert(s.stream);
    CHECK(a.size() == 1);
    CHECK(b.size() == 1);
    CHECK(*a.begin() != *b.begin());
    // Tensors of different branches may run at the same time: never share memory.
    for (const PlanStep& sa : p->steps)
        for (const PlanStep& sb : p->steps)
            if (sa.name[0] == 'a' && sb.name[0] == 'b')
                CHECK_FALSE(overlap(p->tensors[static_cast<size_t>(sa.out[0])],
                                    p->tensors[static_cast<size_t>(sb.out[0])]));
    // One stream: the same graph reuses across branches (the second runs after
    // the first).
    CompileOptions one;
    one.streams = 1;
    auto q = compile(g, {{elems}}, test_device(), one);
    CHECK(q->num_streams == 1);
    CHECK(q->memory.peak_bytes < p->memory.peak_bytes);
}

TEST_CASE(
    "graph views pass: a reshape of a contiguous tensor is a view, or a "
    "Copy kernel when the pass is off") {
    zoo::Builder b("v", 13, 1);
    const std::string x = b.input("x", kF, {4, 8});
    const std::string c = b.op("Copy", {x}, {}, "c");
    const std::string i = b.op("Identity", {c}, {}, "i");
    b.output(b.op("Copy", {i}, {}, "d"), kF);
    const Graph g = import_onnx_bytes(b.model().SerializeAsString(), "v");
    CompileOptions keep;
    keep.passes = parse_passes("views");  // dce off: the Identity reaches lowering
    auto p = compile(g, {{4, 8}}, test_device(), keep);
    CHECK(p->kernel_count() == 2);
    CompileOptions off;
    off.passes = parse_passes("none");
    auto q = compile(g, {{4, 8}}, test_device(), off);
    CHECK(q->kernel_count() == 3);
    CompileOptions all;
    auto r = compile(g, {{4, 8}}, test_device(), all);
    CHECK(r->kernel_count() == 2);
    bool dce_fired = false;
    for (const auto& rep : r->passes)
        if (rep.name == "dce") dce_fired = rep.changes == 1 && rep.patterns.count("Identity");
    CHECK(dce_fired);
}

TEST_CASE("graph passes: parse lists, 'none', removal and unknown names") {
    CHECK(parse_passes("none").empty());
    CHECK(parse_passes("all").size() == all_passes().size());
    const auto s = parse_passes("all,-fold");
    CHECK(s.size() == all_passes().size() - 1);
    CHECK_FALSE(s.count("fold"));
    CHECK(parse_passes("fold,dce") == std::set<std::string>{"fold", "dce"});
    CHECK_THROWS_WITH(parse_passes("fold,fuse_everything"), Catch::Contains("fuse_everything"));
}

TEST_CASE(
    "graph model: plans are cached per input shape, wrong shapes name "
    "the input") {
    zoo::Builder b("m", 13, 1);
    const std::string x = b.input("x", kF, {-1, 8}, {"B"});
    b.output(b.op("Copy", {x}), kF);
    Model m(import_onnx_bytes(b.model().SerializeAsString(), "m"));
    const DeviceInfo dev = test_device();
    CompileOptions opt;
    const Plan& p1 = m.plan({{1, 8}}, dev, opt);
    const Plan& p2 = m.plan({{4, 8}}, dev, opt);
    const Plan& p3 = m.plan({{1, 8}}, dev, opt);
    CHECK(&p1 == &p3);
    CHECK(&p1 != &p2);
    CHECK(m.compilations() == 2);
    CHECK(p2.tensors[static_cast<size_t>(p2.outputs[0])].ref.shape == std::vector<int64_t>{4, 8});
    CHECK_THROWS_WITH(m.plan({{1, 9}}, dev, opt), Catch::Contains("'x'"));
    CHECK_THROWS_WITH(m.plan({{1, 8, 1}}, dev, opt), Catch::Contains("'x'"));
    CHECK(default_input_shapes(m.graph(), 3) == std::vector<std::vector<int64_t>>{{3, 8}});
}
