// FastDiv32 (models/mem/fast_div.h) against the hardware divide: edge numerators and a
// deterministic pseudo-random sweep, for divisors the memory system uses (slices, sets, rates).
#include <catch2/catch.hpp>

#include "models/mem/fast_div.h"

using sfumato::mem::FastDiv32;

TEST_CASE("mem fast_div: quotient and remainder equal the hardware divide for 32-bit numerators") {
    const uint32_t divisors[] = {1, 2, 3, 7, 24, 32, 48, 64, 86, 110, 512, 1000, 65535, 0x7fffffffu, 0x80000001u, 0xffffffffu};
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (uint32_t d : divisors) {
        const FastDiv32 f(d);
        uint64_t bad = 0;
        auto check = [&](uint32_t a) { bad += f.div(a) != a / d || f.mod(a) != a % d; };
        for (uint32_t a : {0u, 1u, d - 1, d, d + 1, 0x7fffffffu, 0x80000000u, 0xfffffffeu, 0xffffffffu}) check(a);
        for (int i = 0; i < 20000; ++i) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            check(static_cast<uint32_t>(x));
        }
        INFO("divisor " << d);
        CHECK(bad == 0);
    }
}

TEST_CASE("mem fast_div: FastDiv64 equals the hardware divide for 64-bit numerators") {
    const uint64_t divisors[] = {1,    2,    3,    7,           9,           625,         714,
                                 1000, 3900, 1u << 20, 0xffffffffull, 0x100000001ull, 0x8000000000000001ull,
                                 ~uint64_t(0) - 1, ~uint64_t(0)};
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (uint64_t d : divisors) {
        const sfumato::mem::FastDiv64 f(d);
        uint64_t bad = 0;
        auto check = [&](uint64_t a) { bad += f.div(a) != a / d; };
        for (uint64_t a : {uint64_t(0), uint64_t(1), d - 1, d, d + 1, 2 * d - 1, 2 * d, uint64_t(0xffffffff),
                           uint64_t(1) << 32, uint64_t(1) << 63, ~uint64_t(0) - 1, ~uint64_t(0)})
            check(a);
        // Multiples and their neighbours, where a quotient one short would show.
        for (uint64_t k : {uint64_t(3), uint64_t(1000003), ~uint64_t(0) / d})
            for (uint64_t a : {k * d - 1, k * d, k * d + 1})
                if (k <= ~uint64_t(0) / d) check(a);
        for (int i = 0; i < 20000; ++i) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            check(x);
            check(x >> (i % 64));
        }
        INFO("divisor " << d);
        CHECK(bad == 0);
    }
}
