// A calendar queue of timed events for the memory system: 2^15 buckets of 64 ps each (a
// ~2.1 us window) plus an overflow (a FIFO of far events pushed in order, a heap for the rest)
// for later events. Events leave in (tick, late, sequence) order, so runs are deterministic: an
// event pushed `late` goes after every other event of its tick, whenever either was pushed (the
// memory system's arrivals at a slice, which follow its internal events of their tick), and
// events of one tick and lateness leave in push order. Each bucket is a list kept in that order
// (a push usually appends, a pop takes the head). Pushing and popping cost O(1) for the near-future events
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
    uint64_t seq;  // the event's order within its tick and lateness (EventWheel::push's `ord`)
    void* ptr;
    uint32_t arg;
    uint8_t kind;
    bool operator<(const WheelItem& o) const { return tick != o.tick ? tick < o.tick : seq < o.seq; }
    bool operator>(const WheelItem& o) const { return o < *this; }
};

class EventWheel {
public:
    static constexpr uint32_t kShift = 6;
    static constexpr uint64_t kBuckets = 1u << 15;
    static constexpr uint64_t kMask = kBuckets - 1;
    static constexpr uint64_t kEmpty = ~uint64_t(0);

    EventWheel() : m_bucket(kBuckets), m_bits(kBuckets / 64, 0) { m_nodes.reserve(1 << 12); }
    bool empty() const { return m_count == 0; }
    size_t size() const { return m_count; }

    // An event pushed before the `now` of the last pop_due() leaves first (at once).
    // Inlined at its call sites: a call's register saves were a third of its host instructions.
    // The common case only (a free node, the tick inside the window, the event last in its
    // bucket); the rest is out of line, so a caller needs no stack frame for it.
    // `ord` (below 2^56) orders events of one tick and lateness; events of equal ord leave in
    // push order, except that an even ord's events leave in the order of their `arg` (a 32-bit
    // sequence number, compared modulo 2^32: the memory system's HBM-side events, which may be
    // pushed out of order by its second thread, memory_system.h). With ord 0 throughout, the
    // order is push order.
    [[gnu::always_inline]] void push(uint64_t tick, void* ptr, uint32_t arg, uint8_t kind, bool late = false,
                                     uint64_t ord = 1) {
        const uint64_t key = tick << 1 | uint64_t(late);
        const uint64_t ab = tick >> kShift;
        const uint32_t n = m_free;
        const uint64_t ko = ord << 8 | kind;
        // ab - m_base wraps for a tick before the window's base bucket.
        if (__builtin_expect(n == kNil || ab - m_base >= kBuckets, 0))
            return push_slow(key, ptr, arg, ko);
        ++m_count;
        m_free = m_nodes[n].next;
        link(ab, n, key, ptr, arg, ko);
    }

    // Brings the bucket a push of `tick` would go to into the host cache (for a batch of pushes).
    void prefetch(uint64_t tick) const { __builtin_prefetch(&m_bucket[(tick >> kShift) & kMask]); }

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
        return pop_due_if(now, limit, kEmpty, stop, out, next);
    }
    // As above, but no event of tick `safe` or later leaves (whatever `now`): the memory system's
    // two-thread mode, where events before `safe` are all known.
    template <class Stop>
    [[gnu::always_inline]] bool pop_due_if(uint64_t now, uint64_t limit, uint64_t safe, Stop stop, WheelItem& out,
                                           uint64_t& next) {
        const uint64_t lim = std::max(now, limit);
        // Keys (tick << 1 | late) past every event of tick lim and of tick now.
        const uint64_t lim_key = lim << 1 | 1, now_key = now << 1 | 1;
        // The base bucket, when it holds anything, holds the earliest events (the common case:
        // the bucket just popped from); otherwise the bit scan finds the first non-empty one and
        // the window moves there. (A base bucket holding anything stays the base: the window
        // never moves back, and an event pushed before it goes into it, in key order.)
        uint64_t b = m_base & kMask;
        if (m_bucket[b].head == kNil) {
            if (m_count == 0) {
                next = kEmpty;
                return false;
            }
            const uint64_t now_b = lim >> kShift;
            uint64_t ab;
            for (;;) {
                ab = first_bucket();
                if (ab != kEmpty) break;
                // Only far events remain: move the window towards the earliest of them.
                m_base = std::max(m_base, std::min(now_b, m_far_b));
                if (m_far_b - m_base >= kBuckets) {
                    next = m_far_key >> 1;
                    return false;
                }
                migrate();
            }
            m_base = std::max(m_base, std::min(ab, now_b));
            // The window moved: the far events it reaches now go into their buckets (all after
            // bucket ab, which was inside the window while they were beyond it).
            if (migrate_due()) migrate();
            b = ab & kMask;
        }
        Bucket& bk = m_bucket[b];
        // A bucket is kept in (key, push) order: its head is its earliest item.
        const uint32_t best = bk.head;
        Node& bn = m_nodes[best];
        if (bn.key > lim_key || (bn.key >> 1) >= safe || (bn.key > now_key && stop(bn.key >> 1, bn.kind(), bn.ptr))) {
            // The bucket's earliest item is the earliest overall unless a far event (in the
            // overflow heap, not yet migrated) is earlier, which migrate() rules out.
            next = std::min(bn.key, m_far_key) >> 1;
            return false;
        }
        out.tick = bn.key >> 1;
        out.seq = bn.ko >> 8;
        out.ptr = bn.ptr;
        out.arg = bn.arg;
        out.kind = bn.kind();
        bk.head = bn.next;
        if (bk.finger == best) bk.finger = kNil;
        bn.next = m_free;
        m_free = best;
        if (bk.head == kNil) m_bits[b >> 6] &= ~(uint64_t(1) << (b & 63));
        --m_count;
        return true;
    }

    // The earliest event without removing it (false when none): out.tick, out.seq (ord), arg,
    // kind, ptr; `late` its lateness. Moves the window to it, as a pop would.
    bool peek(WheelItem& out, bool& late) {
        if (m_count == 0) return false;
        uint64_t b = m_base & kMask;
        if (m_bucket[b].head == kNil) {
            uint64_t ab;
            for (;;) {
                ab = first_bucket();
                if (ab != kEmpty) break;
                m_base = std::max(m_base, m_far_b);
                migrate();
            }
            m_base = std::max(m_base, ab);
            if (migrate_due()) migrate();
            b = ab & kMask;
        }
        const Node& bn = m_nodes[m_bucket[b].head];
        out.tick = bn.key >> 1;
        late = bn.key & 1;
        out.seq = bn.ko >> 8;
        out.ptr = bn.ptr;
        out.arg = bn.arg;
        out.kind = bn.kind();
        return true;
    }

    // The earliest pending tick (kEmpty when none).
    uint64_t next_tick() {
        if (m_count == 0) return kEmpty;
        const uint64_t ab = first_bucket();
        uint64_t best = m_far_key;
        if (ab != kEmpty) best = std::min(best, m_nodes[m_bucket[ab & kMask].head].key);
        return best >> 1;
    }

private:
    static constexpr uint32_t kNil = ~0u;
    // A pending event: 32 bytes, aligned, so a node is one half of a host cache line. Its key is
    // tick << 1 | late (one compare orders tick, then lateness). No sequence number: a bucket's
    // list is in push order within a key (see put()).
    struct alignas(32) Node {
        uint64_t key;
        void* ptr;
        uint32_t arg;
        uint32_t next;
        uint64_t ko;  // ord << 8 | kind
        uint8_t kind() const { return static_cast<uint8_t>(ko); }
        // Whether this node leaves before an event of (key, ko, arg) pushed now.
        bool before(uint64_t k, uint64_t o, uint32_t a) const {
            if (key != k) return key < k;
            const uint64_t mo = ko >> 8, no = o >> 8;
            if (mo != no) return mo < no;
            return (no & 1) || static_cast<int32_t>(arg - a) <= 0;
        }
    };
    static_assert(sizeof(Node) == 32, "two nodes per host cache line");
    struct Bucket {
        uint32_t head = kNil, tail = kNil;  // first and last node (tail valid while non-empty)
        uint32_t finger = kNil;  // the node of the last insert before the tail (kNil once popped)
    };
    // Everything push() leaves out of line.
    [[gnu::noinline]] void push_slow(uint64_t key, void* ptr, uint32_t arg, uint64_t ko) {
        ++m_count;
        const uint64_t ab = std::max(key >> (kShift + 1), m_base);
        if (ab - m_base < kBuckets) put(ab, key, ptr, arg, ko);
        else push_far({key, ko, m_seq++, ptr, arg});
    }
    void put(uint64_t ab, uint64_t key, void* ptr, uint32_t arg, uint64_t ko) {
        uint32_t n;
        if (m_free != kNil) {
            n = m_free;
            m_free = m_nodes[n].next;
        } else {
            n = static_cast<uint32_t>(m_nodes.size());
            m_nodes.push_back({});
        }
        link(ab, n, key, ptr, arg, ko);
    }
    // Buckets are intrusive lists through a node pool: a freed node is reused first, so pushes
    // touch memory that is already in cache.
    // Each bucket is kept in (key, push order): a new event goes after every node of its key
    // or earlier. That is (key, sequence) order because every event pushed before it is already
    // in the buckets when it goes in (no far event is due between calls, see migrate_due(), and
    // migrate() moves them in (key, sequence) order).
    [[gnu::always_inline]] void link(uint64_t ab, uint32_t n, uint64_t key, void* ptr, uint32_t arg, uint64_t ko) {
        const uint64_t b = ab & kMask;
        Node& nd = m_nodes[n];
        nd.key = key;
        nd.ptr = ptr;
        nd.arg = arg;
        nd.ko = ko;
        Bucket& bk = m_bucket[b];
        // A new event usually goes last: the tail is checked first, and only an earlier key
        // walks the list.
        if (bk.head == kNil) {
            nd.next = kNil;
            bk.head = bk.tail = n;
            m_bits[b >> 6] |= uint64_t(1) << (b & 63);
        } else if (m_nodes[bk.tail].before(key, ko, arg)) {
            nd.next = kNil;
            m_nodes[bk.tail].next = n;
            bk.tail = n;
        } else {
            insert_before_tail(bk, n, key, ko, arg);
        }
    }
    // Node n (key `key`, before bucket bk's tail) goes after every node that leaves before it.
    [[gnu::noinline]] void insert_before_tail(Bucket& bk, uint32_t n, uint64_t key, uint64_t ko, uint32_t arg) {
        Node& nd = m_nodes[n];
        if (!m_nodes[bk.head].before(key, ko, arg)) {
            nd.next = bk.head;
            bk.head = n;
            bk.finger = n;
        } else {
            // An earlier key than the tail's: a bucket (64 ps) can hold events of two or more
            // ticks (core-clock, HBM-clock and nanosecond latencies), many of them at the
            // earlier one. The walk starts at the bucket's last such insert (its finger) when
            // that is not after the new event: events of one key come in push order, so the
            // next one of that key goes right after it, without walking the list again.
            const uint32_t f = bk.finger;
            uint32_t prev = f != kNil && m_nodes[f].before(key, ko, arg) ? f : bk.head;
            while (m_nodes[m_nodes[prev].next].before(key, ko, arg)) prev = m_nodes[prev].next;
            nd.next = m_nodes[prev].next;
            m_nodes[prev].next = n;
            bk.finger = n;
        }
    }
    // Far events (beyond the window) wait in (key, sequence) order in two places: a run of
    // those pushed in order (each at or after the previous far push's key: a DMA engine's link
    // arrivals, pushed a whole copy at a time, are ~10^5 of them), which is a FIFO, and a heap for
    // the others. The earliest of the two heads comes first, so events leave as from one heap;
    // a FIFO saves the heap's log(n) levels per event (session 30: eight SDMA engines' heaps of
    // 10^5 events were 2 % of the 8-chip step's profile; the run's time did not move measurably,
    // each event's first touch stays a cache miss either way).
    struct Far {
        uint64_t key, ko, seq;
        void* ptr;
        uint32_t arg;
        bool operator<(const Far& o) const {
            if (key != o.key) return key < o.key;
            if ((ko >> 8) != (o.ko >> 8)) return (ko >> 8) < (o.ko >> 8);
            if (!((ko >> 8) & 1) && arg != o.arg) return static_cast<int32_t>(arg - o.arg) < 0;
            return seq < o.seq;
        }
        bool operator>(const Far& o) const { return o < *this; }
    };
    void push_far(const Far& w) {
        if (m_run_head == m_run.size() || !(w < m_run.back())) {
            if (m_run_head == m_run.size()) {
                m_run.clear();
                m_run_head = 0;
            }
            m_run.push_back(w);
        } else {
            m_over.push_back(w);
            std::push_heap(m_over.begin(), m_over.end(), std::greater<Far>());
        }
        set_far_key(std::min(m_far_key, w.key));
    }
    void set_far_key(uint64_t key) {
        m_far_key = key;
        m_far_b = key == kEmpty ? kEmpty : key >> (kShift + 1);
    }
    void update_far_key() {
        uint64_t key = kEmpty;
        if (m_run_head < m_run.size()) key = m_run[m_run_head].key;
        if (!m_over.empty()) key = std::min(key, m_over.front().key);
        set_far_key(key);
    }
    // Whether the window has reached the earliest far event (none: m_far_b - m_base is about
    // 2^64, the window never gets there). Never true between calls: the window moves only in
    // pop_due_if(), which migrates such events at once, so a push finds every event pushed
    // before it in the buckets (the order link() keeps).
    bool migrate_due() const { return m_far_b - m_base < kBuckets; }
    void migrate() {
        while (migrate_due()) {
            const bool from_run =
                m_run_head < m_run.size() && (m_over.empty() || m_run[m_run_head] < m_over.front());
            if (from_run) {
                const Far& it = m_run[m_run_head++];
                put(it.key >> (kShift + 1), it.key, it.ptr, it.arg, it.ko);
                // The consumed prefix goes once it is most of the run (amortised O(1)).
                if (m_run_head >= 4096 && 2 * m_run_head >= m_run.size()) {
                    m_run.erase(m_run.begin(), m_run.begin() + static_cast<std::ptrdiff_t>(m_run_head));
                    m_run_head = 0;
                }
            } else {
                std::pop_heap(m_over.begin(), m_over.end(), std::greater<Far>());
                const Far& it = m_over.back();
                put(it.key >> (kShift + 1), it.key, it.ptr, it.arg, it.ko);
                m_over.pop_back();
            }
            update_far_key();
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

    std::vector<Bucket> m_bucket;  // head, tail and finger side by side: one host cache line per access
    std::vector<uint64_t> m_bits;
    std::vector<Node> m_nodes;
    uint32_t m_free = kNil;
    std::vector<Far> m_over;  // far events pushed out of order: a heap
    std::vector<Far> m_run;   // far events pushed in order: a FIFO from m_run_head
    size_t m_run_head = 0;
    uint64_t m_far_key = kEmpty;  // the earliest far event's key
    uint64_t m_far_b = kEmpty;    // and its bucket (kEmpty when none)
    uint64_t m_base = 0;
    uint64_t m_seq = 0;
    size_t m_count = 0;
};

}  // namespace sfumato::mem
