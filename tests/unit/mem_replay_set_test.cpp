// L2Tags::replay_set (a set's replayed accesses applied at once, with its all-miss shortcut) must
// leave the tag array, the replacement ranks and the totals exactly as the per-access calls it
// replaces (find with touch, allocate on a miss, add_valid / add_dirty), for the policies that
// allow it (LRU, FIFO), on sequences that take the shortcut (distinct new lines on a full set) and
// sequences that do not (repeats, lines already held, empty ways, a line count below the ways).
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

#include "models/mem/i_replacement.h"
#include "models/mem/l2_tags.h"

using namespace sfumato::mem;

namespace {

struct Twin {
    L2Geometry g;
    L2Tags slow, fast;
    Twin(const L2Geometry& geo, const std::string& policy)
        : g(geo),
          slow(geo, make_replacement(policy, "k", geo.sets, geo.ways)),
          fast(geo, make_replacement(policy, "k", geo.sets, geo.ways)) {}

    // The reference: one access at a time, as MemorySystem::replay_line does.
    void apply_slow(uint32_t set, const std::vector<L2Tags::ReplayAccess>& acc, L2Tags::ReplayTotals& t,
                    std::vector<uint64_t>& evicted) {
        for (const L2Tags::ReplayAccess& a : acc) {
            REQUIRE(slow.set_of(a.line) == set);
            uint32_t slot = slow.find(a.line, true);
            uint64_t have = 0;
            if (slot == L2Tags::kNone) {
                L2Tags::Victim v;
                slot = slow.allocate(a.line, v);
                if (v.evicted) {
                    evicted.push_back(v.line_addr);
                    t.written_sectors += static_cast<uint64_t>(__builtin_popcountll(v.dirty));
                }
            } else {
                have = slow.valid(slot);
            }
            if (a.write) {
                slow.add_dirty(slot, a.mask);
            } else {
                t.read_sectors += static_cast<uint64_t>(__builtin_popcountll(a.mask & ~have));
                slow.add_valid(slot, a.mask);
            }
        }
    }

    void apply(uint32_t set, const std::vector<L2Tags::ReplayAccess>& acc) {
        L2Tags::ReplayTotals ts, tf;
        std::vector<uint64_t> es, ef;
        apply_slow(set, acc, ts, es);
        fast.replay_set(set, acc.data(), acc.size(), tf, &ef);
        CHECK(tf.read_sectors == ts.read_sectors);
        CHECK(tf.written_sectors == ts.written_sectors);
        std::sort(es.begin(), es.end());
        std::sort(ef.begin(), ef.end());
        CHECK(ef == es);
        check_same();
    }

    void check_same() {
        for (uint32_t slot = 0; slot < g.sets * g.ways; ++slot) {
            CHECK(fast.valid(slot) == slow.valid(slot));
            CHECK(fast.dirty(slot) == slow.dirty(slot));
        }
    }

    // The line of set `set` with index `k` (line addresses map to sets by the array's own rule).
    uint32_t line(uint32_t set, uint32_t k) const { return (k * g.sets + set) * g.slices; }

    // The ranks, compared through what they decide: each set filled with fresh lines way by way
    // evicts its lines oldest first (and the tags must agree slot by slot on the way).
    void check_victim_order(uint32_t fresh_base) {
        for (uint32_t set = 0; set < g.sets; ++set)
            for (uint32_t i = 0; i < g.ways; ++i) {
                const uint32_t l = line(set, fresh_base + i);
                L2Tags::Victim vs, vf;
                const uint32_t ss = slow.allocate(l, vs), sf = fast.allocate(l, vf);
                CHECK(sf == ss);
                CHECK(vf.evicted == vs.evicted);
                CHECK(vf.line_addr == vs.line_addr);
                CHECK(vf.dirty == vs.dirty);
            }
    }
};

L2Geometry geometry(uint32_t line_bytes, uint32_t sector_bytes, uint32_t sets, uint32_t ways,
                    uint32_t slices) {
    L2Geometry g;
    g.line_bytes = line_bytes;
    g.sector_bytes = sector_bytes;
    g.sets = sets;
    g.ways = ways;
    g.slices = slices;
    return g;
}

void random_sequences(const L2Geometry& g, const std::string& policy) {
    Twin tw(g, policy);
    REQUIRE(tw.fast.bulk_replay());
    std::mt19937 rng(1);
    const uint32_t sectors = g.line_bytes / g.sector_bytes;
    const uint64_t all = sectors >= 64 ? ~uint64_t(0) : (uint64_t(1) << sectors) - 1;
    uint32_t next = 0;  // fresh line indices per set
    for (uint32_t round = 0; round < 40; ++round) {
        for (uint32_t set = 0; set < g.sets; ++set) {
            // From none to three times the ways: short sequences leave ways empty or old lines
            // aged; long ones cycle through the set.
            const uint32_t n = rng() % (3 * g.ways + 1);
            std::vector<L2Tags::ReplayAccess> acc;
            const bool distinct = rng() % 2;  // fresh increasing lines: the all-miss shortcut
            for (uint32_t i = 0; i < n; ++i) {
                uint32_t k;
                if (distinct) k = next + i;
                else k = rng() % (next + i + 1);  // repeats and lines held from earlier rounds
                const uint64_t mask = (rng() % 3 == 0) ? all : (uint64_t(rng()) & all) | 1;
                acc.push_back({tw.line(set, k), rng() % 4 == 0 ? 1u : 0u, mask});
            }
            next += n;
            tw.apply(set, acc);
        }
    }
    tw.check_victim_order(next + 1);
}

}  // namespace

TEST_CASE("L2 replay by set equals per-access replay (LRU with 16 ways of 16 sectors)", "[mem][replay]") {
    random_sequences(geometry(512, 32, 8, 16, 3), "lru");
}

TEST_CASE("L2 replay by set equals per-access replay (FIFO with 16 ways of 16 sectors)", "[mem][replay]") {
    random_sequences(geometry(512, 32, 8, 16, 3), "fifo");
}

TEST_CASE("L2 replay by set equals per-access replay (LRU with 6 ways of 32 sectors)", "[mem][replay]") {
    // Lines wider than 16 sectors keep their masks in the wide state; ways not a multiple of 4
    // or 16 take the scalar compares and rank updates.
    random_sequences(geometry(2048, 64, 4, 6, 2), "lru");
}

TEST_CASE("L2 replay by set is offered only for per-set rank policies", "[mem][replay]") {
    const L2Geometry g = geometry(128, 32, 4, 4, 1);
    CHECK(L2Tags(g, make_replacement("lru", "k", g.sets, g.ways)).bulk_replay());
    CHECK(L2Tags(g, make_replacement("fifo", "k", g.sets, g.ways)).bulk_replay());
    // One generator for the whole array: accesses must reach it in their own order.
    CHECK_FALSE(L2Tags(g, make_replacement("random", "k", g.sets, g.ways)).bulk_replay());
}
