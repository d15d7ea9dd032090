#include "runtime/rt/buddy_arena.h"

#include <bit>

#include "sim/error.h"

namespace sfumato::rt {

BuddyArena::BuddyArena(uint64_t base, uint64_t bytes, uint64_t min_block)
    : m_base(base), m_min_block(min_block) {
    if (min_block == 0 || !std::has_single_bit(min_block)) {
        throw InputError("buddy arena: minimum block " + std::to_string(min_block) +
                         " is not a power of two");
    }
    const uint64_t units = bytes / min_block;
    m_capacity = units * min_block;
    const uint32_t top = units ? static_cast<uint32_t>(std::bit_width(units)) : 1;
    m_free.resize(top);
    // Largest region first: every region's offset is then a multiple of its own size, so the
    // buddy of a block is its offset XOR its size.
    uint64_t offset = 0;
    for (int order = static_cast<int>(top) - 1; order >= 0; --order) {
        if (units & (uint64_t{1} << order)) {
            m_regions.push_back({offset, static_cast<uint32_t>(order)});
            add_free(offset, static_cast<uint32_t>(order));
            offset += size_of(static_cast<uint32_t>(order));
        }
    }
}

uint32_t BuddyArena::order_of(uint64_t bytes) const {
    const uint64_t units = (bytes + m_min_block - 1) / m_min_block;
    return units <= 1 ? 0 : static_cast<uint32_t>(std::bit_width(units - 1));
}

std::optional<uint64_t> BuddyArena::allocate(uint64_t bytes) {
    if (bytes == 0) bytes = 1;
    if (bytes > m_capacity) return std::nullopt;
    const uint32_t want = order_of(bytes);
    uint32_t order = want;
    while (order < m_free.size() && m_free[order].empty()) ++order;
    if (order >= m_free.size()) return std::nullopt;
    const uint64_t off = *m_free[order].begin();
    m_free[order].erase(m_free[order].begin());
    while (order > want) {  // split, keeping the lower half
        --order;
        add_free(off + size_of(order), order);
    }
    m_live.emplace(off, want);
    m_allocated += size_of(want);
    return m_base + off;
}

bool BuddyArena::free(uint64_t addr) {
    if (addr < m_base) return false;
    auto it = m_live.find(addr - m_base);
    if (it == m_live.end()) return false;
    uint64_t off = it->first;
    uint32_t order = it->second;
    m_live.erase(it);
    m_allocated -= size_of(order);
    // The region that holds the block bounds how far it can merge.
    uint32_t region_order = 0;
    for (const Region& r : m_regions) {
        if (off >= r.offset && off < r.offset + size_of(r.order)) region_order = r.order;
    }
    while (order < region_order) {
        const uint64_t buddy = off ^ size_of(order);
        auto b = m_free[order].find(buddy);
        if (b == m_free[order].end()) break;
        m_free[order].erase(b);
        off = off < buddy ? off : buddy;
        ++order;
    }
    add_free(off, order);
    return true;
}

uint64_t BuddyArena::block_size(uint64_t addr) const {
    if (addr < m_base) return 0;
    auto it = m_live.find(addr - m_base);
    return it == m_live.end() ? 0 : size_of(it->second);
}

uint64_t BuddyArena::largest_free() const {
    for (size_t o = m_free.size(); o-- > 0;) {
        if (!m_free[o].empty()) return size_of(static_cast<uint32_t>(o));
    }
    return 0;
}

uint64_t BuddyArena::free_blocks() const {
    uint64_t n = 0;
    for (const auto& s : m_free) n += s.size();
    return n;
}

}  // namespace sfumato::rt
