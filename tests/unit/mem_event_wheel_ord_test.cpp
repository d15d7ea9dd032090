// The wheel's `ord` (event_wheel.h): events of one tick and lateness leave in ord order whatever
// order they were pushed in, an even ord's events by their sequence (arg, modulo 2^32), an odd
// ord's in push order; near and far (overflow) events alike. This is what lets the memory
// system's second thread insert the HBM side's events after later L2-side ones (memory_system_mt.cpp).
#include <catch2/catch.hpp>

#include <algorithm>
#include <tuple>
#include <vector>

#include "models/mem/event_wheel.h"

using namespace sfumato::mem;

namespace {

struct Ev {
    uint64_t tick;
    bool late;
    uint64_t ord;
    uint32_t arg;
    uint32_t push;  // push index (the tie-break of equal odd ords)
};

// The expected order: (tick, late, ord), then arg (modular) for an even ord, else push order.
bool before(const Ev& a, const Ev& b) {
    if (std::tie(a.tick, a.late, a.ord) != std::tie(b.tick, b.late, b.ord))
        return std::tie(a.tick, a.late, a.ord) < std::tie(b.tick, b.late, b.ord);
    if (!(a.ord & 1) && a.arg != b.arg) return static_cast<int32_t>(a.arg - b.arg) < 0;
    return a.push < b.push;
}

uint64_t g_x = 88172645463325252ull;
uint64_t rnd() {
    g_x ^= g_x << 13;
    g_x ^= g_x >> 7;
    g_x ^= g_x << 17;
    return g_x;
}

// Pushes `evs` in the given order, then pops all (peeking first) and checks the expected order.
void check(std::vector<Ev> evs) {
    EventWheel w;
    for (uint32_t i = 0; i < evs.size(); ++i) {
        evs[i].push = i;
        w.push(evs[i].tick, &evs[i], evs[i].arg, 0, evs[i].late, evs[i].ord);
    }
    std::vector<Ev> want = evs;
    std::stable_sort(want.begin(), want.end(), before);
    for (const Ev& e : want) {
        WheelItem p, it;
        bool late = false;
        REQUIRE(w.peek(p, late));
        REQUIRE(w.pop_due(e.tick, it));
        const Ev& got = *static_cast<const Ev*>(it.ptr);
        REQUIRE(got.push == e.push);
        REQUIRE(it.tick == e.tick);
        REQUIRE(it.seq == e.ord);
        REQUIRE(p.ptr == it.ptr);
        REQUIRE(late == e.late);
    }
    WheelItem it;
    bool late;
    REQUIRE_FALSE(w.peek(it, late));
    REQUIRE(w.empty());
}

}  // namespace

TEST_CASE("mem event wheel ord: out-of-order inserts leave in ord order, near and far") {
    for (uint64_t span : {uint64_t(2000), uint64_t(40) << 20}) {  // inside the window; most beyond it
        std::vector<Ev> evs;
        for (uint32_t i = 0; i < 3000; ++i) {
            const uint64_t tick = rnd() % span / 625 * 625;  // few distinct ticks: many ties
            const bool late = rnd() % 5 == 0;
            const uint64_t ord = late ? 1 : rnd() % 64;
            evs.push_back({tick, late, ord, static_cast<uint32_t>(rnd() % 8), 0});
        }
        check(evs);
    }
}

TEST_CASE("mem event wheel ord: an even ord's ties go by their sequence modulo 2^32") {
    // Sequences across the wrap: 0xfffffffe before 0xffffffff before 0 before 1, pushed reversed.
    std::vector<Ev> evs = {{5000, false, 8, 1u, 0}, {5000, false, 8, 0u, 0}, {5000, false, 8, 0xffffffffu, 0},
                           {5000, false, 8, 0xfffffffeu, 0}, {5000, false, 7, 99u, 0}, {5000, false, 9, 0u, 0}};
    check(evs);
    // Equal odd ords keep push order whatever their arg.
    check({{7000, false, 3, 5u, 0}, {7000, false, 3, 1u, 0}, {7000, false, 3, 9u, 0}});
}

TEST_CASE("mem event wheel ord: the default ord keeps push order") {
    EventWheel w;
    for (uint32_t i = 0; i < 100; ++i) w.push(1000 + (i % 3) * 64, nullptr, 100 - i, 0);
    WheelItem it;
    uint32_t last[3] = {1000, 1000, 1000};
    while (w.pop_due(1u << 20, it)) {
        const uint32_t k = static_cast<uint32_t>((it.tick - 1000) / 64);
        REQUIRE(it.arg < last[k]);  // pushed with decreasing arg: push order
        last[k] = it.arg;
    }
}
