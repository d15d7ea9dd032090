// A calendar queue of timed events for the memory system: 2^15 buckets of 128 ps each (a
// ~4.2 us window) plus an overflow (a FIFO of far events pushed in order, a heap for the rest)
// for later events. Events leave in (tick, sequence)
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
    // Inlined at its call sites: a call's register saves were a third of its host instructions.
    [[gnu::always_inline]] void push(uint64_t tick, void* ptr, uint32_t arg, uint8_t kind) {
        ++m_count;
        // Far events that the window has reached are moved in first: an event goes into its
        // bucket after every earlier-pushed one of its tick (see put()).
        if (migrate_due()) migrate();
        const uint64_t ab = std::max(tick >> kShift, m_base);
        if (ab - m_base < kBuckets) put(ab, tick, ptr, arg, kind);
        else push_far({tick, m_seq++, ptr, arg, kind});
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
    // Inlined into the memory system's event loop (one call per event).
    [[gnu::always_inline]] bool pop_due(uint64_t now, uint64_t limit, uint8_t stop_kind, WheelItem& out,
                                        uint64_t& next) {
        return pop_due_if(now, limit, [stop_kind](uint64_t, uint8_t kind, void*) { return kind == stop_kind; }, out,
                          next);
    }
    // As above with a predicate: an event after `now` for which stop(tick, kind, ptr) is true is
    // not removed (nor is any after it).
    template <class Stop>
    [[gnu::always_inline]] bool pop_due_if(uint64_t now, uint64_t limit, Stop stop, WheelItem& out, uint64_t& next) {
        const uint64_t lim = std::max(now, limit);
        if (m_count == 0) {
            next = kEmpty;
            return false;
        }
        const uint64_t now_b = lim >> kShift;
        if (migrate_due()) migrate();
        // The base bucket, when it holds anything, holds the earliest events (the common case:
        // the bucket just popped from); otherwise the bit scan finds the first non-empty one.
        uint64_t ab = m_base;
        if (m_bucket[ab & kMask].head == kNil) {
            for (;;) {
                ab = first_bucket();
                if (ab != kEmpty) break;
                // Only far events remain: move the window towards the earliest of them.
                const uint64_t far = far_tick();
                m_base = std::min(now_b, far >> kShift);
                if ((far >> kShift) - m_base >= kBuckets) {
                    next = far;
                    return false;
                }
                migrate();
            }
        }
        m_base = std::min(ab, now_b);
        const uint64_t b = ab & kMask;
        Bucket& bk = m_bucket[b];
        // A bucket is kept in (tick, push) order: its head is its earliest item.
        const uint32_t best = bk.head;
        Node& bn = m_nodes[best];
        if (bn.tick > lim || (bn.tick > now && stop(bn.tick, bn.kind, bn.ptr))) {
            // The bucket's earliest item is the earliest overall unless a far event (in the
            // overflow heap, not yet migrated) is earlier, which migrate() rules out.
            next = std::min(bn.tick, far_tick());
            return false;
        }
        out.tick = bn.tick;
        out.seq = 0;
        out.ptr = bn.ptr;
        out.arg = bn.arg;
        out.kind = bn.kind;
        bk.head = bn.next;
        if (bk.finger == best) bk.finger = kNil;
        bn.next = m_free;
        m_free = best;
        if (bk.head == kNil) m_bits[b >> 6] &= ~(uint64_t(1) << (b & 63));
        --m_count;
        return true;
    }

    // The earliest pending tick (kEmpty when none).
    uint64_t next_tick() {
        if (m_count == 0) return kEmpty;
        if (migrate_due()) migrate();
        const uint64_t ab = first_bucket();
        uint64_t best = far_tick();
        if (ab != kEmpty) best = std::min(best, m_nodes[m_bucket[ab & kMask].head].tick);
        return best;
    }

private:
    static constexpr uint32_t kNil = ~0u;
    // A pending event: 32 bytes, aligned, so a node is one half of a host cache line. No sequence
    // number: a bucket's list is in push order within a tick (see put()).
    struct alignas(32) Node {
        uint64_t tick;
        void* ptr;
        uint32_t arg;
        uint32_t next;
        uint8_t kind;
    };
    static_assert(sizeof(Node) == 32, "two nodes per host cache line");
    // Buckets are intrusive lists through a node pool: a freed node is reused first, so pushes
    // touch memory that is already in cache.
    // Each bucket is kept in (tick, push order): a new event goes after every node of its tick
    // or earlier. That is (tick, sequence) order because every event pushed before it is already
    // in the buckets when it goes in (push() and pop_due() migrate due far events first, and
    // migrate() moves them in (tick, sequence) order).
    [[gnu::always_inline]] void put(uint64_t ab, uint64_t tick, void* ptr, uint32_t arg, uint8_t kind) {
        uint32_t n;
        if (m_free != kNil) {
            n = m_free;
            m_free = m_nodes[n].next;
        } else {
            n = static_cast<uint32_t>(m_nodes.size());
            m_nodes.push_back({});
        }
        const uint64_t b = ab & kMask;
        Node& nd = m_nodes[n];
        nd.tick = tick;
        nd.ptr = ptr;
        nd.arg = arg;
        nd.kind = kind;
        Bucket& bk = m_bucket[b];
        // A new event usually goes last: the tail is checked first, and only an earlier tick
        // walks the list.
        if (bk.head == kNil) {
            nd.next = kNil;
            bk.head = bk.tail = n;
            m_bits[b >> 6] |= uint64_t(1) << (b & 63);
        } else if (m_nodes[bk.tail].tick <= tick) {
            nd.next = kNil;
            m_nodes[bk.tail].next = n;
            bk.tail = n;
        } else if (tick < m_nodes[bk.head].tick) {
            nd.next = bk.head;
            bk.head = n;
            bk.finger = n;
        } else {
            // An earlier tick than the tail's: a bucket (128 ps) can hold events of two or more
            // ticks (core-clock, HBM-clock and nanosecond latencies), many of them at the
            // earlier one. The walk starts at the bucket's last such insert (its finger) when
            // that is not after the new event: events of one tick come in push order, so the
            // next one of that tick goes right after it, without walking the list again.
            const uint32_t f = bk.finger;
            uint32_t prev = f != kNil && m_nodes[f].tick <= tick ? f : bk.head;
            while (m_nodes[m_nodes[prev].next].tick <= tick) prev = m_nodes[prev].next;
            nd.next = m_nodes[prev].next;
            m_nodes[prev].next = n;
            bk.finger = n;
        }
    }
    // Far events (beyond the window) wait in (tick, sequence) order in two places: a run of
    // those pushed in order (each at or after the previous far push's tick: a DMA engine's link
    // arrivals, pushed a whole copy at a time, are ~10^5 of them), which is a FIFO, and a heap for
    // the others. The earliest of the two heads comes first, so events leave as from one heap;
    // a FIFO saves the heap's log(n) levels per event (session 30: eight SDMA engines' heaps of
    // 10^5 events were 2 % of the 8-chip step's profile; the run's time did not move measurably,
    // each event's first touch stays a cache miss either way).
    void push_far(const WheelItem& w) {
        if (m_run_head == m_run.size() || m_run.back().tick <= w.tick) {
            if (m_run_head == m_run.size()) {
                m_run.clear();
                m_run_head = 0;
            }
            m_run.push_back(w);
        } else {
            m_over.push_back(w);
            std::push_heap(m_over.begin(), m_over.end(), std::greater<WheelItem>());
        }
        m_far_tick = std::min(m_far_tick, w.tick);
    }
    // The earliest far event's tick (kEmpty when none).
    uint64_t far_tick() const { return m_far_tick; }
    void update_far_tick() {
        m_far_tick = kEmpty;
        if (m_run_head < m_run.size()) m_far_tick = m_run[m_run_head].tick;
        if (!m_over.empty()) m_far_tick = std::min(m_far_tick, m_over.front().tick);
    }
    // Whether the window has reached the earliest far event.
    bool migrate_due() const { return m_far_tick != kEmpty && (m_far_tick >> kShift) - m_base < kBuckets; }
    void migrate() {
        while (migrate_due()) {
            const bool from_run =
                m_run_head < m_run.size() && (m_over.empty() || m_run[m_run_head] < m_over.front());
            if (from_run) {
                const WheelItem& it = m_run[m_run_head++];
                put(it.tick >> kShift, it.tick, it.ptr, it.arg, it.kind);
                // The consumed prefix goes once it is most of the run (amortised O(1)).
                if (m_run_head >= 4096 && 2 * m_run_head >= m_run.size()) {
                    m_run.erase(m_run.begin(), m_run.begin() + static_cast<std::ptrdiff_t>(m_run_head));
                    m_run_head = 0;
                }
            } else {
                std::pop_heap(m_over.begin(), m_over.end(), std::greater<WheelItem>());
                const WheelItem& it = m_over.back();
                put(it.tick >> kShift, it.tick, it.ptr, it.arg, it.kind);
                m_over.pop_back();
            }
            update_far_tick();
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
    std::vector<WheelItem> m_over;  // far events pushed out of order: a heap
    std::vector<WheelItem> m_run;   // far events pushed in order: a FIFO from m_run_head
    size_t m_run_head = 0;
    uint64_t m_far_tick = kEmpty;   // the earliest far event's tick
    uint64_t m_base = 0;
    uint64_t m_seq = 0;
    size_t m_count = 0;
};

}  // namespace sfumato::mem
