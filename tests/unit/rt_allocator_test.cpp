#include <catch2/catch.hpp>
#include <map>
#include <random>

#include "runtime/rt/buddy_arena.h"
#include "runtime/rt/caching_allocator.h"
#include "runtime/rt/share_table.h"

using namespace sfumato::rt;

TEST_CASE("buddy: splits, merges buddies and uses non-power-of-two memory") {
    const uint64_t unit = 4096;
    BuddyArena a(0x1000'0000, 12 * unit, unit);  // regions of 8 and 4 units
    CHECK(a.capacity() == 12 * unit);
    CHECK(a.largest_free() == 8 * unit);
    auto x = a.allocate(unit);
    auto y = a.allocate(unit + 1);  // rounds to 2 units
    REQUIRE(x);
    REQUIRE(y);
    CHECK(a.block_size(*y) == 2 * unit);
    CHECK(a.allocated_bytes() == 3 * unit);
    auto big = a.allocate(4 * unit);  // the 4-unit region
    REQUIRE(big);
    CHECK_FALSE(a.allocate(8 * unit));  // the 8-unit region is split
    CHECK(a.free(*x));
    CHECK_FALSE(a.free(*x));  // double free
    CHECK(a.free(*y));
    CHECK(a.free(*big));
    CHECK(a.largest_free() == 8 * unit);  // buddies merged back
    CHECK(a.allocated_bytes() == 0);
    CHECK(a.free_blocks() == 2);  // one per region: regions never merge
}

TEST_CASE("caching allocator: reuses cached blocks, splits and merges") {
    BuddyArena arena(0, 64ull << 20, 1ull << 20);
    AllocatorParams p;
    CachingAllocator c(arena, p);
    auto a = c.allocate(1000);
    REQUIRE(a);
    CHECK(c.block_size(*a) == 1024);  // rounded to p.round
    CHECK(c.stats().device_allocs == 1);
    CHECK(c.stats().reserved == p.small_segment);
    auto b = c.allocate(3000);  // from the same segment
    REQUIRE(b);
    CHECK(*b == *a + 1024);
    CHECK(c.stats().device_allocs == 1);
    CHECK(c.free(*a));
    CHECK_FALSE(c.free(*a));        // double free is refused
    CHECK_FALSE(c.free(*b + 512));  // not the start of a block
    CHECK(c.free(*b));
    auto st = c.stats();
    CHECK(st.in_use == 0);
    CHECK(st.peak_in_use == 1024 + 3072);
    CHECK(st.largest_cached == p.small_segment);  // all merged into one block
    CHECK(st.fragmentation() == 0.0);
    CHECK(c.check().empty());
    auto big = c.allocate(5ull << 20);  // large pool: its own segment
    REQUIRE(big);
    CHECK(c.stats().device_allocs == 2);
    CHECK(c.free(*big));
    const uint64_t reserved = c.stats().reserved;
    CHECK(reserved == p.small_segment + arena.block_size(*big));
    CHECK(c.release_cached() == reserved);
    CHECK(c.stats().reserved == 0);
    CHECK(arena.allocated_bytes() == 0);
}

TEST_CASE("caching allocator: out of memory returns cached segments, then fails cleanly") {
    BuddyArena arena(0, 16ull << 20, 1ull << 20);
    CachingAllocator c(arena);
    auto a = c.allocate(100);  // takes a small segment and leaves it cached after free
    REQUIRE(a);
    REQUIRE(c.free(*a));
    auto big = c.allocate(16ull << 20);  // needs the whole arena: the cached segment is released
    REQUIRE(big);
    CHECK(c.stats().device_frees == 1);
    CHECK_FALSE(c.allocate(1));  // nothing left
    CHECK(c.check().empty());
}

TEST_CASE("caching allocator: fragmentation is reported") {
    BuddyArena arena(0, 64ull << 20, 1ull << 20);
    CachingAllocator c(arena);
    std::vector<uint64_t> v;
    for (int i = 0; i < 8; ++i) v.push_back(*c.allocate(64 * 1024));
    for (int i = 0; i < 8; i += 2) REQUIRE(c.free(v[i]));  // holes between live blocks
    auto st = c.stats();
    CHECK(st.fragmentation() > 0.0);
    CHECK(st.fragmentation() < 1.0);
}

TEST_CASE("caching allocator: 100000 random alloc/free never overlap and end empty") {
    BuddyArena arena(0x4000'0000, 1ull << 30, 1ull << 20);
    CachingAllocator c(arena);
    std::mt19937_64 rng(12345);
    std::map<uint64_t, uint64_t> live;  // addr -> requested bytes
    std::vector<uint64_t> order;
    uint64_t merges_seen = 0;
    for (int step = 0; step < 100000; ++step) {
        // Hovers around 256 live blocks so the arena is never exhausted.
        const bool do_alloc = live.empty() || (rng() % 100) < (live.size() < 256 ? 60u : 40u);
        if (do_alloc) {
            // Mostly small sizes, some large ones.
            uint64_t bytes = (rng() % 8 == 0) ? (1 + rng() % (8ull << 20)) : (1 + rng() % 65536);
            auto a = c.allocate(bytes);
            REQUIRE(a);
            auto next = live.lower_bound(*a);
            if (next != live.end()) REQUIRE(*a + bytes <= next->first);
            if (next != live.begin()) {
                auto prev = std::prev(next);
                REQUIRE(prev->first + prev->second <= *a);
            }
            live.emplace(*a, bytes);
            order.push_back(*a);
        } else {
            const size_t i = rng() % order.size();
            const uint64_t addr = order[i];
            order[i] = order.back();
            order.pop_back();
            live.erase(addr);
            REQUIRE(c.free(addr));
        }
        if (step % 5000 == 0) REQUIRE(c.check().empty());
    }
    for (uint64_t addr : order) REQUIRE(c.free(addr));
    merges_seen = c.stats().merges;
    CHECK(merges_seen > 0);
    REQUIRE(c.check().empty());  // includes "no two free neighbours": freed blocks merged
    auto st = c.stats();
    CHECK(st.in_use == 0);
    CHECK(st.live_blocks == 0);
    CHECK(st.requested == 0);
    // Every segment is a single free block again.
    CHECK(st.fragmentation() >= 0.0);
    c.release_cached();
    CHECK(c.stats().reserved == 0);
    CHECK(arena.allocated_bytes() == 0);
    CHECK(arena.largest_free() == arena.capacity());
}

TEST_CASE("share table: export, import, deferred free and saving") {
    ShareTable t;
    const uint32_t owner = 1, other = 2;
    const uint64_t addr = 0x1000, bytes = 1 << 20;
    const uint64_t h = t.export_block(owner, addr, bytes);
    CHECK(t.export_block(owner, addr, bytes) == h);
    CHECK_FALSE(t.import(owner, h));    // owner cannot import its own block
    CHECK_FALSE(t.import(other, h + 7));  // unknown handle
    auto m = t.import(other, h);
    REQUIRE(m);
    CHECK(*m == addr);
    CHECK(t.imported_bytes(other) == bytes);
    CHECK(t.saved_bytes() == bytes);
    CHECK(t.owner_free(owner, addr) == ShareTable::Close::Kept);  // importer still maps it
    CHECK_FALSE(t.import(3, h));                                  // dead for new importers
    CHECK(t.close(other, addr) == ShareTable::Close::FreeNow);
    CHECK(t.live_handles() == 0);
    CHECK(t.saved_bytes() == 0);
    CHECK(t.close(other, addr) == ShareTable::Close::NotImported);
}
