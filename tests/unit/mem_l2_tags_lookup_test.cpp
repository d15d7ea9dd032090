// L2Tags' lookups on the hot path: find() and allocate() with the rank policies (LRU, FIFO)
// moved in place (no virtual calls) and the 16-way tag scan and victim search done for all ways
// at once, against a plain model of the same cache (first matching way, first empty way, else
// the way touched least recently, or filled least recently for FIFO), on 16-way sets (the
// presets' vector path) and 8-way sets (the general path), with enough reuse for hits in every
// way position; the form the L2 lookups use (find() keeping a Probe, allocate() from it) alike.
#include <catch2/catch.hpp>

#include <random>
#include <vector>

#include "models/mem/i_replacement.h"
#include "models/mem/l2_tags.h"
#include "models/mem/rank_ages.h"

using namespace sfumato::mem;

namespace {

struct Model {
    uint32_t ways;
    bool lru;  // false: FIFO (a hit leaves the order)
    std::vector<uint64_t> tag;    // line + 1; 0: empty
    std::vector<uint64_t> stamp;  // last touch (LRU) or fill (FIFO)
    uint64_t clock = 0;
    Model(uint32_t sets, uint32_t w, bool l) : ways(w), lru(l), tag(size_t(sets) * w, 0), stamp(size_t(sets) * w, 0) {}
    // The way of `line` in `set`, or ways.
    uint32_t find(uint32_t set, uint64_t line) {
        for (uint32_t w = 0; w < ways; ++w)
            if (tag[size_t(set) * ways + w] == line + 1) {
                if (lru) stamp[size_t(set) * ways + w] = ++clock;
                return w;
            }
        return ways;
    }
    // The way filled with `line`; *victim: the line evicted (~0: none).
    uint32_t allocate(uint32_t set, uint64_t line, uint64_t* victim) {
        const size_t base = size_t(set) * ways;
        uint32_t way = ways;
        for (uint32_t w = 0; w < ways && way == ways; ++w)
            if (tag[base + w] == 0) way = w;
        *victim = ~uint64_t(0);
        if (way == ways) {
            way = 0;
            for (uint32_t w = 1; w < ways; ++w)
                if (stamp[base + w] < stamp[base + way]) way = w;
            *victim = tag[base + way] - 1;
        }
        tag[base + way] = line + 1;
        stamp[base + way] = ++clock;
        return way;
    }
};

void run(uint32_t ways, const char* policy, bool probe) {
    L2Geometry g;
    g.line_bytes = 512;
    g.sector_bytes = 32;
    g.sets = 8;
    g.ways = ways;
    g.slices = 1;
    L2Tags tags(g, make_replacement(policy, "k", g.sets, g.ways));
    Model ref(g.sets, ways, std::string(policy) == "lru");
    std::mt19937_64 rng(ways * 7919u + policy[0]);
    // Lines of a pool a little larger than the cache: hits, misses into empty ways and evictions.
    const uint64_t pool = uint64_t(g.sets) * ways * 3 / 2;
    uint64_t hits = 0, evictions = 0;
    for (int i = 0; i < 20000; ++i) {
        const uint64_t line = rng() % pool;
        const uint32_t set = tags.set_of(line);
        L2Tags::Probe pr;
        uint32_t slot = probe ? tags.find(line, pr) : tags.find(line, true);
        const uint32_t way = ref.find(set, line);
        if (way != ways) {
            REQUIRE(slot == set * ways + way);
            ++hits;
            continue;
        }
        REQUIRE(slot == L2Tags::kNone);
        if (probe) {
            REQUIRE(pr.set == set);
            uint32_t empty = 0;
            while (empty < ways && ref.tag[size_t(set) * ways + empty] != 0) ++empty;
            REQUIRE(pr.empty == empty);
        }
        L2Tags::Victim v;
        uint64_t victim = 0;
        slot = probe ? tags.allocate(line, pr, v) : tags.allocate(line, v);
        REQUIRE(slot == set * ways + ref.allocate(set, line, &victim));
        REQUIRE(v.evicted == (victim != ~uint64_t(0)));
        if (v.evicted) {
            REQUIRE(v.line_addr == victim);
            ++evictions;
        }
    }
    CHECK(hits > 5000);
    CHECK(evictions > 2000);
}

}  // namespace

TEST_CASE("mem l2 tags: lookups and victims match a plain LRU and FIFO cache on 16-way and 8-way sets") {
    for (const char* policy : {"lru", "fifo"})
        for (bool probe : {false, true}) {
            run(16, policy, probe);
            run(8, policy, probe);
        }
    // The victim search alone: every position of the oldest rank in a 16-way permutation.
    uint8_t a[16];
    for (uint32_t pos = 0; pos < 16; ++pos) {
        for (uint32_t w = 0; w < 16; ++w) a[w] = static_cast<uint8_t>((w + 15 - pos) % 16);
        REQUIRE(a[pos] == 15);
        CHECK(oldest_rank(a, 16) == pos);
    }
}
