// Timing re-use's bound propagated along a multi-chip run's critical path
// (runtime/llm/path_bound.h): between two all-chip exchanges a path stays on one chip (the largest
// chip's bounds count), across an exchange it may change chips (the segments' largest add up), and
// a step measured from its own begin carries the bounds of the launches after the last exchange
// before it. One chip's steps start after its previous step completed: nothing carries over.
#include <catch2/catch.hpp>

#include "runtime/llm/path_bound.h"
#include "sim/error.h"

using sfumato::llm::ChipLaunches;
using sfumato::llm::path_bound;

namespace {

ChipLaunches chip(std::vector<ChipLaunches::Step> steps, std::vector<uint64_t> exchanges,
                  std::vector<ChipLaunches::Launch> launches) {
    ChipLaunches c;
    c.steps = std::move(steps);
    c.exchange_starts = std::move(exchanges);
    c.launches = std::move(launches);
    return c;
}

}  // namespace

TEST_CASE("path bound: one chip sums its step's launches, nothing carries over", "[llm][reuse]") {
    const ChipLaunches c = chip({{true, 0, 100}, {false, 100, 200}, {false, 200, 300}}, {},
                                {{10, 0, 10.0, false}, {110, 0, 4.0, false}, {150, 0, 6.0, false}, {210, 0, 2.0, false}});
    const auto b = path_bound({c});
    REQUIRE(b.step_ps.size() == 3);
    CHECK(b.step_ps[0] == 10.0);
    CHECK(b.step_ps[1] == 10.0);
    CHECK(b.step_ps[2] == 2.0);
    CHECK(b.ttft_ps == 10.0);
    CHECK(b.tpot_ps == 6.0);  // (10 + 2) / 2 decode steps
    CHECK(b.known);
}

TEST_CASE("path bound: a path changes chips at an exchange, so the segments' largest add up", "[llm][reuse]") {
    // One decode step with one exchange at 50: chip 0 has most of its bound before it, chip 1
    // after it. A path can run chip 0 up to the exchange and chip 1 after it: 5 + 7, more than
    // either chip's own sum (6, 8) and less than both chips' (14).
    const ChipLaunches c0 = chip({{false, 0, 100}}, {50}, {{10, 0, 5.0}, {60, 1, 1.0}});
    const ChipLaunches c1 = chip({{false, 0, 100}}, {50}, {{10, 0, 1.0}, {60, 1, 7.0}});
    const auto b = path_bound({c0, c1});
    REQUIRE(b.step_ps.size() == 1);
    CHECK(b.step_ps[0] == 12.0);
    CHECK(b.tpot_ps == 12.0);
    CHECK(b.ttft_ps == 0.0);
}

TEST_CASE("path bound: a step carries the launches after the last exchange before it", "[llm][reuse]") {
    // Steps [0, 100] (prefill) and [100, 200]; exchanges at 50 and 150 on both chips.
    const ChipLaunches c0 = chip({{true, 0, 100}, {false, 100, 200}}, {50, 150},
                                 {{60, 1, 3.0}, {110, 1, 2.0}, {160, 2, 1.0}});
    const ChipLaunches c1 = chip({{true, 0, 100}, {false, 100, 200}}, {50, 150},
                                 {{70, 1, 1.0}, {120, 1, 1.0}, {170, 2, 4.0}});
    const auto b = path_bound({c0, c1});
    REQUIRE(b.step_ps.size() == 2);
    CHECK(b.step_ps[0] == 3.0);  // segment 1 up to the step's end: max(3, 1)
    // From the exchange at 50 to the end: max(3 + 2, 1 + 1) + max(1, 4); the begin moved by at
    // most max(3, 1) (the previous step's launches after that exchange).
    CHECK(b.step_ps[1] == 5.0 + 4.0 + 3.0);
    CHECK(b.ttft_ps == 3.0);
    CHECK(b.tpot_ps == 12.0);
}

TEST_CASE("path bound: chips with different exchanges or an unknown bound", "[llm][reuse]") {
    ChipLaunches c0 = chip({{false, 0, 100}}, {50}, {});
    const ChipLaunches c1 = chip({{false, 0, 100}}, {}, {});
    CHECK_THROWS_AS(path_bound({c0, c1}), sfumato::SimError);
    c0.known = false;
    CHECK_FALSE(path_bound({c0, c0}).known);
}

TEST_CASE("path bound: an exchange's own kernels add up over the chips", "[llm][reuse]") {
    // A ring all-reduce's steps run on every chip in turn: a path through it visits each chip's
    // part. Segment 1 holds each chip's all-reduce kernels (2 and 3: summed, 5) and a kernel after
    // it (1 and 4: the largest, 4).
    ChipLaunches::Launch r0{60, 1, 2.0, true}, r1{60, 1, 3.0, true};
    const ChipLaunches c0 = chip({{false, 0, 100}}, {50}, {r0, {80, 1, 1.0}});
    const ChipLaunches c1 = chip({{false, 0, 100}}, {50}, {r1, {80, 1, 4.0}});
    CHECK(path_bound({c0, c1}).step_ps.at(0) == 5.0 + 4.0);
}
