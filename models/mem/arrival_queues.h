// Requests on their way to an L2 slice, taken in (tick, push order): the same order as one
// priority queue of every pending arrival, kept as one FIFO per slice and a winner tree over the
// slices' heads. A slice's arrivals come in tick order (its port is busy at least a cycle per
// request, memory_system_l2.cpp), so a push appends and a pop takes a FIFO's head; the tree then
// replays one leaf-to-root path of log2(slices) compares over a few hundred hot bytes, where a
// heap of every pending arrival (thousands while all cores stream) sifted through cold memory.
// A push earlier than its FIFO's tail is inserted in order (any push sequence stays correct).
#pragma once
#include <cstdint>
#include <vector>

namespace sfumato::mem {

template <typename T>
class ArrivalQueues {
public:
    static constexpr uint64_t kEmpty = ~uint64_t(0);
    struct Item {
        uint64_t tick = 0, seq = 0;
        T* req = nullptr;
    };

    explicit ArrivalQueues(uint32_t queues = 1) {
        m_leaves = 1;
        while (m_leaves < queues) m_leaves <<= 1;
        m_fifo.resize(m_leaves);
        m_key.assign(m_leaves, kEmptyKey);
        m_win.assign(2 * m_leaves, 0);
        for (uint32_t i = 0; i < m_leaves; ++i) m_win[m_leaves + i] = i;
        for (uint32_t n = m_leaves - 1; n >= 1; --n) m_win[n] = m_win[2 * n];
    }
    bool empty() const { return m_size == 0; }
    size_t size() const { return m_size; }
    // The earliest (tick, push order) item; the queue must not be empty.
    const Item& top() const { return m_fifo[m_win[1]].front(); }
    uint64_t top_tick() const { return static_cast<uint64_t>(m_key[m_win[1]] >> 64); }  // kEmpty when empty

    void push(uint32_t q, uint64_t tick, T* req) {
        Fifo& f = m_fifo[q];
        const bool head = f.push({tick, m_next_seq++, req});
        ++m_size;
        if (head) replay(q);
    }
    void pop() {
        const uint32_t q = m_win[1];
        m_fifo[q].pop();
        --m_size;
        replay(q);
    }

private:
    // A ring of items in (tick, seq) order.
    struct Fifo {
        std::vector<Item> buf;
        uint32_t head = 0, n = 0, mask = 0;
        const Item& front() const { return buf[head]; }
        // True when the item became the head.
        bool push(const Item& it) {
            if (n == buf.size()) grow();
            uint32_t pos = n;
            // Items come in tick order per slice; an earlier one is moved into place.
            while (pos > 0 && buf[(head + pos - 1) & mask].tick > it.tick) {
                buf[(head + pos) & mask] = buf[(head + pos - 1) & mask];
                --pos;
            }
            buf[(head + pos) & mask] = it;
            ++n;
            return pos == 0;
        }
        void pop() {
            head = (head + 1) & mask;
            --n;
        }
        void grow() {
            std::vector<Item> b(buf.empty() ? 16 : 2 * buf.size());
            for (uint32_t i = 0; i < n; ++i) b[i] = buf[(head + i) & mask];
            buf.swap(b);
            head = 0;
            mask = static_cast<uint32_t>(buf.size() - 1);
        }
    };
    // The winner tree: m_win[n] is the leaf (FIFO) whose head is the earliest below node n (root
    // at 1; m_win[m_leaves + q] = q), compared by the heads' keys: tick in the high half, push
    // order in the low (kEmptyKey: an empty FIFO). One key per leaf, the nodes hold leaf indices,
    // so a replay reads a few hundred hot bytes and compares keys in one step each.
    __extension__ typedef unsigned __int128 Key;
    static constexpr Key kEmptyKey = ~Key(0);
    static Key key_of(const Item& it) { return Key(it.tick) << 64 | it.seq; }
    // Leaf q's head changed: its key, then the winners on its path to the root, up to the first
    // node whose winner is another leaf than q and stays what it was (its key did not change).
    void replay(uint32_t q) {
        const Fifo& f = m_fifo[q];
        const Key* key = m_key.data();
        uint32_t* win = m_win.data();
        m_key[q] = f.n ? key_of(f.front()) : kEmptyKey;
        for (uint32_t n = (m_leaves + q) >> 1; n >= 1; n >>= 1) {
            const uint32_t a = win[2 * n], b = win[2 * n + 1];
            const uint32_t w = key[b] < key[a] ? b : a;
            if (w != q && w == win[n]) break;
            win[n] = w;
        }
    }

    uint32_t m_leaves = 1;
    std::vector<Fifo> m_fifo;
    std::vector<Key> m_key;      // per leaf: its FIFO's head
    std::vector<uint32_t> m_win;  // the winner tree
    uint64_t m_next_seq = 0;
    size_t m_size = 0;
};

}  // namespace sfumato::mem
