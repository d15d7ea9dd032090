// runtime/serve/step_reuse.h: a step's shape and context sum, and what the simulated steps give a
// later step: the same point, a linear interpolation within the span, a line one side within half
// the span, else nothing (simulate it); every N-th re-usable step simulated as a check and its
// deviation measured; the stated bound from the checks.
#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/serve/step_reuse.h"

using namespace sfumato;
using namespace sfumato::serve;

namespace {

llm::StepBatch batch(std::vector<int64_t> q, std::vector<int64_t> ctx) {
    llm::StepBatch b;
    b.query_lens = std::move(q);
    b.context_lens = std::move(ctx);
    return b;
}

StepKey key(int64_t x) { return {"1,1,", x}; }

}  // namespace

TEST_CASE("serve step re-use: the shape holds the new tokens and the pieces' contexts, x the decodes' contexts",
          "[serve]") {
    const StepKey a = step_key(batch({512, 1, 1}, {0, 600, 700}));
    const StepKey b = step_key(batch({512, 1, 1}, {0, 10, 20}));
    CHECK(a.shape == b.shape);
    CHECK(a.x == 1300);
    CHECK(b.x == 30);
    // A prompt piece's context is part of the shape (its attention is q x ctx), and so are the
    // decodes' count and the pieces' sizes; the batch order is not (one plan whatever it).
    CHECK(step_key(batch({512, 1, 1}, {512, 600, 700})).shape != a.shape);
    CHECK(step_key(batch({1, 512, 1}, {600, 0, 700})).shape == a.shape);
    CHECK(step_key(batch({1, 1, 512}, {600, 700, 0})).x == 1300);
    CHECK(step_key(batch({1, 1}, {5, 6})).shape != step_key(batch({1, 1, 1}, {5, 6, 0})).shape);
    CHECK(step_key(batch({256, 512, 1}, {0, 0, 9})).shape == step_key(batch({1, 512, 256}, {9, 0, 0})).shape);
    CHECK(step_key(batch({256, 512, 1}, {0, 0, 9})).shape != step_key(batch({256, 256, 1}, {0, 0, 9})).shape);
}

TEST_CASE("serve step re-use: exact points, interpolation within the span, lines within half of it", "[serve]") {
    StepReuseOptions o;
    o.on = true;
    o.span = 1000;
    o.check_every = 0;
    StepTimes t(o);
    CHECK(t.predict(key(100)).kind == StepTimes::Kind::None);
    t.simulated(key(100), 1.0, {});
    CHECK(t.predict(key(100)).kind == StepTimes::Kind::Exact);
    CHECK(t.predict(key(100)).seconds == 1.0);
    // One point: no slope, nothing beyond it; another shape knows nothing.
    CHECK(t.predict(key(101)).kind == StepTimes::Kind::None);
    CHECK(t.predict({"1,", 100}).kind == StepTimes::Kind::None);
    t.simulated(key(900), 2.6, {});  // 800 apart: within the span
    const StepTimes::Given mid = t.predict(key(500));
    CHECK(mid.kind == StepTimes::Kind::Interpolated);
    CHECK(mid.seconds == Approx(1.8));
    // Beyond the last point by at most span / 2, on a baseline of at least span / 4: the line.
    const StepTimes::Given up = t.predict(key(1400));
    CHECK(up.kind == StepTimes::Kind::Extrapolated);
    CHECK(up.seconds == Approx(3.6));
    CHECK(t.predict(key(1401)).kind == StepTimes::Kind::None);
    const StepTimes::Given down = t.predict(key(0));
    CHECK(down.kind == StepTimes::Kind::Extrapolated);
    CHECK(down.seconds == Approx(0.8));
    // A gap wider than the span is not interpolated; near one side it follows that side's line.
    t.simulated(key(3000), 5.0, {});
    CHECK(t.predict(key(2000)).kind == StepTimes::Kind::None);
    const StepTimes::Given near = t.predict(key(1300));
    CHECK(near.kind == StepTimes::Kind::Extrapolated);
    CHECK(near.seconds == Approx(3.4));
    // A baseline shorter than span / 4 gives no slope.
    StepTimes s(o);
    s.simulated(key(100), 1.0, {});
    s.simulated(key(200), 1.1, {});
    CHECK(s.predict(key(300)).kind == StepTimes::Kind::None);
    CHECK(s.predict(key(150)).kind == StepTimes::Kind::Interpolated);
    CHECK(s.counters().pooled_baselines == 0);
}

TEST_CASE("serve step re-use: a shape without a line of its own takes the slope pooled over the shapes",
          "[serve]") {
    StepReuseOptions o;
    o.on = true;
    o.span = 1000;
    o.check_every = 0;
    StepTimes t(o);
    // Shape A: baselines of 400 (slope 1e-3 s/token) and 500 (3e-3); 100 apart is too short to count.
    t.simulated({"A", 0}, 1.0, {});
    t.simulated({"A", 400}, 1.4, {});
    t.simulated({"A", 900}, 2.9, {});
    t.simulated({"A", 1000}, 9.0, {});
    // Shape B: one baseline of 250 (slope 2e-3): the median of 1e-3, 2e-3 and 3e-3 is 2e-3.
    t.simulated({"B", 0}, 1.0, {});
    t.simulated({"B", 250}, 1.5, {});
    const StepReuseCounters n = t.counters();
    CHECK(n.pooled_baselines == 3);
    CHECK(n.pooled_slope == Approx(2e-3));
    // Shape C has one point: within span / 2 of it, its time plus the pooled slope, both sides.
    t.simulated({"C", 1000}, 3.0, {});
    const StepTimes::Given up = t.predict({"C", 1500});
    CHECK(up.kind == StepTimes::Kind::Pooled);
    CHECK(up.seconds == Approx(4.0));
    CHECK(t.predict({"C", 600}).seconds == Approx(2.2));
    CHECK(t.predict({"C", 1501}).kind == StepTimes::Kind::None);
    CHECK(t.predict({"D", 1000}).kind == StepTimes::Kind::None);  // no point of its own
    // Two points closer than span / 4: the nearer one's time and the pooled slope.
    t.simulated({"C", 1100}, 3.1, {});
    CHECK(t.predict({"C", 1400}).seconds == Approx(3.1 + 300 * 2e-3));
    CHECK(t.predict({"C", 900}).seconds == Approx(3.0 - 100 * 2e-3));
    // Counted as pooled when re-used.
    StepTimes::Given check;
    CHECK(t.decide({"C", 1400}, &check).kind == StepTimes::Kind::Pooled);
    CHECK(t.counters().pooled == 1);
    CHECK(step_reuse_json(o, t.counters())["pooled"] == 1);
}

TEST_CASE("serve step re-use: every N-th re-usable step is a check, its deviation measured and bounding",
          "[serve]") {
    StepReuseOptions o;
    o.on = true;
    o.span = 1000;
    o.check_every = 3;
    StepTimes t(o);
    StepTimes::Given check;
    CHECK(t.decide(key(0), &check).kind == StepTimes::Kind::None);  // nothing yet: simulate
    CHECK(check.kind == StepTimes::Kind::None);
    t.simulated(key(0), 1.0, check);
    t.simulated(key(1000), 2.0, {});
    // Re-usable steps 1 and 2 are re-used, the third is simulated as a check.
    CHECK(t.decide(key(500), &check).seconds == Approx(1.5));
    CHECK(t.decide(key(250), &check).seconds == Approx(1.25));
    CHECK(t.decide(key(750), &check).kind == StepTimes::Kind::None);
    REQUIRE(check.kind == StepTimes::Kind::Interpolated);
    CHECK(check.seconds == Approx(1.75));
    t.simulated(key(750), 2.0, check);  // it took 2.0: the interpolation was 12.5 % short
    const StepReuseCounters& n = t.counters();
    CHECK(n.reused == 2);
    CHECK(n.interpolated == 2);
    CHECK(n.simulated == 3);
    CHECK(n.checks == 1);
    CHECK(n.max_dev == Approx(0.125));
    CHECK(n.sum_dev == Approx(-0.125));
    // Per way the check's time would have been given.
    CHECK(n.kind_checks[static_cast<size_t>(StepTimes::Kind::Interpolated)] == 1);
    CHECK(n.kind_max_dev[static_cast<size_t>(StepTimes::Kind::Interpolated)] == Approx(0.125));
    const nlohmann::json j = step_reuse_json(o, n);
    CHECK(j["checks_by_kind"]["interpolated"]["checks"] == 1);
    CHECK(j["checks_by_kind"]["interpolated"]["max_deviation"].get<double>() == Approx(0.125));
    CHECK(j["checks_by_kind"]["pooled"]["checks"] == 0);
    // The bound: the re-used seconds times the largest deviation, over all seconds.
    CHECK(n.error_bound_fraction() == Approx((1.5 + 1.25) * 0.125 / (1.0 + 2.0 + 2.0 + 1.5 + 1.25)));
    // The checked step is a point now.
    CHECK(t.predict(key(750)).kind == StepTimes::Kind::Exact);
}

TEST_CASE("serve step re-use: the checks' interval doubles after every four checks", "[serve]") {
    StepReuseOptions o;
    o.on = true;
    o.check_every = 2;
    StepTimes t(o);
    t.simulated(key(0), 1.0, {});
    std::vector<size_t> at;
    for (size_t i = 1; i <= 40; ++i) {
        StepTimes::Given check;
        if (t.decide(key(0), &check).kind == StepTimes::Kind::None) {
            REQUIRE(check.kind == StepTimes::Kind::Exact);
            at.push_back(i);
        }
    }
    CHECK(at == std::vector<size_t>{2, 4, 6, 8, 12, 16, 20, 24, 32, 40});
}

TEST_CASE("serve step re-use: off simulates every step, and without a check the bound is unknown", "[serve]") {
    StepTimes off(StepReuseOptions{});
    StepTimes::Given check;
    off.simulated(key(0), 1.0, {});
    CHECK(off.decide(key(0), &check).kind == StepTimes::Kind::None);
    CHECK(off.counters().simulated == 1);
    StepReuseOptions o;
    o.on = true;
    o.check_every = 0;
    StepTimes t(o);
    t.simulated(key(0), 1.0, {});
    CHECK(t.decide(key(0), &check).kind == StepTimes::Kind::Exact);
    CHECK(t.counters().error_bound_fraction() < 0);  // unknown
    CHECK(step_reuse_json(o, t.counters())["error_bound_known"] == false);
}

TEST_CASE("serve step re-use: every kind has its own name, and checks_by_kind lists each but None", "[serve]") {
    // The names come from a switch over the enum (a kind left unnamed fails the build); the count
    // of kinds follows from it.
    STATIC_REQUIRE(kStepReuseKinds == 5);
    STATIC_REQUIRE(std::string_view(step_reuse_kind_name(StepReuseKind::Pooled)) == "pooled");
    std::set<std::string> names;
    for (size_t i = 0; i < kStepReuseKinds; ++i) {
        const char* n = step_reuse_kind_name(static_cast<StepReuseKind>(i));
        REQUIRE(n != nullptr);
        CHECK(!std::string(n).empty());
        names.insert(n);
    }
    CHECK(names.size() == kStepReuseKinds);
    CHECK(step_reuse_kind_name(static_cast<StepReuseKind>(kStepReuseKinds)) == nullptr);
    // Each check lands under its own kind's name.
    StepReuseCounters n;
    for (size_t i = 1; i < kStepReuseKinds; ++i) {
        n.kind_checks[i] = i;
        n.kind_max_dev[i] = 0.01 * static_cast<double>(i);
    }
    const nlohmann::json j = step_reuse_json(StepReuseOptions{}, n)["checks_by_kind"];
    CHECK(j.size() == kStepReuseKinds - 1);
    CHECK(!j.contains("none"));
    for (size_t i = 1; i < kStepReuseKinds; ++i) {
        const nlohmann::json& k = j.at(step_reuse_kind_name(static_cast<StepReuseKind>(i)));
        CHECK(k["checks"] == i);
        CHECK(k["max_deviation"].get<double>() == Approx(0.01 * static_cast<double>(i)));
    }
    CHECK(j["extrapolated"]["checks"] == static_cast<size_t>(StepReuseKind::Extrapolated));
}
