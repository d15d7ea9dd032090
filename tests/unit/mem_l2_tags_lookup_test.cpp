// L2Tags' lookups on the hot path: find() and allocate() with the rank policies (LRU, FIFO)
// moved in place (no virtual calls) and the 16-way tag scan and victim search done for all ways
// at once, against a plain model of the same cache (first matching way, first empty way, else
// the way touched least recently, or filled least recently for FIFO), on 16-way sets (the
// presets' vector path) and 8-way sets (the general path), with enough reuse for hits in every
// way position; the forms the L2 lookups use (find() keeping a Probe, allocate() from it, and
// access(): the lookup and the allocation in one call, inline for 16-way rank sets of at most 16
// sectors, with the new line's sectors and the victim's dirty ones) alike, on lines of 16 sectors
// and of 64 (their state kept apart). Then dirty_bytes() against a count slot by slot.
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

enum class Form { kFind, kProbe, kAccess };

void run(uint32_t ways, const char* policy, Form form, uint32_t line_bytes = 512) {
    L2Geometry g;
    g.line_bytes = line_bytes;
    g.sector_bytes = 32;
    g.sets = 8;
    g.ways = ways;
    g.slices = 1;
    const uint32_t sectors = g.line_bytes / g.sector_bytes;
    const uint64_t all = sectors == 64 ? ~uint64_t(0) : (uint64_t(1) << sectors) - 1;
    L2Tags tags(g, make_replacement(policy, "k", g.sets, g.ways));
    Model ref(g.sets, ways, std::string(policy) == "lru");
    std::vector<uint64_t> dirty(size_t(g.sets) * ways, 0);  // access(): each slot's dirty sectors
    std::mt19937_64 rng(ways * 7919u + policy[0] + line_bytes);
    // Lines of a pool a little larger than the cache: hits, misses into empty ways and evictions.
    const uint64_t pool = uint64_t(g.sets) * ways * 3 / 2;
    uint64_t hits = 0, evictions = 0, unreserved = 0;
    for (int i = 0; i < 20000; ++i) {
        const uint64_t line = rng() % pool;
        const uint32_t set = tags.set_of(line);
        if (form == Form::kAccess) {
            // A miss that does not reserve leaves everything as it was (later lookups check it).
            const bool reserve = rng() % 4 != 0;
            const uint64_t valid = (rng() & all) | 1;
            const uint64_t d = rng() % 2 ? valid : 0;
            L2Tags::Victim v{7, 9, false};  // written only on an eviction
            const L2Tags::Access a = tags.access(line, reserve, valid, d, v);
            const uint32_t way = ref.find(set, line);
            if (way != ways) {
                REQUIRE(a.kind == L2Tags::kHit);
                REQUIRE(a.slot == set * ways + way);
                ++hits;
                continue;
            }
            if (!reserve) {
                REQUIRE(a.kind == L2Tags::kMiss);
                REQUIRE(a.slot == L2Tags::kNone);
                ++unreserved;
                continue;
            }
            uint64_t victim = 0;
            const uint32_t slot = set * ways + ref.allocate(set, line, &victim);
            REQUIRE(a.slot == slot);
            if (victim != ~uint64_t(0)) {
                REQUIRE(a.kind == L2Tags::kEvicted);
                REQUIRE(v.evicted);
                REQUIRE(v.line_addr == victim);
                REQUIRE(v.dirty == dirty[slot]);
                ++evictions;
            } else {
                REQUIRE(a.kind == L2Tags::kFresh);
                REQUIRE((v.line_addr == 7 && v.dirty == 9 && !v.evicted));
            }
            REQUIRE(tags.valid(slot) == valid);
            REQUIRE(tags.dirty(slot) == d);
            dirty[slot] = d;
            continue;
        }
        L2Tags::Probe pr;
        uint32_t slot = form == Form::kProbe ? tags.find(line, pr) : tags.find(line, true);
        const uint32_t way = ref.find(set, line);
        if (way != ways) {
            REQUIRE(slot == set * ways + way);
            ++hits;
            continue;
        }
        REQUIRE(slot == L2Tags::kNone);
        if (form == Form::kProbe) {
            REQUIRE(pr.set == set);
            uint32_t empty = 0;
            while (empty < ways && ref.tag[size_t(set) * ways + empty] != 0) ++empty;
            REQUIRE(pr.empty == empty);
        }
        L2Tags::Victim v;
        uint64_t victim = 0;
        slot = form == Form::kProbe ? tags.allocate(line, pr, v) : tags.allocate(line, v);
        REQUIRE(slot == set * ways + ref.allocate(set, line, &victim));
        REQUIRE(v.evicted == (victim != ~uint64_t(0)));
        if (v.evicted) {
            REQUIRE(v.line_addr == victim);
            ++evictions;
        }
    }
    CHECK(hits > 5000);
    CHECK(evictions > 2000);
    if (form == Form::kAccess) CHECK(unreserved > 1000);
}

}  // namespace

TEST_CASE("mem l2 tags: lookups and victims match a plain LRU and FIFO cache on 16-way and 8-way sets") {
    for (const char* policy : {"lru", "fifo"})
        for (Form form : {Form::kFind, Form::kProbe, Form::kAccess}) {
            run(16, policy, form);
            run(8, policy, form);
            run(16, policy, form, 2048);  // 64 sectors: not the inline access path
        }
    // The victim search alone: every position of the oldest rank in a 16-way permutation.
    uint8_t a[16];
    for (uint32_t pos = 0; pos < 16; ++pos) {
        for (uint32_t w = 0; w < 16; ++w) a[w] = static_cast<uint8_t>((w + 15 - pos) % 16);
        REQUIRE(a[pos] == 15);
        CHECK(oldest_rank(a, 16) == pos);
    }
}

TEST_CASE("mem l2 tags: dirty_bytes counts the dirty sectors of every line, narrow and wide states") {
    struct Shape {
        uint32_t sets, ways, line_bytes;
    };
    // 15 slots (not a multiple of the walk's four), the presets' 16 ways, and 64-sector lines.
    for (const Shape sh : {Shape{5, 3, 512}, Shape{8, 16, 512}, Shape{4, 4, 2048}}) {
        L2Geometry g;
        g.line_bytes = sh.line_bytes;
        g.sector_bytes = 32;
        g.sets = sh.sets;
        g.ways = sh.ways;
        g.slices = 1;
        L2Tags tags(g, make_replacement("lru", "k", g.sets, g.ways));
        const uint32_t sectors = g.line_bytes / g.sector_bytes;
        std::mt19937_64 rng(sh.sets * 31u + sh.ways);
        CHECK(tags.dirty_bytes() == 0);
        for (uint64_t line = 0; line < uint64_t(g.sets) * g.ways; ++line) {  // every slot valid, clean
            L2Tags::Victim v;
            tags.add_valid(tags.allocate(line, v), 1);
        }
        CHECK(tags.dirty_bytes() == 0);
        for (int i = 0; i < 200; ++i) {
            const uint32_t slot = static_cast<uint32_t>(rng() % (uint64_t(g.sets) * g.ways));
            const uint32_t first = static_cast<uint32_t>(rng() % sectors);
            const uint32_t n = 1 + static_cast<uint32_t>(rng() % (sectors - first));
            tags.add_dirty(slot, (n == 64 ? ~uint64_t(0) : (uint64_t(1) << n) - 1) << first);
            uint64_t expect = 0;
            for (uint32_t s = 0; s < g.sets * g.ways; ++s)
                for (uint64_t d = tags.dirty(s); d; d &= d - 1) expect += g.sector_bytes;
            REQUIRE(tags.dirty_bytes() == expect);
        }
    }
}
