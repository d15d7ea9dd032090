// Collective plans (runtime/comm): every collective, algorithm, rank count 1..16 and awkward
// sizes, executed on host arrays by the plan interpreter (which also enforces the ordering rules
// ranks running ahead of each other rely on), against the collectives' definitions.
#include <catch2/catch.hpp>
#include <random>

#include "runtime/comm/algorithms.h"
#include "runtime/comm/select.h"
#include "sim/error.h"

using namespace sfumato;
using namespace sfumato::comm;

namespace {

double combine(RedOp op, double a, double b) {
    return op == RedOp::Sum ? a + b : op == RedOp::Max ? std::max(a, b) : std::min(a, b);
}

// Runs a plan on integer-valued data (exact in any order) and compares with the definition.
std::string check(const PlanRequest& r, RedOp red) {
    const Plan p = build_plan(r);
    const uint32_t n = r.ranks;
    const uint64_t c = r.count;
    HostBuffers b;
    std::mt19937 gen(n * 1000 + static_cast<uint32_t>(c));
    std::uniform_int_distribution<int> d(-8, 8);
    for (uint32_t q = 0; q < n; ++q) {
        b.in.emplace_back(in_elems(r.op, n, c));
        for (double& x : b.in.back()) x = d(gen);
        b.out.emplace_back(out_elems(r.op, n, c), -1e9);
    }
    const HostBuffers orig = b;
    if (std::string e = run_on_host(p, red, b); !e.empty()) return e;
    auto reduced = [&](uint64_t idx) {
        double v = orig.in[0][idx];
        for (uint32_t q = 1; q < n; ++q) v = combine(red, v, orig.in[q][idx]);
        return v;
    };
    for (uint32_t q = 0; q < n; ++q) {
        for (uint64_t i = 0; i < out_elems(r.op, n, c); ++i) {
            double want = 0;
            switch (r.op) {
                case Op::AllReduce: want = reduced(i); break;
                case Op::ReduceScatter: want = reduced(q * c + i); break;
                case Op::AllGather: want = orig.in[i / c][i % c]; break;
                case Op::Broadcast: want = orig.in[r.root][i]; break;
                case Op::Reduce:
                    if (q != r.root) continue;
                    want = reduced(i);
                    break;
                case Op::AllToAll: want = orig.in[i / c][q * c + i % c]; break;
            }
            if (b.out[q][i] != want)
                return std::string(op_name(r.op)) + " rank " + std::to_string(q) + " out[" + std::to_string(i) +
                       "] = " + std::to_string(b.out[q][i]) + ", want " + std::to_string(want);
        }
    }
    return {};
}

const Op kOps[] = {Op::AllReduce, Op::AllGather, Op::ReduceScatter, Op::Broadcast, Op::Reduce, Op::AllToAll};

}  // namespace

TEST_CASE("comm plans: flat algorithms give exact results for 1-16 ranks and odd sizes") {
    const Algo algos[] = {Algo::Ring, Algo::HalvingDoubling, Algo::Mesh, Algo::DoubleRing};
    for (Op op : kOps) {
        for (Algo a : algos) {
            for (uint32_t n = 1; n <= 16; ++n) {
                for (uint64_t c : {1ull, 7ull, 33ull, 1031ull}) {
                    PlanRequest r;
                    r.op = op;
                    r.algo = a;
                    r.ranks = n;
                    r.count = c;
                    r.root = n > 1 ? (n * 7 + 3) % n : 0;
                    r.align = 16;
                    const RedOp red = static_cast<RedOp>(n % 3);
                    INFO(op_name(op) << " " << algo_name(a) << " ranks " << n << " count " << c << " " << redop_name(red));
                    CHECK(check(r, red) == "");
                }
            }
        }
    }
}

TEST_CASE("comm plans: hierarchical plans over equal groups") {
    for (Op op : kOps) {
        for (auto [n, g] : {std::pair{2u, 1u}, {4u, 2u}, {6u, 2u}, {6u, 3u}, {8u, 4u}, {8u, 2u}, {12u, 4u}, {16u, 8u}}) {
            for (bool mesh : {true, false}) {
                PlanRequest r;
                r.op = op;
                r.algo = Algo::Hierarchical;
                r.ranks = n;
                r.count = 517;
                r.root = n - 1;
                r.align = 16;
                r.group_full_mesh = mesh;
                for (uint32_t q = 0; q < n; ++q) r.group.push_back(q / g);
                INFO(op_name(op) << " ranks " << n << " groups of " << g << (mesh ? " mesh" : " ring"));
                CHECK(check(r, RedOp::Sum) == "");
            }
        }
    }
}

TEST_CASE("comm plans: hierarchical refuses unequal groups, naming them") {
    PlanRequest r;
    r.op = Op::AllReduce;
    r.algo = Algo::Hierarchical;
    r.ranks = 5;
    r.count = 10;
    r.group = {0, 0, 0, 1, 1};
    CHECK_THROWS_WITH(build_plan(r), Catch::Contains("same number of ranks") && Catch::Contains("3 and 2"));
}

TEST_CASE("comm plans: step counts follow the algorithms") {
    PlanRequest r;
    r.op = Op::AllReduce;
    r.ranks = 8;
    r.count = 8 * 1024;
    r.algo = Algo::Ring;
    CHECK(build_plan(r).steps.size() == 2 * (8 - 1));
    r.algo = Algo::HalvingDoubling;
    CHECK(build_plan(r).steps.size() == 2 * 3);
    r.algo = Algo::Mesh;
    // Mesh, the vendor's direct form: a local step (each rank's own block into its buffer), then
    // every rank reduces one block into each of the 7 others (inline, from its input) and pulls
    // each of the 7 others' reduced blocks; no staging.
    const Plan mesh = build_plan(r);
    CHECK(mesh.direct);
    REQUIRE(mesh.steps.size() == 3);
    CHECK(mesh.steps[0].xfers.empty());
    CHECK(mesh.steps[0].ops.size() == 8);
    CHECK(mesh.steps[1].xfers.size() == 8 * 7);
    for (const Xfer& x : mesh.steps[1].xfers) CHECK((x.reduce && !x.pull && x.issuer() == x.src));
    CHECK(mesh.steps[2].xfers.size() == 8 * 7);
    for (const Xfer& x : mesh.steps[2].xfers) CHECK((x.pull && !x.reduce && x.issuer() == x.dst));
    // Peers reach each other's Scratch only (the user's buffers are private to their rank).
    for (const Step& st : mesh.steps)
        for (const Xfer& x : st.xfers) CHECK((x.pull ? x.from.buf : x.to.buf) == Buf::Scratch);
    // Ring is staged as before.
    r.algo = Algo::Ring;
    CHECK(!build_plan(r).direct);
    // Not a power of two: each phase folds the extra ranks in and out (2 levels + 2 steps each).
    r.ranks = 6;
    r.algo = Algo::HalvingDoubling;
    CHECK(build_plan(r).steps.size() == 2 * (2 + 2));
}

TEST_CASE("comm select: mesh on a full mesh, and on a ring rings for large messages and fewer steps for small ones") {
    // 8 chips, full mesh of 28 GB/s links.
    SystemInfo s;
    s.chips = 8;
    s.chips_per_server = 8;
    s.group_size = 8;
    s.topology = "full_mesh";
    for (uint32_t a = 0; a < 8; ++a)
        for (uint32_t b = 0; b < 8; ++b) s.channels.push_back({"c", a == b ? 0.0 : 28.0, 500});
    s.routes.resize(64);
    for (uint32_t a = 0; a < 8; ++a)
        for (uint32_t b = 0; b < 8; ++b)
            if (a != b) s.routes[a * 8 + b] = {{a * 8 + b}, 28.0, 500, true};
    CostModel m;
    m.sys = &s;
    m.chip_of_rank = {0, 1, 2, 3, 4, 5, 6, 7};
    m.step_overhead_ns = 3000;
    m.local_gbps = 500;
    m.elem_bytes = 2;
    PlanRequest r;
    r.op = Op::AllReduce;
    r.ranks = 8;
    r.count = 128ull << 20;
    CHECK(choose(r, m) == Algo::Mesh);
    // The same chips on a ring: neighbours only (routes to others cross intermediate links).
    SystemInfo ring = s;
    for (uint32_t a = 0; a < 8; ++a) {
        for (uint32_t b = 0; b < 8; ++b) {
            if (a == b) continue;
            std::vector<uint32_t> path;
            uint32_t x = a;
            const bool fwd = (b + 8 - a) % 8 <= 4;
            while (x != b) {
                const uint32_t y = fwd ? (x + 1) % 8 : (x + 7) % 8;
                path.push_back(x * 8 + y);
                x = y;
            }
            ring.routes[a * 8 + b] = {path, 28.0, 500.0 * path.size(), true};
        }
    }
    m.sys = &ring;
    const Algo big = choose(r, m);
    CHECK((big == Algo::Ring || big == Algo::DoubleRing));
    // Small messages: latency decides (one routed step of mesh, or log2 steps), not the ring.
    r.count = 64;
    const Algo small = choose(r, m);
    CHECK((small == Algo::Mesh || small == Algo::HalvingDoubling));
}

TEST_CASE("comm plans: a reducing transfer needs a value set by an earlier step") {
    HostBuffers b;
    b.in = {{1, 2}, {10, 20}};
    b.out = {{0, 0}, {0, 0}};
    {  // rank 1's Out set by a local copy in step 0, reduced into by rank 0 in step 1: 11, 22
        PlanBuilder pb(2);
        pb.copy(0, 1, {Buf::Out, 0}, {Buf::In, 0}, 2);
        pb.xfer_reduce(1, 0, {Buf::In, 0}, 1, {Buf::Out, 0}, 2);
        HostBuffers h = b;
        CHECK(run_on_host(pb.finish(Algo::Mesh), RedOp::Sum, h).empty());
        CHECK(h.out[1] == std::vector<double>{11, 22});
    }
    {  // nothing set it before: refused
        PlanBuilder pb(2);
        pb.xfer_reduce(0, 0, {Buf::In, 0}, 1, {Buf::Out, 0}, 2);
        pb.copy(0, 1, {Buf::Out, 0}, {Buf::In, 0}, 2);
        HostBuffers h = b;
        CHECK_THAT(run_on_host(pb.finish(Algo::Mesh), RedOp::Sum, h), Catch::Contains("without a value set by an earlier step"));
    }
    {  // a plain transfer and a reduction into the same element in one step: refused
        PlanBuilder pb(2);
        pb.copy(0, 1, {Buf::Out, 0}, {Buf::In, 0}, 2);
        pb.xfer(1, 0, {Buf::In, 0}, 1, {Buf::Out, 0}, 2);
        pb.xfer_reduce(1, 0, {Buf::In, 0}, 1, {Buf::Out, 0}, 2);
        HostBuffers h = b;
        CHECK_FALSE(run_on_host(pb.finish(Algo::Mesh), RedOp::Sum, h).empty());
    }
}
