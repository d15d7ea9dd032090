// The runtime's device-memory allocator (one per host context), in the style of the caching
// allocators of deep-learning frameworks: requests are rounded, served best-fit from cached free
// blocks kept in power-of-two size bins (a small pool and a large pool), split when a block is
// larger than needed, and merged with free neighbours when freed. Only when no cached block fits
// does it take a new segment from the device's BuddyArena (a device-level allocation, which costs
// host time); cached segments go back to the arena only on release_cached() or when the arena is
// out of memory. Accounting only: no data moves here.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "runtime/rt/buddy_arena.h"

namespace sfumato::rt {

struct AllocatorParams {
    uint64_t round = 512;                   // every request is rounded up to this (B)
    uint64_t small_max = 1ull << 20;        // requests up to this come from the small pool (B)
    uint64_t small_segment = 2ull << 20;    // segment size of the small pool (B)
    uint64_t large_round = 2ull << 20;      // large-pool segments are rounded up to this (B)
};

struct AllocatorStats {
    uint64_t in_use = 0;          // bytes in live blocks (rounded sizes)
    uint64_t requested = 0;       // bytes the live blocks were asked for
    uint64_t peak_in_use = 0;
    uint64_t reserved = 0;        // bytes of segments held from the arena
    uint64_t peak_reserved = 0;
    uint64_t device_allocs = 0;   // segments taken from the arena (cumulative)
    uint64_t device_frees = 0;    // segments returned to the arena (cumulative)
    uint64_t allocs = 0, frees = 0, splits = 0, merges = 0, cache_hits = 0;
    uint64_t live_blocks = 0;
    uint64_t largest_cached = 0;  // largest free cached block
    // 1 - largest cached free block / all cached free bytes: 0 when the cache is one block.
    double fragmentation() const {
        const uint64_t cached = reserved - in_use;
        return cached ? 1.0 - static_cast<double>(largest_cached) / static_cast<double>(cached) : 0.0;
    }
};

class CachingAllocator {
public:
    CachingAllocator(BuddyArena& arena, AllocatorParams params = {});
    ~CachingAllocator();
    CachingAllocator(const CachingAllocator&) = delete;
    CachingAllocator& operator=(const CachingAllocator&) = delete;

    // A device address of at least `bytes`, or nullopt when the device is out of memory.
    std::optional<uint64_t> allocate(uint64_t bytes);
    // Frees a live block; false when addr is not the start of a live block (bad pointer or
    // double free): nothing changes then.
    bool free(uint64_t addr);
    // Size of the live block starting at addr (0 if none), and the live block containing addr.
    uint64_t block_size(uint64_t addr) const;
    std::optional<std::pair<uint64_t, uint64_t>> live_block_containing(uint64_t addr) const;
    // Returns every fully free segment to the arena; returns the bytes released.
    uint64_t release_cached();

    AllocatorStats stats() const;
    // Checks the invariants (blocks tile their segments, no two free neighbours, bins match the
    // free blocks, stats match the blocks); returns an empty string or the first violation.
    std::string check() const;

private:
    struct Block {
        uint64_t size;
        uint64_t segment;  // base address of its segment
        uint64_t requested;
        bool allocated;
        bool small;
    };
    using Bin = std::set<std::pair<uint64_t, uint64_t>>;  // (size, addr)
    Bin& bin_for(bool small, uint64_t size);
    void bin_insert(uint64_t addr, const Block& b);
    void bin_erase(uint64_t addr, const Block& b);
    std::optional<uint64_t> find_cached(bool small, uint64_t size);
    std::optional<uint64_t> new_segment(bool small, uint64_t size);

    BuddyArena& m_arena;
    AllocatorParams m_p;
    std::map<uint64_t, Block> m_blocks;        // every block, live or free, by address
    std::map<uint64_t, uint64_t> m_segments;   // base -> size
    std::vector<Bin> m_bins[2];                // [large, small] x log2(size)
    AllocatorStats m_s;
};

}  // namespace sfumato::rt
