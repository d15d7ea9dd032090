// Device-level memory of one device: a buddy-system arena over the global-memory address range.
// It plays the role of the driver's physical allocator (what a vendor rtMalloc / cudaMalloc
// reaches): blocks are powers of two between a minimum and the arena size, split on allocation
// and merged with their buddy on free. It models placement and accounting only (no page tables,
// no mapping latency); the host-time cost of a device-level allocation is charged by the runtime.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <vector>

namespace sfumato::rt {

class BuddyArena {
public:
    // base: first device address; bytes: usable size (rounded down to a multiple of min_block);
    // min_block: smallest block, a power of two.
    BuddyArena(uint64_t base, uint64_t bytes, uint64_t min_block);

    // A block of at least `bytes` (rounded up to a power of two >= min_block), or nullopt when
    // no free block is large enough.
    std::optional<uint64_t> allocate(uint64_t bytes);
    // Frees a block returned by allocate(); returns false for an unknown address.
    bool free(uint64_t addr);
    // Size of the live block at addr, 0 if none.
    uint64_t block_size(uint64_t addr) const;

    uint64_t base() const { return m_base; }
    uint64_t capacity() const { return m_capacity; }
    uint64_t allocated_bytes() const { return m_allocated; }
    uint64_t live_blocks() const { return m_live.size(); }
    uint64_t min_block() const { return m_min_block; }
    // Largest block that could be allocated now.
    uint64_t largest_free() const;
    uint64_t free_blocks() const;

private:
    uint32_t order_of(uint64_t bytes) const;  // smallest order whose block holds bytes
    uint64_t size_of(uint32_t order) const { return m_min_block << order; }
    void add_free(uint64_t addr, uint32_t order) { m_free[order].insert(addr); }

    uint64_t m_base;
    uint64_t m_capacity = 0;
    uint64_t m_min_block;
    uint64_t m_allocated = 0;
    // The arena is a set of top-level regions, each a power of two (the size's binary digits),
    // so a non-power-of-two memory is fully usable. A buddy never crosses its region.
    struct Region {
        uint64_t offset;  // from m_base
        uint32_t order;
    };
    std::vector<Region> m_regions;
    std::vector<std::set<uint64_t>> m_free;  // per order: free block offsets (ordered: lowest first)
    std::map<uint64_t, uint32_t> m_live;     // offset -> order
};

}  // namespace sfumato::rt
