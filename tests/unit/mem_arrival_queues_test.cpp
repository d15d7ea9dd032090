// The memory system's arrivals (models/mem/arrival_queues.h): one FIFO per slice and a winner
// tree over their heads must release items in the order one priority queue of all of them would,
// (tick, push order), whether a slice's pushes come in tick order (as the memory system's do) or
// not, with ties across slices and slice counts that are not powers of two.
#include <catch2/catch.hpp>
#include <algorithm>
#include <queue>
#include <tuple>

#include "models/mem/arrival_queues.h"

using namespace sfumato::mem;

namespace {
struct Ref {
    uint64_t tick, seq;
    int* id;
    bool operator>(const Ref& o) const { return std::tie(tick, seq) > std::tie(o.tick, o.seq); }
};
}  // namespace

TEST_CASE("mem arrival queues: release in (tick, push order) like one priority queue") {
    for (const uint32_t slices : {1u, 3u, 48u}) {
        for (const bool in_order : {true, false}) {
            ArrivalQueues<int> q(slices);
            std::priority_queue<Ref, std::vector<Ref>, std::greater<Ref>> ref;
            std::vector<uint64_t> tail(slices, 0);  // per slice: its latest tick (in-order pushes)
            std::vector<int> ids(200000);
            uint64_t x = 88172645463325252ull, now = 0, seq = 0;
            auto rnd = [&] {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                return x;
            };
            size_t n = 0;
            for (int step = 0; step < 20000; ++step) {
                const int pushes = static_cast<int>(rnd() % 6);
                for (int i = 0; i < pushes && n < ids.size(); ++i) {
                    const uint32_t s = static_cast<uint32_t>(rnd() % slices);
                    // Small tick steps: many ties across slices.
                    uint64_t t = now + rnd() % 8;
                    if (in_order) {
                        t = std::max(t, tail[s] + 1 + rnd() % 3);
                        tail[s] = t;
                    }
                    q.push(s, t, &ids[n]);
                    ref.push({t, seq++, &ids[n]});
                    ++n;
                }
                const int pops = static_cast<int>(rnd() % 6);
                for (int i = 0; i < pops && !ref.empty(); ++i) {
                    REQUIRE(!q.empty());
                    REQUIRE(q.top_tick() == ref.top().tick);
                    REQUIRE(q.top().req == ref.top().id);
                    now = std::max(now, ref.top().tick);
                    q.pop();
                    ref.pop();
                }
                REQUIRE(q.size() == ref.size());
            }
            while (!ref.empty()) {
                REQUIRE(q.top().req == ref.top().id);
                q.pop();
                ref.pop();
            }
            CHECK(q.empty());
            CHECK(q.top_tick() == ArrivalQueues<int>::kEmpty);
        }
    }
}
