// The tag array of one L2 slice: sets x ways of lines, each with a valid and a dirty mask over
// its sectors (a line is filled sector by sector, so a 64 B access to a 512 B line fetches only
// what it needs). Plain C++; timing lives in the memory system. Simplified: writes are tracked
// at sector granularity (a partial-sector write is assumed to carry its byte mask).
#pragma once
#include <cstdint>
#include <memory>
#include <new>
#include <vector>

#include "models/mem/fast_div.h"
#include "models/mem/i_replacement.h"
#include "models/mem/rank_ages.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace sfumato::mem {

// An allocator of host-cache-line (64 B) aligned arrays: a 16-way set's tags (or states) are then
// one host line, which one prefetch brings whole, instead of straddling two 3 times in 4.
template <class T>
struct HostLineAllocator {
    using value_type = T;
    HostLineAllocator() = default;
    template <class U>
    HostLineAllocator(const HostLineAllocator<U>&) {}
    T* allocate(size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{64})); }
    void deallocate(T* p, size_t) { ::operator delete(p, std::align_val_t{64}); }
    template <class U>
    bool operator==(const HostLineAllocator<U>&) const { return true; }
    template <class U>
    bool operator!=(const HostLineAllocator<U>&) const { return false; }
};

struct L2Geometry {
    uint32_t line_bytes = 128;
    uint32_t sector_bytes = 32;
    uint32_t sets = 1;
    uint32_t ways = 16;
    uint32_t slices = 1;
};

// Line-aligned: a lookup's fields (hot, below) are the object's first host line.
class alignas(64) L2Tags {
public:
    // One line's state: valid and dirty sector masks (0 valid: no data yet).
    struct Line {
        uint64_t valid = 0;
        uint64_t dirty = 0;
    };
    struct Victim {
        uint64_t line_addr = 0;
        uint64_t dirty = 0;  // dirty sectors to write back (0: clean or none)
        bool evicted = false;
    };

    // Line addresses must fit 32 bits (device capacity / line size < 2^32).
    L2Tags(const L2Geometry& g, std::unique_ptr<IReplacement> repl);
    bool holds(uint32_t slot, uint64_t line_addr) const { return m_tagp[slot] == line_addr + 1; }
    static constexpr uint32_t kNone = ~0u;
    // The slot (set * ways + way) holding `line_addr`, or kNone. Touches the replacement state
    // when `touch`.
    uint32_t find(uint64_t line_addr, bool touch);
    // Allocates a slot for `line_addr` (must be absent), evicting if needed.
    uint32_t allocate(uint64_t line_addr, Victim& v);
    // find(line_addr, true) that also keeps what allocate() would look for, for a line that may
    // be allocated next (an L2 lookup, both services): its set and the set's first empty way
    // (ways: none).
    struct Probe {
        uint32_t set = 0;
        uint32_t empty = 0;
    };
    // (Both inline, but not forced into l2_access: that measured slower on the host, 2.59 against
    // 2.49 CPU s for membench 4G, with 2 % fewer instructions.)
    uint32_t find(uint64_t line_addr, Probe& p) {
        const uint32_t s = set_of(line_addr);
        const uint32_t* t = &m_tagp[size_t(s) * m_ways];
        const uint32_t key = static_cast<uint32_t>(line_addr + 1);
        p.set = s;
        uint32_t w;
        if (m_ways == 16) {
            w = first_ways16(t, key, p.empty);
        } else {
            w = first_way_any(t, m_ways, key);
            p.empty = first_way_any(t, m_ways, 0);
        }
        if (w == m_ways) return kNone;
        if (!m_ranks) m_repl->touch(s, w);
        else if (m_hit_touches) touch_rank(m_ranks + size_t(s) * m_ways, m_ways, w);
        return s * m_ways + w;
    }
    // allocate(line_addr, v) after find(line_addr, p) found it absent, the set's tags unchanged since.
    uint32_t allocate(uint64_t line_addr, const Probe& p, Victim& v) {
        const uint32_t s = p.set;
        uint32_t* t = &m_tagp[size_t(s) * m_ways];
        uint32_t way = p.empty;
        v = Victim{};
        if (way == m_ways) {
            way = m_ranks ? oldest_rank(m_ranks + size_t(s) * m_ways, m_ways) : m_repl->victim(s);
            v.evicted = true;
            v.line_addr = uint64_t(t[way]) - 1;
            v.dirty = dirty(s * m_ways + way);
        }
        const uint32_t slot = s * m_ways + way;
        t[way] = static_cast<uint32_t>(line_addr + 1);
        if (m_narrow) m_nstate[slot] = 0;
        else m_state[slot] = Line{};
        if (m_ranks) touch_rank(m_ranks + size_t(s) * m_ways, m_ways, way);
        else m_repl->fill(s, way);
        return slot;
    }
    // An L2 access's lookup and, on a miss, its allocation, with one look at the set: the slot
    // holding `line_addr` (kHit; the replacement state touched as find(line_addr, true) does);
    // else, when `reserve`, a slot allocated for it as allocate() would, its sectors `valid` and
    // `dirty` (kFresh, or kEvicted with v the line it evicted; v is written only then); else
    // kNone (kMiss: nothing changed). The presets' geometry (16 ways, lines of at most 16 sectors,
    // a rank policy) takes an inline path; any other calls access_any(). (Not forced into
    // l2_access: that saved 10 instructions per line and measured 3-4 % more CPU, as find() did.)
    enum Kind : uint32_t { kHit, kMiss, kFresh, kEvicted };
    struct Access {
        uint32_t slot;
        Kind kind;
    };
    Access access(uint64_t line_addr, bool reserve, uint64_t valid, uint64_t dirty, Victim& v) {
        return access(line_addr, set_of(line_addr), reserve, valid, dirty, v);
    }
    // The same with the line's set (set_of(line_addr)) known to the caller.
    Access access(uint64_t line_addr, uint32_t s, bool reserve, uint64_t valid, uint64_t dirty, Victim& v) {
#if defined(__SSE2__)
        if (m_fast16) {
            const uint32_t base = s * 16;
            uint32_t* t = m_tagp + base;
            uint8_t* rank = m_ranks + base;
            const uint32_t key = static_cast<uint32_t>(line_addr + 1);
            const __m128i* p = reinterpret_cast<const __m128i*>(t);
            const __m128i v0 = _mm_loadu_si128(p), v1 = _mm_loadu_si128(p + 1), v2 = _mm_loadu_si128(p + 2),
                          v3 = _mm_loadu_si128(p + 3);
            uint32_t w = ways16_equal(v0, v1, v2, v3, key);
            if (w < 16) {
                if (m_hit_touches) touch_rank(rank, 16, w);
                return {base + w, kHit};
            }
            if (!reserve) return {kNone, kMiss};
            // An empty way first (the same loads), else the oldest rank.
            w = ways16_equal(v0, v1, v2, v3, 0);
            Kind kind = kFresh;
            if (w == 16) {
                w = oldest_rank(rank, 16);
                v.line_addr = uint64_t(t[w]) - 1;
                v.dirty = m_nstate[base + w] >> 16;
                v.evicted = true;
                kind = kEvicted;
            }
            t[w] = key;
            m_nstate[base + w] = static_cast<uint32_t>(valid | (dirty << 16));
            touch_rank(rank, 16, w);
            return {base + w, kind};
        }
#endif
        return access_any(line_addr, reserve, valid, dirty, v);
    }
    // A slot's valid and dirty sector masks, and adding sectors to them.
    uint64_t valid(uint32_t slot) const { return m_narrow ? m_nstate[slot] & 0xffff : m_state[slot].valid; }
    uint64_t dirty(uint32_t slot) const { return m_narrow ? m_nstate[slot] >> 16 : m_state[slot].dirty; }
    void add_valid(uint32_t slot, uint64_t mask) {
        if (m_narrow) m_nstate[slot] |= static_cast<uint32_t>(mask);
        else m_state[slot].valid |= mask;
    }
    void add_dirty(uint32_t slot, uint64_t mask) {  // valid too
        if (m_narrow) m_nstate[slot] |= static_cast<uint32_t>(mask | (mask << 16));
        else {
            m_state[slot].valid |= mask;
            m_state[slot].dirty |= mask;
        }
    }
    // Hints the host cache to load the set `line_addr` maps to (tags, states, replacement).
    void prefetch(uint64_t line_addr) const { prefetch_set(set_of(line_addr)); }
    // The same, and the set after it: sequential lines come to a slice's sets one after the
    // other, so its next access most likely looks that set up (then long in the host cache: the
    // tags a stream reads are visited once each, and those of the set just looked up are too late).
    void prefetch_ahead(uint64_t line_addr) const { prefetch_ahead_set(set_of(line_addr)); }
    // The same for the set `set` (and the one after it).
    void prefetch_ahead_set(uint32_t set) const {
        const uint32_t next = set + 1 == m_sets.divisor() ? 0 : set + 1;
        if (m_fast16) {  // a set's tags, states and ranks: one host line each
            for (const uint32_t base : {set * 16, next * 16}) {
                __builtin_prefetch(m_tagp + base);
                __builtin_prefetch(m_nstate + base, 1);
                __builtin_prefetch(m_ranks + base, 1);
            }
            return;
        }
        prefetch_set(set);
        prefetch_set(next);
    }
    void prefetch_set(uint32_t set) const {
        const size_t base = size_t(set) * m_ways;
        __builtin_prefetch(&m_tagp[base]);
        if (m_narrow) {
            __builtin_prefetch(&m_nstate[base], 1);
        } else {
            const char* st = reinterpret_cast<const char*>(&m_state[base]);
            for (size_t b = 0; b < size_t(m_ways) * sizeof(Line); b += 64) __builtin_prefetch(st + b, 1);
        }
        if (m_ranks) __builtin_prefetch(m_ranks + size_t(set) * m_ways, 1);
        else m_repl->prefetch(set);
    }
    uint32_t set_of(uint64_t line_addr) const { return m_sets.mod(m_slices.div(line_addr)); }
    // Bytes of dirty sectors over the whole array (a walk, quick over clean lines: for reports).
    uint64_t dirty_bytes() const;
    // Invalidates every line, first calling on_dirty(line_addr, dirty_mask) for each line with
    // dirty sectors (a cache flush: write back, then invalidate). Returns the lines that were valid.
    template <class F>
    uint64_t invalidate_all(F&& on_dirty) {
        uint64_t lines = 0;
        for (size_t slot = 0; slot < m_tag.size(); ++slot) {
            if (m_tag[slot] == 0) continue;
            ++lines;
            const uint64_t d = dirty(static_cast<uint32_t>(slot));
            if (d) on_dirty(uint64_t(m_tag[slot]) - 1, d);
            m_tag[slot] = 0;
            if (m_narrow) m_narrow_state[slot] = 0;
            else m_state[slot] = Line{};
        }
        return lines;
    }
    // Traffic applied at once instead of simulated (MemorySystem::replay_traffic): one line access.
    struct ReplayAccess {
        uint32_t line = 0;   // the line address (32 bits, as the tags hold it)
        uint32_t write = 0;  // 1: its sectors become dirty; 0: a read (missing sectors are fetched)
        uint64_t mask = 0;   // the sectors accessed
    };
    struct ReplayTotals {
        uint64_t read_sectors = 0;     // sectors the reads found missing (HBM reads)
        uint64_t written_sectors = 0;  // dirty sectors of the lines evicted (HBM writes)
    };
    // Whether replay_set() can apply one set's accesses apart from the other sets' (the
    // replacement policy keeps its state per set as age ranks: LRU, FIFO).
    bool bulk_replay() const;
    // Applies `n` accesses to set `set` in their order, leaving the array, the replacement state
    // and the totals exactly as find(line, true), allocate() on a miss and add_valid() (a read)
    // or add_dirty() (a write) called access by access would, at a fraction of the cost: the set
    // is looked up once and stays in the host cache, and the ranks move without virtual calls.
    // The line of each eviction is appended to *evicted when given. Only when bulk_replay().
    void replay_set(uint32_t set, const ReplayAccess* a, size_t n, ReplayTotals& totals,
                    std::vector<uint64_t>* evicted);
    // Sector mask covering [addr, addr+bytes) within its line.
    uint64_t sector_mask(uint64_t addr, uint32_t bytes) const { return sector_mask(addr, bytes, m_g.line_bytes, m_sector_shift); }
    // The same for a geometry's line_bytes and log2(sector_bytes) (the memory system's lookup
    // computes it from its own copy of the geometry, before the tags' object is in the host cache).
    // (bytes >= 1, within the line; at most 64 sectors: the last sector's index is below 64.)
    static uint64_t sector_mask(uint64_t addr, uint32_t bytes, uint32_t line_bytes, uint32_t sector_shift) {
        const uint64_t off = addr & (line_bytes - 1);
        const uint64_t first = off >> sector_shift;
        const uint64_t last = (off + bytes - 1) >> sector_shift;
        return (~uint64_t(0) >> (63 - last)) & (~uint64_t(0) << first);
    }

private:
    // access() for any geometry and policy: find(), then allocate() (l2_tags.cpp).
    [[gnu::noinline]] Access access_any(uint64_t line_addr, bool reserve, uint64_t valid, uint64_t dirty, Victim& v);
#if defined(__SSE2__)
    // The first of a 16-way set's ways (its tags in v0..v3) holding `key`, or 16.
    static uint32_t ways16_equal(__m128i v0, __m128i v1, __m128i v2, __m128i v3, uint32_t key) {
        const __m128i k = _mm_set1_epi32(static_cast<int>(key));
        const __m128i lo = _mm_packs_epi32(_mm_cmpeq_epi32(v0, k), _mm_cmpeq_epi32(v1, k));
        const __m128i hi = _mm_packs_epi32(_mm_cmpeq_epi32(v2, k), _mm_cmpeq_epi32(v3, k));
        const unsigned bits = static_cast<unsigned>(_mm_movemask_epi8(_mm_packs_epi16(lo, hi)));
        return static_cast<uint32_t>(__builtin_ctz(bits | 0x10000u));  // one bit per way, and bit 16
    }
#endif
    // The first way of t[0..ways) holding `key`, or ways (l2_tags.cpp).
    static uint32_t first_way_any(const uint32_t* t, uint32_t ways, uint32_t key);
    // The same for `key` and for 0 (an empty way) over one 16-way set's tags: the same loads.
    static uint32_t first_ways16(const uint32_t* t, uint32_t key, uint32_t& empty) {
#if defined(__SSE2__)
        const __m128i k = _mm_set1_epi32(static_cast<int>(key));
        const __m128i z = _mm_setzero_si128();
        const __m128i* p = reinterpret_cast<const __m128i*>(t);
        const __m128i v0 = _mm_loadu_si128(p), v1 = _mm_loadu_si128(p + 1), v2 = _mm_loadu_si128(p + 2),
                      v3 = _mm_loadu_si128(p + 3);
        const auto bits = [&](const __m128i& c) {  // one bit per way, and bit 16 (ctz: 16 when none)
            const __m128i lo = _mm_packs_epi32(_mm_cmpeq_epi32(v0, c), _mm_cmpeq_epi32(v1, c));
            const __m128i hi = _mm_packs_epi32(_mm_cmpeq_epi32(v2, c), _mm_cmpeq_epi32(v3, c));
            return static_cast<unsigned>(_mm_movemask_epi8(_mm_packs_epi16(lo, hi))) | 0x10000u;
        };
        empty = static_cast<uint32_t>(__builtin_ctz(bits(z)));
        return static_cast<uint32_t>(__builtin_ctz(bits(k)));
#else
        empty = first_way_any(t, 16, 0);
        return first_way_any(t, 16, key);
#endif
    }
    // replay_set's shortcut for a full set whose accesses all miss (distinct lines, none held):
    // the ways they take follow from the ranks at once. False (nothing changed) otherwise.
    bool replay_misses(uint32_t set, const ReplayAccess* a, size_t n, ReplayTotals& totals,
                       std::vector<uint64_t>* evicted);

    // What a lookup reads (set_of, the set's tags, states and ranks, the flags), together in the
    // object's first host line: the slice reaches its tags through a pointer, so the first of these
    // loads misses the host cache, and a second line would be a second miss (submit_line's
    // prefetch, then l2_access). m_tagp and m_nstate are m_tag's and m_narrow_state's data (the
    // arrays are sized once, in the constructor); m_ways is m_g.ways.
    FastDiv32 m_slices, m_sets;  // set_of without hardware divides
    uint32_t* m_tagp = nullptr;
    uint32_t* m_nstate = nullptr;
    // A policy whose state is an age rank per way (LRU, FIFO), its sets' ranks side by side:
    // find(), allocate() and prefetch() move them here as its touch(), fill() and victim() would,
    // without a virtual call each (nullptr: another policy, called through m_repl).
    uint8_t* m_ranks = nullptr;
    uint32_t m_ways = 0;
    bool m_hit_touches = false;  // a hit makes its way rank 0 (LRU), or leaves the ranks (FIFO)
    // Lines of at most 16 sectors keep valid (low half) and dirty (high half) in 32 bits, so a
    // 16-way set's state is one host cache line; longer lines use m_state (one is empty).
    bool m_narrow = false;
    // 16 ways, narrow, m_ranks: access() and prefetch_ahead() inline for this geometry only.
    bool m_fast16 = false;

    L2Geometry m_g;
    uint32_t m_sector_shift = 0;
    std::unique_ptr<IReplacement> m_repl;
    // Tags apart from state, so a lookup scans one set's tags in two cache lines.
    std::vector<uint32_t, HostLineAllocator<uint32_t>> m_tag;  // line_addr + 1; 0 = empty way (a 16-way set's tags: one host line)
    std::vector<uint32_t, HostLineAllocator<uint32_t>> m_narrow_state;
    std::vector<Line> m_state;  // valid and dirty side by side: one cache line per update
};

}  // namespace sfumato::mem
