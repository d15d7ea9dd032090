// Age ranks of one set's ways (0: most recent, ways-1: the victim; a permutation), shared by the
// rank-based replacement policies (replacement.cpp: LRU, FIFO) and the tag array's bulk replay
// (L2Tags::replay_set), so both move the ranks exactly alike.
#pragma once
#include <cstdint>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace sfumato::mem {

// Way w becomes rank 0; the ways younger than it age by one. (Always inlined: a lookup's miss
// calls it once, and a 16-way set, the presets', is a few vector instructions.)
[[gnu::always_inline]] inline void touch_rank(uint8_t* a, uint32_t ways, uint32_t w) {
    const uint8_t mine = a[w];
#if defined(__SSE2__)
    if (ways == 16) {  // one vector; ranks below 16 compare as signed bytes (one instruction)
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a));
        const __m128i younger = _mm_cmplt_epi8(v, _mm_set1_epi8(static_cast<char>(mine)));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(a), _mm_sub_epi8(v, younger));
        a[w] = 0;
        return;
    }
#endif
    uint32_t i = 0;
    if (ways % 16 == 0) {
        // 16 ways at a time (GCC vector extension: a compare gives -1 where true).
        typedef uint8_t V16 __attribute__((vector_size(16)));
        V16 m;
        __builtin_memset(&m, mine, sizeof m);
        for (; i < ways; i += 16) {
            V16 v;
            __builtin_memcpy(&v, a + i, sizeof v);
            v -= reinterpret_cast<V16>(v < m);
            __builtin_memcpy(a + i, &v, sizeof v);
        }
    }
    for (; i < ways; ++i) a[i] = static_cast<uint8_t>(a[i] + (a[i] < mine ? 1 : 0));
    a[w] = 0;
}

// The way of rank ways-1 (the least recent). With SSE2, sets of 16 ways compare all ranks at
// once: no branch on where the victim is (which way holds the oldest rank is data, not a
// pattern a branch predictor can follow).
inline uint32_t oldest_rank(const uint8_t* a, uint32_t ways) {
    const uint8_t oldest = static_cast<uint8_t>(ways - 1);
#if defined(__SSE2__)
    if (ways == 16) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a));
        const int eq = _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(static_cast<char>(oldest))));
        // A permutation holds ways-1 exactly once (the bit above the ways keeps ctz defined).
        return static_cast<uint32_t>(__builtin_ctz(static_cast<unsigned>(eq) | 0x10000u)) & 15u;
    }
#endif
    for (uint32_t w = 0; w < ways; ++w)
        if (a[w] == oldest) return w;
    return 0;  // unreachable: the ranks of a set are a permutation of 0..ways-1
}

}  // namespace sfumato::mem
