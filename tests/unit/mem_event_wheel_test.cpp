// The memory system's calendar queue releases events in (tick, late, push order), like a heap
// would, across bucket wrap-around and the far-future overflow.
#include <catch2/catch.hpp>
#include <queue>
#include <tuple>

#include "models/mem/event_wheel.h"

using namespace sfumato::mem;

namespace {

// The reference order: tick, then late events after the others, then push order.
struct Ref {
    uint64_t tick;
    bool late;
    uint64_t seq;
    bool operator>(const Ref& o) const { return std::tie(tick, late, seq) > std::tie(o.tick, o.late, o.seq); }
};

// A wheel beside a heap of the same events (the reference order), and a xorshift generator.
struct Checked {
    EventWheel w;
    std::priority_queue<Ref, std::vector<Ref>, std::greater<Ref>> ref;
    uint64_t seq = 0, x;
    size_t popped = 0;
    explicit Checked(uint64_t seed) : x(seed) {}
    uint64_t rnd() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        return x;
    }
    void push(uint64_t t, bool late = false) {
        w.push(t, nullptr, static_cast<uint32_t>(seq), late ? 1 : 0, late);
        ref.push({t, late, seq});
        ++seq;
    }
    uint64_t ref_next() const { return ref.empty() ? EventWheel::kEmpty : ref.top().tick; }
    // Pops every event due at `now`, each the reference's next; returns the failed pop's `next`.
    uint64_t pop_due(uint64_t now) {
        WheelItem it;
        uint64_t next = 0;
        while (w.pop_due(now, it, next)) {
            REQUIRE(!ref.empty());
            REQUIRE(it.tick == ref.top().tick);
            REQUIRE(it.arg == ref.top().seq);
            REQUIRE(it.kind == (ref.top().late ? 1 : 0));
            ref.pop();
            ++popped;
        }
        return next;
    }
    // pop_due(now), whose failed pop reports the earliest pending tick, as next_tick() does.
    void pop_due_checked(uint64_t now) {
        const uint64_t next = pop_due(now);
        REQUIRE(next == ref_next());
        REQUIRE(w.next_tick() == next);
    }
    // Pops everything left, in order: the wheel ends empty, every pushed event popped once.
    void drain() {
        while (!ref.empty()) pop_due(ref.top().tick);
        CHECK(w.empty());
        CHECK(popped == seq);
    }
};

}  // namespace

TEST_CASE("mem event wheel: pops in tick then push order across wrap-around and overflow") {
    Checked c(12345);
    uint64_t now = 0;
    for (int step = 0; step < 20000; ++step) {
        const int pushes = static_cast<int>(c.rnd() % 4);
        for (int i = 0; i < pushes; ++i) {
            // Mostly near events, some equal ticks, some far beyond the window.
            const uint64_t r = c.rnd() % 100;
            const uint64_t d = r < 10 ? 0 : r < 95 ? c.rnd() % 200000 : c.rnd() % 50000000;
            c.push(now + d);
        }
        REQUIRE(c.w.next_tick() == c.ref_next());
        if (!c.ref.empty()) now = c.ref.top().tick;
        const uint64_t next = c.pop_due(now);
        REQUIRE((c.ref.empty() || c.ref.top().tick > now));
        // The failed pop reports the earliest pending tick.
        REQUIRE(next == c.ref_next());
    }
    CHECK(c.popped > 10000);
}

TEST_CASE("mem event wheel: run-ahead pops stop at the first later event of the stop kind") {
    EventWheel w;
    // kind 1 may run ahead, kind 2 waits for its own tick.
    w.push(100, nullptr, 0, 1);
    w.push(150, nullptr, 1, 1);
    w.push(200, nullptr, 2, 2);
    w.push(210, nullptr, 3, 1);  // behind the kind-2 event: must wait too
    w.push(900, nullptr, 4, 1);  // beyond the limit
    WheelItem it;
    uint64_t next = 0;
    std::vector<uint32_t> got;
    while (w.pop_due(100, 500, 2, it, next)) got.push_back(it.arg);
    CHECK(got == std::vector<uint32_t>{0, 1});
    CHECK(next == 200);
    got.clear();
    while (w.pop_due(200, 600, 2, it, next)) got.push_back(it.arg);
    CHECK(got == std::vector<uint32_t>{2, 3});
    CHECK(next == 900);
    CHECK(w.size() == 1);
}

TEST_CASE("mem event wheel: crowded buckets of interleaved ticks keep (tick, push) order") {
    // Many events per 2^kShift-ps bucket at a few ticks ps apart, pushed out of tick order and
    // popped a bucket at a time while more arrive: inserts land before the tail, after the
    // finger (the node inserted last) or before it, and pops remove the finger.
    Checked c(777);
    uint64_t now = 0;
    const uint64_t bucket = uint64_t(1) << EventWheel::kShift;
    for (int step = 0; step < 4000; ++step) {
        const int pushes = static_cast<int>(c.rnd() % 24);
        for (int i = 0; i < pushes; ++i) c.push(now + (c.rnd() % 4) * bucket + c.rnd() % 5);  // 5 ticks per bucket
        now += c.rnd() % (bucket / 2);
        const uint64_t next = c.pop_due(now);
        REQUIRE(next == c.ref_next());
    }
    CHECK(c.popped > 20000);
}

TEST_CASE("mem event wheel: far events pushed in order and out of order leave in (tick, push) order") {
    // A DMA engine pushes a copy's link arrivals far ahead in increasing tick order (the overflow's
    // FIFO); other far events come out of order (its heap), some at the very ticks of the
    // arrivals. Both must merge as one (tick, push)-ordered queue, also across the FIFO's
    // compaction (thousands consumed) and while the window crawls towards them.
    Checked c(4242);
    uint64_t now = 0;
    const uint64_t window = EventWheel::kBuckets << EventWheel::kShift;
    uint64_t run_end = 0;  // the last arrival's tick
    for (int step = 0; step < 3000; ++step) {
        if (step % 500 == 0) {  // a copy: 5,000 arrivals 40 ps apart, starting far ahead
            uint64_t t = std::max(run_end, now + 2 * window);
            for (int i = 0; i < 5000; ++i) c.push(t += 40);
            run_end = t;
        }
        const int pushes = static_cast<int>(c.rnd() % 3);
        for (int i = 0; i < pushes; ++i) {
            const uint64_t r = c.rnd() % 10;
            // Far and out of order; or exactly at an arrival's tick (a tie across FIFO and heap);
            // or near.
            const uint64_t t = r < 4   ? now + window + c.rnd() % (4 * window)
                               : r < 6 ? now + 2 * window + 40 * (c.rnd() % 5000)
                                       : now + c.rnd() % 1000;
            c.push(t);
        }
        now += c.rnd() % (window / 16);
        c.pop_due_checked(now);
    }
    c.drain();  // then everything left, in order
}

TEST_CASE("mem event wheel: late events follow every event of their tick, pushed before or after them") {
    // The memory system's arrivals (late) are pushed a NoC latency ahead; internal events of the
    // same ticks are pushed later, some far ahead (the overflow), and must still leave first.
    Checked c(9001);
    uint64_t now = 0;
    const uint64_t window = EventWheel::kBuckets << EventWheel::kShift;
    for (int step = 0; step < 20000; ++step) {
        const int pushes = static_cast<int>(c.rnd() % 6);
        for (int i = 0; i < pushes; ++i) {
            // A few ticks per bucket (many ties), some beyond the window, a few before the last
            // pop's time (they leave first), half of them late.
            const uint64_t r = c.rnd() % 100;
            const uint64_t d = r < 95 ? (c.rnd() % 6) * 40 : window + (c.rnd() % 6) * 40;
            const uint64_t t = r < 3 && now >= 400 ? now - 40 * (1 + c.rnd() % 10) : now + d;
            c.push(t, c.rnd() % 2 == 0);
        }
        if (c.rnd() % 3 == 0) now += c.rnd() % 120;
        c.pop_due_checked(now);
    }
    c.drain();
}

TEST_CASE("mem event wheel: a run-ahead pop stops at a waiting event before a late event of its tick") {
    EventWheel w;
    w.push(300, nullptr, 0, 1, true);  // late: after the events of tick 300 pushed below
    w.push(200, nullptr, 1, 1, true);
    w.push(300, nullptr, 2, 2);  // waits for its own tick
    w.push(200, nullptr, 3, 1);
    WheelItem it;
    uint64_t next = 0;
    std::vector<uint32_t> got;
    while (w.pop_due(100, 500, 2, it, next)) got.push_back(it.arg);
    CHECK(got == std::vector<uint32_t>{3, 1});
    CHECK(next == 300);
    got.clear();
    while (w.pop_due(300, 500, 2, it, next)) got.push_back(it.arg);
    CHECK(got == std::vector<uint32_t>{2, 0});
    CHECK(next == EventWheel::kEmpty);
}
