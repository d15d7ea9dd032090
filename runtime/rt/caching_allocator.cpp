#include "runtime/rt/caching_allocator.h"

#include <bit>

#include "sim/error.h"

namespace sfumato::rt {

namespace {
uint64_t round_up(uint64_t v, uint64_t to) { return (v + to - 1) / to * to; }
size_t bin_index(uint64_t size) { return static_cast<size_t>(std::bit_width(size) - 1); }
}  // namespace

CachingAllocator::CachingAllocator(BuddyArena& arena, AllocatorParams params)
    : m_arena(arena), m_p(params) {
    if (m_p.round == 0 || m_p.small_segment < m_p.small_max || m_p.large_round == 0) {
        throw InputError("caching allocator: inconsistent pool parameters");
    }
    m_bins[0].resize(64);
    m_bins[1].resize(64);
}

CachingAllocator::~CachingAllocator() {
    // A context that ends returns all of its memory to the device.
    for (const auto& [base, size] : m_segments) m_arena.free(base);
}

CachingAllocator::Bin& CachingAllocator::bin_for(bool small, uint64_t size) {
    return m_bins[small ? 1 : 0][bin_index(size)];
}

void CachingAllocator::bin_insert(uint64_t addr, const Block& b) { bin_for(b.small, b.size).insert({b.size, addr}); }
void CachingAllocator::bin_erase(uint64_t addr, const Block& b) { bin_for(b.small, b.size).erase({b.size, addr}); }

std::optional<uint64_t> CachingAllocator::find_cached(bool small, uint64_t size) {
    // Bins hold [2^i, 2^(i+1)); the first hit scanning upward is the best fit overall.
    auto& bins = m_bins[small ? 1 : 0];
    for (size_t i = bin_index(size); i < bins.size(); ++i) {
        auto it = bins[i].lower_bound({size, 0});
        if (it != bins[i].end()) return it->second;
    }
    return std::nullopt;
}

std::optional<uint64_t> CachingAllocator::new_segment(bool small, uint64_t size) {
    const uint64_t want = small ? m_p.small_segment : round_up(size, m_p.large_round);
    auto base = m_arena.allocate(want);
    if (!base) {
        release_cached();
        base = m_arena.allocate(want);
        if (!base) return std::nullopt;
    }
    // The arena hands out powers of two; the whole block becomes the segment.
    const uint64_t seg = m_arena.block_size(*base);
    m_segments.emplace(*base, seg);
    m_blocks.emplace(*base, Block{seg, *base, 0, false, small});
    bin_insert(*base, m_blocks.at(*base));
    m_s.reserved += seg;
    if (m_s.reserved > m_s.peak_reserved) m_s.peak_reserved = m_s.reserved;
    ++m_s.device_allocs;
    return base;
}

std::optional<uint64_t> CachingAllocator::allocate(uint64_t bytes) {
    const uint64_t size = round_up(bytes ? bytes : 1, m_p.round);
    const bool small = size <= m_p.small_max;
    auto addr = find_cached(small, size);
    if (addr) {
        ++m_s.cache_hits;
    } else {
        addr = new_segment(small, size);
        if (!addr) return std::nullopt;
    }
    Block& b = m_blocks.at(*addr);
    bin_erase(*addr, b);
    if (b.size - size >= m_p.round) {
        const uint64_t rest_addr = *addr + size;
        Block rest{b.size - size, b.segment, 0, false, b.small};
        b.size = size;
        m_blocks.emplace(rest_addr, rest);
        bin_insert(rest_addr, rest);
        ++m_s.splits;
    }
    b.allocated = true;
    b.requested = bytes;
    m_s.in_use += b.size;
    m_s.requested += bytes;
    if (m_s.in_use > m_s.peak_in_use) m_s.peak_in_use = m_s.in_use;
    ++m_s.allocs;
    ++m_s.live_blocks;
    return addr;
}

bool CachingAllocator::free(uint64_t addr) {
    auto it = m_blocks.find(addr);
    if (it == m_blocks.end() || !it->second.allocated) return false;
    Block& b = it->second;
    b.allocated = false;
    m_s.in_use -= b.size;
    m_s.requested -= b.requested;
    b.requested = 0;
    ++m_s.frees;
    --m_s.live_blocks;
    auto next = std::next(it);
    if (next != m_blocks.end() && !next->second.allocated && next->second.segment == b.segment) {
        bin_erase(next->first, next->second);
        b.size += next->second.size;
        m_blocks.erase(next);
        ++m_s.merges;
    }
    if (it != m_blocks.begin()) {
        auto prev = std::prev(it);
        if (!prev->second.allocated && prev->second.segment == b.segment) {
            bin_erase(prev->first, prev->second);
            prev->second.size += b.size;
            m_blocks.erase(it);
            it = prev;
            ++m_s.merges;
        }
    }
    bin_insert(it->first, it->second);
    return true;
}

uint64_t CachingAllocator::block_size(uint64_t addr) const {
    auto it = m_blocks.find(addr);
    return it != m_blocks.end() && it->second.allocated ? it->second.size : 0;
}

std::optional<std::pair<uint64_t, uint64_t>> CachingAllocator::live_block_containing(uint64_t addr) const {
    auto it = m_blocks.upper_bound(addr);
    if (it == m_blocks.begin()) return std::nullopt;
    --it;
    if (!it->second.allocated || addr >= it->first + it->second.size) return std::nullopt;
    return std::make_pair(it->first, it->second.size);
}

uint64_t CachingAllocator::release_cached() {
    uint64_t released = 0;
    for (auto s = m_segments.begin(); s != m_segments.end();) {
        auto b = m_blocks.find(s->first);
        if (!b->second.allocated && b->second.size == s->second) {
            bin_erase(b->first, b->second);
            m_blocks.erase(b);
            m_arena.free(s->first);
            m_s.reserved -= s->second;
            released += s->second;
            ++m_s.device_frees;
            s = m_segments.erase(s);
        } else {
            ++s;
        }
    }
    return released;
}

AllocatorStats CachingAllocator::stats() const {
    AllocatorStats s = m_s;
    s.largest_cached = 0;
    for (const auto& pool : m_bins) {
        for (size_t i = pool.size(); i-- > 0;) {
            if (!pool[i].empty()) {
                s.largest_cached = std::max(s.largest_cached, pool[i].rbegin()->first);
                break;
            }
        }
    }
    return s;
}

std::string CachingAllocator::check() const {
    uint64_t in_use = 0, live = 0, free_blocks = 0, reserved = 0;
    for (const auto& [base, size] : m_segments) {
        reserved += size;
        uint64_t at = base;
        bool prev_free = false;
        for (auto it = m_blocks.find(base); it != m_blocks.end() && it->second.segment == base; ++it) {
            if (it->first != at) return "gap or overlap at " + std::to_string(at);
            if (!it->second.allocated && prev_free) return "unmerged free neighbours at " + std::to_string(at);
            prev_free = !it->second.allocated;
            if (it->second.allocated) {
                in_use += it->second.size;
                ++live;
            } else {
                ++free_blocks;
                const auto& bin = m_bins[it->second.small ? 1 : 0][bin_index(it->second.size)];
                if (!bin.count({it->second.size, it->first})) return "free block not binned at " + std::to_string(at);
            }
            at += it->second.size;
        }
        if (at != base + size) return "segment not tiled at " + std::to_string(base);
    }
    uint64_t binned = 0;
    for (const auto& pool : m_bins) {
        for (const auto& bin : pool) binned += bin.size();
    }
    if (binned != free_blocks) return "bins hold stale blocks";
    if (in_use != m_s.in_use || live != m_s.live_blocks || reserved != m_s.reserved) return "stats drift";
    return {};
}

}  // namespace sfumato::rt
