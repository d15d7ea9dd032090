// The memory system files a read's latency in its histogram bucket by an integer division of
// the latency in ps (no floating divide per request); that bucket must be the one
// Histogram::sample gives the latency in ns, at every bucket edge and for large latencies.
#include <catch2/catch.hpp>

#include "models/mem/memory_system.h"
#include "sim/stats.h"

using namespace sfumato;
using sfumato::mem::MemorySystem;

TEST_CASE("mem latency histogram: the integer-ps bucket equals sample()'s for every edge and large latencies") {
    constexpr uint64_t width = MemorySystem::kLatencyBucketPs, n = MemorySystem::kLatencyBuckets;
    StatGroup root(nullptr, "");
    Histogram by_ns(root, "by_ns", "ns", "", 0.0, width / 1000.0, n);
    Histogram by_ps(root, "by_ps", "ns", "", 0.0, width / 1000.0, n);
    auto both = [&](uint64_t ps) {
        const double ns = static_cast<double>(ps) / 1000.0;
        by_ns.sample(ns);
        by_ps.sample_in(std::min<uint64_t>(ps / width, n - 1), ns);
    };
    // Each bucket edge (n + 2 of them, past the last bucket too), one ps either side and on it.
    for (uint64_t k = 0; k <= n + 1; ++k)
        for (uint64_t ps : {k * width, k * width + 1, k * width + width - 1}) both(ps);
    // Latencies far past the histogram, up to about 2e12 ns, on and next to edges.
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 200000; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        const uint64_t ps = x % (uint64_t(1) << (10 + i % 41));  // 2^10 .. 2^50 ps
        both(ps);
        both(ps / width * width);
        if (ps >= width) both(ps / width * width - 1);
    }
    CHECK(by_ps.buckets() == by_ns.buckets());
    CHECK(by_ps.samples() == by_ns.samples());
    CHECK(by_ps.mean() == by_ns.mean());
}

// The read-latency average mirrors the histogram (its count and mean) with the maximum kept in
// ps apart (MemorySystem::sample_read_latency): the same figures as an Average sampling each
// latency in ns, in any order of latencies (rising, falling, repeated, zero first).
TEST_CASE("mem latency average: mirroring the histogram gives Average::sample's mean, max and count") {
    constexpr uint64_t width = MemorySystem::kLatencyBucketPs, n = MemorySystem::kLatencyBuckets;
    StatGroup root(nullptr, "");
    Histogram h(root, "h", "ns", "", 0.0, width / 1000.0, n);
    Average sampled(root, "sampled", "ns", "");
    Average mirrored(root, "mirrored", "ns", "");
    uint64_t max_ps = 0;
    mirrored.mirror(h, [&] { return static_cast<double>(max_ps) / 1000.0; });
    CHECK(mirrored.samples() == 0);
    CHECK(mirrored.mean() == sampled.mean());
    CHECK(mirrored.max() == sampled.max());
    auto one = [&](uint64_t ps) {
        const double ns = static_cast<double>(ps) / 1000.0;
        sampled.sample(ns);
        h.sample_in(std::min<uint64_t>(ps / width, n - 1), ns);
        max_ps = std::max(max_ps, ps);
    };
    one(0);
    uint64_t x = 0x243f6a8885a308d3ull;
    for (int i = 0; i < 100000; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        // Mostly short latencies (many ties and near-ties in ns), now and then a long one.
        one(i % 97 == 0 ? x % (uint64_t(1) << 45) : 100000 + x % 300001);
        CHECK(mirrored.max() == sampled.max());
    }
    CHECK(mirrored.samples() == sampled.samples());
    CHECK(mirrored.mean() == sampled.mean());
    CHECK(mirrored.max() == sampled.max());
}
