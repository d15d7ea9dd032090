// Clock domains: every configured frequency is exact (a rational period in ps), edges never
// drift, and tick <-> cycle conversions are consistent.
#include <catch2/catch.hpp>

#include "sim/time.h"

using namespace sfumato;

TEST_CASE("time: 1800 MHz is exact: n cycles last n / 1.8 GHz to the ps, with no drift") {
    const ClockDomain c = ClockDomain::from_mhz(1800);
    CHECK(c.period_num_ps() == 5000);
    CHECK(c.period_den() == 9);
    // 1.8 million cycles are exactly 1 ms; a rounded 556 ps period would be 0.8 us late.
    CHECK(c.to_tick(Cycle(1800000)).v == 1000000000ull);
    CHECK(c.ticks(768700) == (768700ull * 5000 + 8) / 9);
    CHECK(c.to_us(768700) == Approx(768700.0 / 1800.0).epsilon(1e-15));
    CHECK(c.freq_ghz() == Approx(1.8).epsilon(1e-15));
    // Every edge is within 1 ps of its exact time.
    for (uint64_t n : {1ull, 2ull, 9ull, 10ull, 12345ull, 999999937ull}) {
        const double exact = static_cast<double>(n) * 5000.0 / 9.0;
        CHECK(static_cast<double>(c.to_tick(Cycle(n)).v) >= exact);
        CHECK(static_cast<double>(c.to_tick(Cycle(n)).v) < exact + 1.0);
    }
}

TEST_CASE("time: ceil_cycle and floor_cycle invert to_tick around every edge") {
    for (uint64_t mhz : {1000ull, 1800ull, 1234ull, 3ull}) {
        INFO(mhz);
        const ClockDomain c = ClockDomain::from_mhz(mhz);
        for (uint64_t n = 0; n < 50; ++n) {
            const Tick t = c.to_tick(Cycle(n));
            CHECK(c.ceil_cycle(t).v == n);
            CHECK(c.floor_cycle(t).v == n);
            if (t.v > 0) CHECK(c.ceil_cycle(Tick(t.v - 1)).v == n);
            CHECK(c.floor_cycle(Tick(t.v + 1)).v == n);
            CHECK(c.ceil_cycle(Tick(t.v + 1)).v == n + 1);
        }
    }
    // Far beyond 64-bit products the conversions still hold (128-bit path).
    const ClockDomain c = ClockDomain::from_mhz(1800);
    const uint64_t n = 1ull << 62;
    CHECK(c.ceil_cycle(c.to_tick(Cycle(n / 1000))).v == n / 1000);
}

TEST_CASE("time: an integer period behaves as before") {
    const ClockDomain c(1000);
    CHECK(c.to_tick(Cycle(7)).v == 7000);
    CHECK(c.ceil_cycle(Tick(7001)).v == 8);
    CHECK(c.floor_cycle(Tick(7999)).v == 7);
    CHECK(c.cycles_in(12345) == 12);
    CHECK(ClockDomain::from_mhz(1000).ticks(5) == 5000);
}
