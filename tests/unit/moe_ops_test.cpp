// The mixture-of-experts and W8A8 operators (runtime/ops/llm: MoeRouter, MoePermute,
// GroupedMatmul, MoeCombine, MoeFfn, DynamicQuant, QuantMatMul) as graph-node operators, run
// without the chip model (every block on a checking sink of its kernel's kind: flags balanced,
// operands in range, no races) against the host references (runtime/ref/llm_moe.cpp). Routing
// is ragged on purpose (skewed draws leave experts without tokens). Tolerances as in
// docs/operators.md: the router, permutation, DynamicQuant and QuantMatMul are exact (the
// permutation is a copy, the quantisers' references replay the kernels' fp32 arithmetic); the
// float paths allow one ulp of the output type plus the fp32 arithmetic's error.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <random>

#include "node_sink_run.h"
#include "runtime/ops/standalone.h"
#include "runtime/ref/llm_moe.h"
#include "sim/error.h"

using namespace sfumato;
using namespace sfumato::ops;
using ref::ElemType;
using ref::HostTensor;

namespace {

DeviceInfo tiny() {
    DeviceInfo d;
    d.arch = "split";
    d.cube_cores = 2, d.vector_cores = 4, d.aiv_per_aic = 2;
    d.l1_bytes = 128 << 10, d.l0a_bytes = d.l0b_bytes = 16 << 10, d.l0c_bytes = 32 << 10, d.ub_bytes = 32 << 10;
    d.event_ids = 8;
    d.vector_bytes_per_cycle = 256;
    return d;
}
DeviceInfo big() {
    DeviceInfo d = tiny();
    d.cube_cores = 24, d.vector_cores = 48;
    d.l1_bytes = 512 << 10, d.l0a_bytes = d.l0b_bytes = 64 << 10, d.l0c_bytes = 128 << 10, d.ub_bytes = 192 << 10;
    return d;
}

NodeDesc node(const std::string& op) {
    NodeDesc n;
    n.name = op;
    n.op_type = op;
    n.attrs.set_owner(op);
    return n;
}

HostTensor uniform(const std::vector<int64_t>& shape, ElemType t, std::mt19937& rng, double lo, double hi) {
    HostTensor h(t, shape);
    std::uniform_real_distribution<double> d(lo, hi);
    for (double& v : h.data) v = ref::is_float(t) ? d(rng) : std::round(d(rng));
    ref::round_to_type(h);
    return h;
}

// Experts of T tokens, k distinct each, skewed to low experts (high ones often empty).
HostTensor skewed_experts(int64_t T, int64_t k, int64_t E, std::mt19937& rng) {
    HostTensor ex(ElemType::Int64, {T, k});
    std::uniform_real_distribution<double> u(0, 1);
    for (int64_t t = 0; t < T; ++t) {
        std::vector<int64_t> got;
        while (static_cast<int64_t>(got.size()) < k) {
            const int64_t e = std::min<int64_t>(E - 1, static_cast<int64_t>(E * u(rng) * u(rng) * u(rng)));
            if (std::find(got.begin(), got.end(), e) == got.end()) got.push_back(e);
        }
        for (int64_t j = 0; j < k; ++j) ex.data[static_cast<size_t>(t * k + j)] = static_cast<double>(got[static_cast<size_t>(j)]);
    }
    return ex;
}

std::vector<int64_t> ints(const HostTensor& t) {
    std::vector<int64_t> v;
    for (double x : t.data) v.push_back(static_cast<int64_t>(x));
    return v;
}

// Runs the node on the sinks and compares every output with the reference; "" when all match.
std::string check(const NodeDesc& n, const std::vector<HostTensor>& in, const DeviceInfo& dev, Tolerance tol) {
    const sfumato::test::NodeSinkRun r = sfumato::test::run_node_on_sinks(n, in, dev);
    if (!r.errors.empty()) return r.errors[0];
    std::vector<const HostTensor*> p;
    for (const HostTensor& t : in) p.push_back(&t);
    const std::vector<HostTensor> want = ref::run_ref({n.name, n.op_type, n.opset, n.attrs}, p);
    for (size_t o = 0; o < want.size(); ++o) {
        const CheckResult c = compare_tensors(r.outs.at(o), want[o], tol);
        if (!c.passed)
            return "output " + std::to_string(o) + ": max abs err " + std::to_string(c.max_abs_err);
    }
    return "";
}

Tolerance tol_for(ElemType t, double atol = 1e-6) {
    const double ulp = t == ElemType::Float16 ? 1.0 / 1024 : t == ElemType::Bfloat16 ? 1.0 / 128 : 0.0;
    return {atol, ulp + 1e-5};
}

}  // namespace

TEST_CASE("MoeRouter picks the reference's experts (ties to the lower index) and weights", "[llm][moe]") {
    for (ElemType t : {ElemType::Float16, ElemType::Bfloat16, ElemType::Float})
        for (auto [E, k] : std::vector<std::pair<int64_t, int64_t>>{{8, 1}, {8, 2}, {70, 3}, {4, 4}}) {
            INFO(ref::elem_type_name(t) << " E " << E << " k " << k);
            std::mt19937 rng(static_cast<uint32_t>(E * 10 + k));
            NodeDesc n = node("MoeRouter");
            n.attrs.set("top_k", ref::Attr::of_int(k));
            const int64_t T = 37;
            n.inputs = {make_tensor({T, E}, t)};
            // Few distinct values: ties are common, and the lower index must win them.
            HostTensor lg = uniform({T, E}, t, rng, -3, 3);
            for (double& v : lg.data) v = std::round(v * 2) / 2;
            CHECK(check(n, {lg}, tiny(), tol_for(t)) == "");
        }
}

TEST_CASE("MoeRouter breaks a full tie to experts 0..k-1 with equal weights", "[llm][moe]") {
    NodeDesc n = node("MoeRouter");
    n.attrs.set("top_k", ref::Attr::of_int(2));
    n.inputs = {make_tensor({3, 8}, ElemType::Float16)};
    HostTensor lg(ElemType::Float16, {3, 8});
    const sfumato::test::NodeSinkRun r = sfumato::test::run_node_on_sinks(n, {lg}, tiny());
    REQUIRE(r.errors.empty());
    CHECK(ints(r.outs[1]) == std::vector<int64_t>{0, 1, 0, 1, 0, 1});
    for (double w : r.outs[0].data) CHECK(w == 0.5);
}

TEST_CASE("MoePermute groups ragged loads (an expert with no tokens) by expert, host-known or read from GM",
          "[llm][moe]") {
    for (bool host : {false, true})
        for (auto [T, k, E, H] : std::vector<std::array<int64_t, 4>>{{13, 1, 4, 64}, {29, 2, 8, 100}, {50, 2, 16, 3000}}) {
            INFO("T " << T << " k " << k << " E " << E << " H " << H << " host " << host);
            std::mt19937 rng(static_cast<uint32_t>(T + k + E));
            const HostTensor ex = skewed_experts(T, k, E, rng);
            const ref::MoeGrouping g = ref::moe_group(ints(ex), E, "test");
            CHECK(std::count(g.sizes.begin(), g.sizes.end(), 0) > 0);  // the case this test is about
            NodeDesc n = node("MoePermute");
            n.attrs.set("num_experts", ref::Attr::of_int(E));
            if (host) n.attrs.set("host_experts", ref::Attr::of_ints(ints(ex)));
            n.inputs = {make_tensor({T, H}, ElemType::Float16), make_tensor({T, k}, ElemType::Int64)};
            CHECK(check(n, {uniform({T, H}, ElemType::Float16, rng, -4, 4), ex}, tiny(), {0, 0}) == "");
        }
}

TEST_CASE("GroupedMatmul: ragged groups, an empty group, one launch over the cube cores", "[llm][moe]") {
    for (ElemType t : {ElemType::Float16, ElemType::Bfloat16, ElemType::Float})
        for (auto [R, K, N, E] : std::vector<std::array<int64_t, 4>>{{20, 64, 48, 4}, {130, 96, 300, 6}, {3, 256, 64, 8}}) {
            INFO(ref::elem_type_name(t) << " R " << R << " K " << K << " N " << N << " E " << E);
            std::mt19937 rng(static_cast<uint32_t>(R + K + N));
            HostTensor sz(ElemType::Int64, {E});
            for (int64_t r = 0; r < R; ++r) sz.data[static_cast<size_t>(std::min<int64_t>(E - 1, r * r * E / (R * R)))] += 1;
            sz.data[1] += sz.data[0], sz.data[0] = 0;  // expert 0 empty
            NodeDesc n = node("GroupedMatmul");
            n.inputs = {make_tensor({R, K}, t), make_tensor({E, K, N}, t), make_tensor({E}, ElemType::Int64)};
            const Tolerance tol = tol_for(t, static_cast<double>(K) * std::ldexp(1.0, -24));
            const std::vector<HostTensor> in = {uniform({R, K}, t, rng, -1, 1), uniform({E, K, N}, t, rng, -1, 1), sz};
            CHECK(check(n, in, tiny(), tol) == "");
            n.attrs.set("host_group_sizes", ref::Attr::of_ints(ints(sz)));
            CHECK(check(n, in, big(), tol) == "");
        }
}

TEST_CASE("MoeCombine sums the weighted expert rows of each token", "[llm][moe]") {
    for (auto [T, k, E, H] : std::vector<std::array<int64_t, 4>>{{9, 1, 4, 64}, {21, 2, 8, 130}, {5, 2, 4, 9000}}) {
        INFO("T " << T << " k " << k << " H " << H);
        std::mt19937 rng(static_cast<uint32_t>(T * k + H));
        const HostTensor ex = skewed_experts(T, k, E, rng);
        const ref::MoeGrouping g = ref::moe_group(ints(ex), E, "test");
        HostTensor rows(ElemType::Int64, {T, k});
        for (size_t i = 0; i < g.rows.size(); ++i) rows.data[i] = static_cast<double>(g.rows[i]);
        NodeDesc n = node("MoeCombine");
        n.attrs.set("num_experts", ref::Attr::of_int(E));
        n.attrs.set("host_experts", ref::Attr::of_ints(ints(ex)));
        n.inputs = {make_tensor({T * k, H}, ElemType::Float16), make_tensor({T, k}, ElemType::Int64),
                    make_tensor({T, k}, ElemType::Float16)};
        CHECK(check(n, {uniform({T * k, H}, ElemType::Float16, rng, -4, 4), rows, uniform({T, k}, ElemType::Float16, rng, 0, 1)},
                    tiny(), tol_for(ElemType::Float16, 1e-5)) == "");
    }
}

TEST_CASE("MoeFfn (router, permute, grouped gate/up, SwiGlu, grouped down, combine) matches the chained references",
          "[llm][moe]") {
    for (ElemType t : {ElemType::Float16, ElemType::Bfloat16})
        for (auto [T, H, I, E, k] : std::vector<std::array<int64_t, 5>>{{6, 64, 32, 4, 1}, {40, 128, 96, 8, 2}}) {
            INFO(ref::elem_type_name(t) << " T " << T << " E " << E << " k " << k);
            std::mt19937 rng(static_cast<uint32_t>(T + H + E + k));
            HostTensor lg = uniform({T, E}, t, rng, -2, 2);
            std::vector<int64_t> ex;
            for (int64_t i = 0; i < T; ++i)
                for (int64_t e : ref::moe_top_k(lg.data.data() + i * E, E, k)) ex.push_back(e);
            NodeDesc n = node("MoeFfn");
            n.attrs.set("top_k", ref::Attr::of_int(k));
            n.attrs.set("host_experts", ref::Attr::of_ints(ex));
            n.inputs = {make_tensor({T, H}, t), make_tensor({T, E}, t), make_tensor({E, H, 2 * I}, t), make_tensor({E, I, H}, t)};
            const double gh = 1 / std::sqrt(double(H)), gi = 1 / std::sqrt(double(I));
            const double ulp = t == ElemType::Float16 ? 1.0 / 1024 : 1.0 / 128;
            CHECK(check(n,
                        {uniform({T, H}, t, rng, -1, 1), lg, uniform({E, H, 2 * I}, t, rng, -gh, gh),
                         uniform({E, I, H}, t, rng, -gi, gi)},
                        tiny(), {0.1 * ulp + 1e-6, ulp + 1e-5}) == "");
        }
}

TEST_CASE("DynamicQuant is bit-exact: zero rows, rows that reach +-127, long rows", "[llm][w8a8]") {
    for (ElemType t : {ElemType::Float16, ElemType::Bfloat16, ElemType::Float})
        for (auto [T, H] : std::vector<std::pair<int64_t, int64_t>>{{7, 100}, {70, 64}, {3, 4000}}) {
            INFO(ref::elem_type_name(t) << " T " << T << " H " << H);
            std::mt19937 rng(static_cast<uint32_t>(T + H));
            HostTensor x = uniform({T, H}, t, rng, -6, 6);
            for (int64_t h = 0; h < H; ++h) x.data[static_cast<size_t>(h)] = 0;  // row 0: all zero
            x.data[static_cast<size_t>(H + 1)] = -1e4;                             // row 1: one outlier
            ref::round_to_type(x);
            NodeDesc n = node("DynamicQuant");
            n.inputs = {make_tensor({T, H}, t)};
            CHECK(check(n, {x}, H > 1000 ? big() : tiny(), {0, 0}) == "");
        }
}

TEST_CASE("QuantMatMul is bit-exact, including int8 extremes and an fp16 result that overflows", "[llm][w8a8]") {
    for (const char* od : {"fp16", "bf16"})
        for (auto [M, K, N] : std::vector<std::array<int64_t, 3>>{{5, 64, 40}, {33, 300, 130}, {2, 2048, 64}}) {
            INFO(od << " M " << M << " K " << K << " N " << N);
            std::mt19937 rng(static_cast<uint32_t>(M + K + N));
            HostTensor a = uniform({M, K}, ElemType::Int8, rng, -128, 127), w = uniform({K, N}, ElemType::Int8, rng, -128, 127);
            for (int64_t q = 0; q < K; ++q) a.data[static_cast<size_t>(q)] = -128, w.data[static_cast<size_t>(q * N)] = -128;
            HostTensor ws = uniform({N}, ElemType::Float, rng, 1e-3, 2e-2), as = uniform({M}, ElemType::Float, rng, 1e-3, 2e-2);
            ws.data[0] = as.data[0] = 4.0;  // row 0 x column 0: 128 * 128 * K * 16 > 65504
            NodeDesc n = node("QuantMatMul");
            n.attrs.set("output_dtype", ref::Attr::of_string(od));
            n.inputs = {make_tensor({M, K}, ElemType::Int8), make_tensor({K, N}, ElemType::Int8), make_tensor({N}, ElemType::Float),
                        make_tensor({M}, ElemType::Float)};
            CHECK(check(n, {a, w, ws, as}, tiny(), {0, 0}) == "");
            if (std::string(od) == "fp16") {
                const sfumato::test::NodeSinkRun r = sfumato::test::run_node_on_sinks(n, {a, w, ws, as}, tiny());
                CHECK(std::isinf(r.outs[0].data[0]));
            }
        }
}

TEST_CASE("MoE and W8A8 nodes reject bad input naming the node and the culprit", "[llm][moe][w8a8]") {
    const DeviceInfo d = tiny();
    NodeDesc r = node("MoeRouter");
    r.attrs.set("top_k", ref::Attr::of_int(9));
    r.inputs = {make_tensor({4, 8}, ElemType::Float16)};
    CHECK_THROWS_WITH(make_node_op(r, d), Catch::Contains("'MoeRouter'") && Catch::Contains("'top_k' = 9"));
    r.inputs = {make_tensor({4, 8}, ElemType::Int32)};
    r.attrs.set("top_k", ref::Attr::of_int(2));
    CHECK_THROWS_WITH(make_node_op(r, d), Catch::Contains("logits"));

    NodeDesc g = node("GroupedMatmul");
    g.inputs = {make_tensor({10, 64}, ElemType::Float16), make_tensor({4, 32, 16}, ElemType::Float16),
                make_tensor({4}, ElemType::Int64)};
    CHECK_THROWS_WITH(make_node_op(g, d), Catch::Contains("weight") && Catch::Contains("K = 64"));
    g.inputs[1].shape = {4, 64, 16};
    g.attrs.set("host_group_sizes", ref::Attr::of_ints({1, 2, 3, 5}));
    CHECK_THROWS_WITH(make_node_op(g, d), Catch::Contains("'host_group_sizes'"));

    NodeDesc p = node("MoePermute");
    p.attrs.set("num_experts", ref::Attr::of_int(4));
    p.attrs.set("host_experts", ref::Attr::of_ints({0, 1, 7}));
    p.inputs = {make_tensor({3, 64}, ElemType::Float16), make_tensor({3, 1}, ElemType::Int64)};
    CHECK_THROWS_WITH(make_node_op(p, d), Catch::Contains("'host_experts': entry 2 = 7"));
    p.inputs[1].shape = {2, 1};
    CHECK_THROWS_WITH(make_node_op(p, d), Catch::Contains("experts"));

    NodeDesc c = node("MoeCombine");
    c.inputs = {make_tensor({6, 64}, ElemType::Float16), make_tensor({3, 2}, ElemType::Int64),
                make_tensor({3, 1}, ElemType::Float16)};
    CHECK_THROWS_WITH(make_node_op(c, d), Catch::Contains("weights"));

    NodeDesc q = node("QuantMatMul");
    q.inputs = {make_tensor({4, 64}, ElemType::Float16), make_tensor({64, 32}, ElemType::Int8), make_tensor({32}, ElemType::Float),
                make_tensor({4}, ElemType::Float)};
    CHECK_THROWS_WITH(make_node_op(q, d), Catch::Contains("'a'") && Catch::Contains("int8"));
    q.inputs[0] = make_tensor({4, 64}, ElemType::Int8);
    q.inputs[2].shape = {31};
    CHECK_THROWS_WITH(make_node_op(q, d), Catch::Contains("w_scale"));

    NodeDesc f = node("MoeFfn");
    f.inputs = {make_tensor({4, 64}, ElemType::Float16), make_tensor({4, 8}, ElemType::Float16),
                make_tensor({8, 64, 64}, ElemType::Float16), make_tensor({8, 64, 64}, ElemType::Float16)};
    CHECK_THROWS_WITH(make_node_op(f, d), Catch::Contains("w_down"));
}
