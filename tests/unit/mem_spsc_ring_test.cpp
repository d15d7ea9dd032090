// The memory system's single-producer single-consumer ring (spsc_ring.h): a producer thread and a
// consumer thread pass a million numbered entries through a small ring (full and empty often);
// every entry arrives once, in order, with its payload.
#include <catch2/catch.hpp>

#include <thread>

#include "models/mem/spsc_ring.h"

using namespace sfumato::mem;

TEST_CASE("mem spsc ring: two threads pass every entry once and in order through a full ring") {
    struct E {
        uint64_t n, twice;
    };
    SpscRing<E> ring(64);
    constexpr uint64_t kCount = 1000000;
    std::thread producer([&] {
        for (uint64_t i = 0; i < kCount; ++i) {
            E* e;
            while (!(e = ring.slot())) {
                ring.publish();
                std::this_thread::yield();
            }
            *e = E{i, 2 * i};
            ring.commit();
            if (i % 7 == 0) ring.publish();  // publications at odd points too
        }
        ring.publish();
    });
    uint64_t next = 0, bad = 0, ahead_bad = 0;
    while (next < kCount) {
        const E* e = ring.front();
        if (!e) {
            ring.release();
            std::this_thread::yield();
            continue;
        }
        if (const E* a = ring.ahead(1); a && a->n != e->n + 1) ++ahead_bad;
        if (e->n != next || e->twice != 2 * next) ++bad;
        ++next;
        ring.pop();
    }
    producer.join();
    CHECK(bad == 0);
    CHECK(ahead_bad == 0);
    CHECK(ring.front() == nullptr);
}
