#include "models/mem/l2_tags.h"

#include "models/mem/rank_ages.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace sfumato::mem {

L2Tags::L2Tags(const L2Geometry& g, std::unique_ptr<IReplacement> repl)
    : m_slices(g.slices),
      m_sets(g.sets),
      m_ways(g.ways),
      m_g(g),
      m_sector_shift(static_cast<uint32_t>(__builtin_ctz(g.sector_bytes))),
      m_repl(std::move(repl)),
      m_tag(size_t(g.sets) * g.ways, 0) {
    m_narrow = g.line_bytes / g.sector_bytes <= 16;
    if (m_narrow) m_narrow_state.assign(size_t(g.sets) * g.ways, 0);
    else m_state.assign(size_t(g.sets) * g.ways, Line{});
    m_tagp = m_tag.data();
    m_nstate = m_narrow_state.data();
    // Ranks kept per set in one array (what set_ranks gives for sets 0 and the last shows it).
    bool touches = false;
    uint8_t* r0 = m_repl->set_ranks(0, &touches);
    if (r0 && m_repl->set_ranks(g.sets - 1, &touches) == r0 + size_t(g.sets - 1) * g.ways) {
        m_ranks = r0;
        m_hit_touches = touches;
    }
    m_fast16 = g.ways == 16 && m_narrow && m_ranks;
}

namespace {
// The first way of t[0..ways) holding `key`, or ways. With SSE2, sets of a multiple of 4 ways
// compare four tags at a time.
uint32_t first_way(const uint32_t* t, uint32_t ways, uint32_t key) {
    uint32_t w = 0;
#if defined(__SSE2__)
    if (ways == 16) {
        // All 16 at once, packed to one bit per way: no branch on where (or whether) the key is.
        const __m128i k = _mm_set1_epi32(static_cast<int>(key));
        const __m128i* p = reinterpret_cast<const __m128i*>(t);
        const __m128i lo = _mm_packs_epi32(_mm_cmpeq_epi32(_mm_loadu_si128(p), k),
                                           _mm_cmpeq_epi32(_mm_loadu_si128(p + 1), k));
        const __m128i hi = _mm_packs_epi32(_mm_cmpeq_epi32(_mm_loadu_si128(p + 2), k),
                                           _mm_cmpeq_epi32(_mm_loadu_si128(p + 3), k));
        const unsigned bits = static_cast<unsigned>(_mm_movemask_epi8(_mm_packs_epi16(lo, hi)));
        return static_cast<uint32_t>(__builtin_ctz(bits | 0x10000u));  // 16 (= ways) when absent
    }
    if (ways % 4 == 0) {
        const __m128i k = _mm_set1_epi32(static_cast<int>(key));
        for (; w < ways; w += 4) {
            const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(t + w));
            const int bits = _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(v, k)));
            if (bits) return w + static_cast<uint32_t>(__builtin_ctz(static_cast<unsigned>(bits)));
        }
        return ways;
    }
#endif
    for (; w < ways; ++w)
        if (t[w] == key) return w;
    return ways;
}
// Set bits (SWAR: the build targets no popcnt instruction, and __builtin_popcountll is a libgcc
// call there, twice per replayed access).
inline uint64_t bits(uint64_t x) {
    x = x - ((x >> 1) & 0x5555555555555555ull);
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
    return (x * 0x0101010101010101ull) >> 56;
}

// Whether t[0..ways) holds `key` (no early exit: one branch per call).
bool held_in(const uint32_t* t, uint32_t ways, uint32_t key) {
#if defined(__SSE2__)
    if (ways % 4 == 0) {
        const __m128i k = _mm_set1_epi32(static_cast<int>(key));
        __m128i any = _mm_setzero_si128();
        for (uint32_t w = 0; w < ways; w += 4)
            any = _mm_or_si128(
                any, _mm_cmpeq_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(t + w)), k));
        return _mm_movemask_epi8(any) != 0;
    }
#endif
    return first_way(t, ways, key) != ways;
}
}  // namespace

uint32_t L2Tags::find(uint64_t line_addr, bool touch) {
    const uint32_t s = set_of(line_addr);
    const uint32_t* t = &m_tag[size_t(s) * m_g.ways];
    const uint32_t w = first_way(t, m_g.ways, static_cast<uint32_t>(line_addr + 1));
    if (w == m_g.ways) return kNone;
    if (touch) {
        if (!m_ranks) m_repl->touch(s, w);
        else if (m_hit_touches) touch_rank(m_ranks + size_t(s) * m_g.ways, m_g.ways, w);
    }
    return s * m_g.ways + w;
}

uint32_t L2Tags::allocate(uint64_t line_addr, Victim& v) {
    const uint32_t s = set_of(line_addr);
    return allocate(line_addr, Probe{s, first_way(&m_tag[size_t(s) * m_g.ways], m_g.ways, 0)}, v);  // an empty way first
}

L2Tags::Access L2Tags::access_any(uint64_t line_addr, bool reserve, uint64_t valid, uint64_t dirty, Victim& v) {
    Probe p;
    uint32_t slot = find(line_addr, p);
    if (slot != kNone) return {slot, kHit};
    if (!reserve) return {kNone, kMiss};
    Victim x;
    slot = allocate(line_addr, p, x);
    if (m_narrow) m_nstate[slot] = static_cast<uint32_t>(valid | (dirty << 16));
    else m_state[slot] = Line{valid, dirty};
    if (!x.evicted) return {slot, kFresh};
    v = x;
    return {slot, kEvicted};
}

uint32_t L2Tags::first_way_any(const uint32_t* t, uint32_t ways, uint32_t key) { return first_way(t, ways, key); }

bool L2Tags::bulk_replay() const {
    bool hit_touches = false;
    return m_repl->set_ranks(0, &hit_touches) != nullptr;
}

bool L2Tags::replay_misses(uint32_t s, const ReplayAccess* a, size_t n, ReplayTotals& totals,
                           std::vector<uint64_t>* evicted) {
    const uint32_t ways = m_g.ways;
    const uint32_t base = s * ways;
    uint32_t* t = &m_tag[base];
    // Every access a miss: lines strictly increasing (so distinct), none of them held.
    for (size_t i = 1; i < n; ++i)
        if (a[i].line <= a[i - 1].line) return false;
    for (size_t i = 0; i < n; ++i)
        if (held_in(t, ways, a[i].line + 1)) return false;
    bool hit_touches = false;
    uint8_t* rank = m_repl->set_ranks(s, &hit_touches);
    // A miss in a full set takes the way of the oldest rank and ages every other way by one, so
    // the misses take the ways from the oldest rank on, in turn: access j goes to
    // order[j % ways], evicting what access j - ways (or, for j < ways, the set) put there.
    uint32_t order[256];
    for (uint32_t w = 0; w < ways; ++w) order[ways - 1 - rank[w]] = w;
    uint64_t rd = 0, wr = 0;
    const size_t first_kept = n > ways ? n - ways : 0;
    for (size_t j = 0; j < n; ++j) {
        if (!a[j].write) rd += bits(a[j].mask);
        if (j < ways) {
            wr += bits(dirty(base + order[j]));
            if (evicted) evicted->push_back(uint64_t(t[order[j]]) - 1);
        } else {
            if (a[j - ways].write) wr += bits(a[j - ways].mask);
            if (evicted) evicted->push_back(a[j - ways].line);
        }
    }
    totals.read_sectors += rd;
    totals.written_sectors += wr;
    // The last `ways` accesses stay, the latest the most recent; fewer leave the oldest ways
    // of the set aged by n.
    if (n < ways)
        for (uint32_t r = static_cast<uint32_t>(n); r < ways; ++r)
            rank[order[r]] = static_cast<uint8_t>(rank[order[r]] + n);
    uint32_t k = static_cast<uint32_t>(first_kept % ways);
    for (size_t j = first_kept; j < n; ++j, k = k + 1 == ways ? 0 : k + 1) {
        const uint32_t w = order[k];
        t[w] = a[j].line + 1;
        const uint64_t m = a[j].mask;
        if (m_narrow) m_narrow_state[base + w] = static_cast<uint32_t>(a[j].write ? m | (m << 16) : m);
        else m_state[base + w] = Line{m, a[j].write ? m : 0};
        rank[w] = static_cast<uint8_t>(n - 1 - j);
    }
    return true;
}

void L2Tags::replay_set(uint32_t s, const ReplayAccess* a, size_t n, ReplayTotals& totals,
                        std::vector<uint64_t>* evicted) {
    const uint32_t ways = m_g.ways;
    const uint32_t base = s * ways;
    uint32_t* t = &m_tag[base];
    bool full = first_way(t, ways, 0) == ways;  // replay only fills ways: once full, it stays so
    if (full && replay_misses(s, a, n, totals, evicted)) return;
    bool hit_touches = false;
    uint8_t* rank = m_repl->set_ranks(s, &hit_touches);
    for (size_t i = 0; i < n; ++i) {
        const ReplayAccess& x = a[i];
        const uint32_t key = x.line + 1;
        uint32_t w = first_way(t, ways, key);
        uint64_t have = 0;
        if (w == ways) {  // a miss: an empty way first (allocate()), else the oldest rank
            if (!full) {
                w = first_way(t, ways, 0);
                full = w == ways;
            }
            if (full) {
                w = oldest_rank(rank, ways);
                totals.written_sectors += bits(dirty(base + w));
                if (evicted) evicted->push_back(uint64_t(t[w]) - 1);
            }
            t[w] = key;
            if (m_narrow) m_narrow_state[base + w] = 0;
            else m_state[base + w] = Line{};
            touch_rank(rank, ways, w);  // fill()
        } else {
            if (hit_touches) touch_rank(rank, ways, w);
            have = valid(base + w);
        }
        if (x.write) {
            add_dirty(base + w, x.mask);
        } else {
            totals.read_sectors += bits(x.mask & ~have);
            add_valid(base + w, x.mask);
        }
    }
}

uint64_t L2Tags::dirty_bytes() const {
    uint64_t n = 0;
    for (const Line& l : m_state)
        if (l.dirty) n += bits(l.dirty);
    // Narrow states four at a time (dirty: the high halves), counted only when any is dirty: a
    // read stream leaves every line clean, and the walk is then one test per four lines.
    const uint32_t* st = m_narrow_state.data();
    const size_t count = m_narrow_state.size();
    size_t i = 0;
    for (; i + 4 <= count; i += 4) {
        uint64_t a, b;
        __builtin_memcpy(&a, st + i, sizeof a);
        __builtin_memcpy(&b, st + i + 2, sizeof b);
        const uint64_t hi = 0xffff0000ffff0000ull;
        if ((a | b) & hi) n += bits(a & hi) + bits(b & hi);
    }
    for (; i < count; ++i) n += bits(st[i] >> 16);
    return n * m_g.sector_bytes;
}

}  // namespace sfumato::mem
