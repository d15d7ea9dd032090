// The graph executor with external inputs (Value::external): tensors the caller keeps in device
// memory (an LLM's weights shared by several step plans, a KV cache): the plan neither allocates
// nor uploads them, two plans bound to the same address read the same data, and a plan whose
// external input is not bound refuses to load.
#include <catch2/catch.hpp>

#include "runtime/graph/executor.h"
#include "runtime/graph/plan.h"
#include "tests/sim_harness.h"

using namespace sfumato;
using namespace sfumato::graph;

namespace {

// y [M, N] = x [M, K] @ W [K, N], W external.
Graph matmul_graph(int64_t m, int64_t k, int64_t n) {
    Graph g;
    g.name = "ext";
    auto value = [&](const std::string& name, std::vector<int64_t> s, bool input, bool external) {
        Value v;
        v.name = name;
        v.elem = ref::ElemType::Float16;
        v.shape = make_shape(s);
        v.has_shape = true;
        v.graph_input = input;
        v.external = external;
        const int id = g.add_value(std::move(v));
        if (input) g.inputs.push_back(id);
        return id;
    };
    const int x = value("x", {m, k}, true, false), w = value("W", {k, n}, true, true), y = value("y", {m, n}, false, false);
    Node nd;
    nd.name = "mm";
    nd.op_type = "MatMul";
    nd.inputs = {x, w};
    nd.outputs = {y};
    g.nodes.push_back(nd);
    g.outputs.push_back(y);
    g.val(y).graph_output = true;
    g.rebuild_producers();
    return g;
}

ref::HostTensor filled(std::vector<int64_t> s, double scale) {
    ref::HostTensor t(ref::ElemType::Float16, s);
    for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = scale * static_cast<double>(static_cast<int>(i % 7) - 3);
    return t;
}

}  // namespace

TEST_CASE("graph executor: external weights are bound, not uploaded, and shared by two plans", "[graph][external]") {
    test::Harness h;
    const int64_t K = 32, N = 48;
    CompileOptions opt;
    auto p4 = compile(matmul_graph(4, K, N), {{4, K}, {K, N}}, h.chip().info(), opt);
    auto p8 = compile(matmul_graph(8, K, N), {{8, K}, {K, N}}, h.chip().info(), opt);
    CHECK(p4->memory.weight_bytes == 0);  // nothing of W in the plan's own memory
    const ref::HostTensor w = filled({K, N}, 0.125), x4 = filled({4, K}, 0.5), x8 = filled({8, K}, 0.25);
    std::vector<ref::HostTensor> y4, y8;
    std::string unbound;
    REQUIRE(h.run_host([&] {
        rt::Runtime rt(h.chip(), h.host_params(), h.trace(), &h.root());
        const uint64_t addr = rt.malloc(K * N * 2);
        const std::vector<uint8_t> bytes = ref::to_device_bytes(w, isa::DType::FP16);
        rt.memcpy_h2d(addr, bytes.data(), bytes.size());
        Executor a(rt, *p4), b(rt, *p8), c(rt, *p4);
        a.bind("W", addr);
        b.bind("W", addr);
        a.load();
        b.load();
        const uint64_t uploads = rt.context().tasks().size();
        a.run({x4});
        b.run({x8});
        // Each run uploads its input and launches its kernels: no copy of W.
        size_t copies = 0;
        for (size_t i = uploads; i < rt.context().tasks().size(); ++i)
            copies += rt.context().tasks()[i].task->kind == TaskKind::Memcpy;
        CHECK(copies == 2);
        y4 = a.outputs();
        y8 = b.outputs();
        try {
            c.load();
        } catch (const InputError& e) {
            unbound = e.what();
        }
    }));
    auto expect = [&](const ref::HostTensor& x, const ref::HostTensor& y, int64_t m) {
        for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < N; ++j) {
                double acc = 0;
                for (int64_t k = 0; k < K; ++k) acc += x.data[static_cast<size_t>(i * K + k)] * w.data[static_cast<size_t>(k * N + j)];
                CHECK(y.data[static_cast<size_t>(i * N + j)] == Approx(acc).margin(0.02));
            }
    };
    expect(x4, y4.at(0), 4);
    expect(x8, y8.at(0), 8);
    CHECK_THAT(unbound, Catch::Contains("'W'"));
}
