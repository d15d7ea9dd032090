// ring_replace_least (models/mem/sorted_ring.h), the bulk service's request slots and MSHRs,
// against a sorted multiset: after every replacement the ring read from `first` is the multiset
// in order, for streams that mostly grow (the usual case) and for random values, ties included.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "models/mem/sorted_ring.h"

using sfumato::mem::ring_replace_least;

namespace {
std::vector<uint64_t> unrolled(const std::vector<uint64_t>& a, uint32_t first) {
    std::vector<uint64_t> out;
    for (size_t i = 0; i < a.size(); ++i) out.push_back(a[(first + i) % a.size()]);
    return out;
}
}  // namespace

TEST_CASE("mem sorted ring: replacing the least keeps the ring equal to a sorted multiset") {
    for (uint32_t n : {1u, 2u, 3u, 32u, 64u}) {
        for (int mode = 0; mode < 3; ++mode) {  // growing with jitter, random, few distinct values (ties)
            std::vector<uint64_t> ring(n, 100);
            std::vector<uint64_t> ref(n, 100);
            uint32_t first = 0;
            uint64_t x = 0x9e3779b97f4a7c15ull + n + mode, t = 100;
            uint64_t bad = 0;
            for (int i = 0; i < 5000; ++i) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                const uint64_t v = mode == 0 ? (t += x % 7) + x % 50 : mode == 1 ? x % 100000 : x % 4;
                ring_replace_least(ring.data(), n, first, v, [](uint64_t y) { return y; });
                ref.erase(ref.begin());  // the least
                ref.insert(std::upper_bound(ref.begin(), ref.end(), v), v);
                bad += unrolled(ring, first) != ref;
            }
            INFO("n " << n << " mode " << mode);
            CHECK(bad == 0);
        }
    }
}
