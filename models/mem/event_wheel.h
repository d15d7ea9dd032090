// A calendar queue of timed events for the memory system: 2^15 buckets of 128 ps each (a
// ~4.2 us window) plus an overflow heap for later events. Events leave in (tick, sequence)
// order, so runs are deterministic; each bucket is a list kept in that order (a push usually
// appends, a pop takes the head). Pushing and popping cost O(1) for the near-future events
// that dominate memory traffic, where a binary heap of ~2000 pending requests costs a dozen
// cache-missing levels per operation. Plain C++ (no SystemC).
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

namespace sfumato::mem {

struct WheelItem {
    uint64_t tick;
    uint64_t seq;
    void* ptr;
    uint32_t arg;
    uint8_t kind;
    bool operator<(const WheelItem& o) const { return tick != o.tick ? tick < o.tick : seq < o.seq; }
    bool operator>(const WheelItem& o) const { return o < *this; }
};

class EventWheel {
public:
    static constexpr uint32_t kShift = 7;
    static constexpr uint64_t kBuckets = 1u << 15;
    static constexpr uint64_t kMask = kBuckets - 1;
    static constexpr uint64_t kEmpty = ~uint64_t(0);

    EventWheel() : m_bucket(kBuckets), m_bits(kBuckets / 64, 0) { m_nodes.reserve(1 << 12); }
    bool empty() const { return m_count == 0; }
    size_t size() const { return m_count; }

    // tick must be >= the `now` of the last pop_due() (events are never pushed into the past).
    void push(uint64_t tick, void* ptr, uint32_t arg, uint8_t kind) {
        const WheelItem it{tick, m_seq++, ptr, arg, kind};
        ++m_count;
        const uint64_t ab = std::max(tick >> kShift, m_base);
        if (ab - m_base < kBuckets) put(ab, it);
        else {
            m_over.push_back(it);
            std::push_heap(m_over.begin(), m_over.end(), std::greater<WheelItem>());
        }
    }

    // Removes the earliest event if its tick is <= now; returns false otherwise.
    bool pop_due(uint64_t now, WheelItem& out) {
        uint64_t next;
        return pop_due(now, out, next);
    }
    // As above; when it returns false, `next` is the earliest pending tick (kEmpty when none),
    // which saves a next_tick() walk at the end of a batch.
    bool pop_due(uint64_t now, WheelItem& out, uint64_t& next) { return pop_due(now, now, 0xff, out, next); }
    // Run-ahead form: removes the earliest event if its tick is <= now, or <= limit unless its
    // kind is `stop_kind` (such an event waits for its own time, and so do all after it).
    bool pop_due(uint64_t now, uint64_t limit, uint8_t stop_kind, WheelItem& out, uint64_t& next) {
        next = kEmpty;
        const uint64_t lim = std::max(now, limit);
        if (m_count == 0) return false;
        const uint64_t now_b = lim >> kShift;
        for (;;) {
            migrate();
            const uint64_t ab = first_bucket();
            if (ab == kEmpty) {
                // Only far events remain: move the window towards the earliest of them.
                m_base = std::min(now_b, m_over.front().tick >> kShift);
                if ((m_over.front().tick >> kShift) - m_base >= kBuckets) {
                    next = m_over.front().tick;
                    return false;
                }
                continue;
            }
            m_base = std::min(ab, now_b);
            const uint64_t b = ab & kMask;
            // A bucket is kept in (tick, seq) order: its head is its earliest item.
            const uint32_t best = m_bucket[b].head;
            const WheelItem& bi = m_nodes[best].item;
            if (bi.tick > lim || (bi.tick > now && bi.kind == stop_kind)) {
                // The bucket's earliest item is the earliest overall unless a far event (in the
                // overflow heap, not yet migrated) is earlier, which migrate() rules out.
                next = m_nodes[best].item.tick;
                if (!m_over.empty()) next = std::min(next, m_over.front().tick);
                return false;
            }
            out = m_nodes[best].item;
            m_bucket[b].head = m_nodes[best].next;
            if (m_bucket[b].finger == best) m_bucket[b].finger = kNil;
            m_nodes[best].next = m_free;
            m_free = best;
            if (m_bucket[b].head == kNil) m_bits[b >> 6] &= ~(uint64_t(1) << (b & 63));
            --m_count;
            return true;
        }
    }

    // The earliest pending tick (kEmpty when none).
    uint64_t next_tick() {
        if (m_count == 0) return kEmpty;
        migrate();
        const uint64_t ab = first_bucket();
        uint64_t best = m_over.empty() ? kEmpty : m_over.front().tick;
        if (ab != kEmpty) best = std::min(best, m_nodes[m_bucket[ab & kMask].head].item.tick);
        return best;
    }

private:
    static constexpr uint32_t kNil = ~0u;
    struct Node {
        WheelItem item;
        uint32_t next;
    };
    // Buckets are intrusive lists through a node pool: a freed node is reused first, so pushes
    // touch memory that is already in cache.
    [[gnu::always_inline]] void put(uint64_t ab, const WheelItem& it) {
        uint32_t n;
        if (m_free != kNil) {
            n = m_free;
            m_free = m_nodes[n].next;
        } else {
            n = static_cast<uint32_t>(m_nodes.size());
            m_nodes.push_back({});
        }
        const uint64_t b = ab & kMask;
        m_nodes[n].item = it;
        // Keep the bucket sorted by (tick, seq). Sequence numbers grow, so a new event usually
        // goes last: the tail is checked first, and only an earlier tick walks the list.
        if (m_bucket[b].head == kNil) {
            m_nodes[n].next = kNil;
            m_bucket[b].head = m_bucket[b].tail = n;
            m_bits[b >> 6] |= uint64_t(1) << (b & 63);
        } else if (!(it < m_nodes[m_bucket[b].tail].item)) {
            m_nodes[n].next = kNil;
            m_nodes[m_bucket[b].tail].next = n;
            m_bucket[b].tail = n;
        } else if (it < m_nodes[m_bucket[b].head].item) {
            m_nodes[n].next = m_bucket[b].head;
            m_bucket[b].head = n;
            m_bucket[b].finger = n;
        } else {
            // An earlier tick than the tail's: a bucket (128 ps) can hold events of two or more
            // ticks (core-clock, HBM-clock and nanosecond latencies), many of them at the
            // earlier one. The walk starts at the bucket's last such insert (its finger) when
            // that is not after the new event: events of one tick come in sequence order, so the
            // next one of that tick goes right after it, without walking the list again.
            const uint32_t f = m_bucket[b].finger;
            uint32_t prev = f != kNil && !(it < m_nodes[f].item) ? f : m_bucket[b].head;
            while (!(it < m_nodes[m_nodes[prev].next].item)) prev = m_nodes[prev].next;
            m_nodes[n].next = m_nodes[prev].next;
            m_nodes[prev].next = n;
            m_bucket[b].finger = n;
        }
    }
    void migrate() {
        while (!m_over.empty() && (m_over.front().tick >> kShift) - m_base < kBuckets) {
            std::pop_heap(m_over.begin(), m_over.end(), std::greater<WheelItem>());
            put(m_over.back().tick >> kShift, m_over.back());
            m_over.pop_back();
        }
    }
    // Absolute index of the first non-empty bucket at or after m_base, or kEmpty.
    uint64_t first_bucket() const {
        constexpr uint64_t kWords = kBuckets / 64;
        const uint64_t start = m_base & kMask;
        uint64_t w = start >> 6;
        uint64_t bits = m_bits[w] & (~uint64_t(0) << (start & 63));
        for (uint64_t n = 0;; ++n) {
            if (bits) {
                const uint64_t pos = (w << 6) + static_cast<uint64_t>(__builtin_ctzll(bits));
                return m_base + ((pos - start) & kMask);
            }
            if (n == kWords) return kEmpty;
            w = (w + 1) & (kWords - 1);
            bits = m_bits[w];
            // Back at the start word: only the buckets before the start remain.
            if (n + 1 == kWords) bits &= (start & 63) ? (uint64_t(1) << (start & 63)) - 1 : 0;
        }
    }

    struct Bucket {
        uint32_t head = kNil, tail = kNil;  // first and last node (tail valid while non-empty)
        uint32_t finger = kNil;  // the node of the last insert before the tail (kNil once popped)
    };
    std::vector<Bucket> m_bucket;  // head, tail and finger side by side: one host cache line per access
    std::vector<uint64_t> m_bits;
    std::vector<Node> m_nodes;
    uint32_t m_free = kNil;
    std::vector<WheelItem> m_over;
    uint64_t m_base = 0;
    uint64_t m_seq = 0;
    size_t m_count = 0;
};

}  // namespace sfumato::mem
