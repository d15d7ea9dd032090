#include "models/mem/l2_tags.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace sfumato::mem {

L2Tags::L2Tags(const L2Geometry& g, std::unique_ptr<IReplacement> repl)
    : m_g(g),
      m_slices(g.slices),
      m_sets(g.sets),
      m_sector_shift(static_cast<uint32_t>(__builtin_ctz(g.sector_bytes))),
      m_repl(std::move(repl)),
      m_tag(size_t(g.sets) * g.ways, 0) {
    m_narrow = g.line_bytes / g.sector_bytes <= 16;
    if (m_narrow) m_narrow_state.assign(size_t(g.sets) * g.ways, 0);
    else m_state.assign(size_t(g.sets) * g.ways, Line{});
}

namespace {
// The first way of t[0..ways) holding `key`, or ways. With SSE2, sets of a multiple of 4 ways
// compare four tags at a time.
uint32_t first_way(const uint32_t* t, uint32_t ways, uint32_t key) {
    uint32_t w = 0;
#if defined(__SSE2__)
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
}  // namespace

uint32_t L2Tags::find(uint64_t line_addr, bool touch) {
    const uint32_t s = set_of(line_addr);
    const uint32_t* t = &m_tag[size_t(s) * m_g.ways];
    const uint32_t w = first_way(t, m_g.ways, static_cast<uint32_t>(line_addr + 1));
    if (w == m_g.ways) return kNone;
    if (touch) m_repl->touch(s, w);
    return s * m_g.ways + w;
}

uint32_t L2Tags::allocate(uint64_t line_addr, Victim& v) {
    const uint32_t s = set_of(line_addr);
    uint32_t* t = &m_tag[size_t(s) * m_g.ways];
    uint32_t way = first_way(t, m_g.ways, 0);  // an empty way first
    v = Victim{};
    if (way == m_g.ways) {
        way = m_repl->victim(s);
        v.evicted = true;
        v.line_addr = uint64_t(t[way]) - 1;
        v.dirty = dirty(s * m_g.ways + way);
    }
    const uint32_t slot = s * m_g.ways + way;
    t[way] = static_cast<uint32_t>(line_addr + 1);
    if (m_narrow) m_narrow_state[slot] = 0;
    else m_state[slot] = Line{};
    m_repl->fill(s, way);
    return slot;
}

uint64_t L2Tags::dirty_bytes() const {
    uint64_t n = 0;
    for (const Line& l : m_state) n += static_cast<uint64_t>(__builtin_popcountll(l.dirty));
    for (const uint32_t l : m_narrow_state) n += static_cast<uint64_t>(__builtin_popcount(l >> 16));
    return n * m_g.sector_bytes;
}

}  // namespace sfumato::mem
