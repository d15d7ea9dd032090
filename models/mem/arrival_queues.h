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
        m_node.assign(2 * m_leaves, Node{kEmpty, kEmpty, 0});
        for (uint32_t i = 0; i < m_leaves; ++i) m_node[m_leaves + i].leaf = i;
        for (uint32_t n = m_leaves - 1; n >= 1; --n) m_node[n] = m_node[2 * n];
    }
    bool empty() const { return m_size == 0; }
    size_t size() const { return m_size; }
    // The earliest (tick, push order) item; the queue must not be empty.
    const Item& top() const { return m_fifo[m_node[1].leaf].front(); }
    uint64_t top_tick() const { return m_node[1].tick; }  // kEmpty when empty

    void push(uint32_t q, uint64_t tick, T* req) {
        Fifo& f = m_fifo[q];
        const bool head = f.push({tick, m_next_seq++, req});
        ++m_size;
        if (head) replay(q);
    }
    void pop() {
        const uint32_t q = m_node[1].leaf;
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
    // A node of the winner tree: the earliest head below it (its key and leaf); leaves at
    // m_leaves + q hold their own FIFO's head (kEmpty keys: none).
    struct Node {
        uint64_t tick, seq;
        uint32_t leaf;
    };
    // Leaf q's head changed: its key, then the winners on its path to the root, up to the first
    // node whose winner stays what it was.
    void replay(uint32_t q) {
        const Fifo& f = m_fifo[q];
        Node* nd = m_node.data();
        Node& lf = nd[m_leaves + q];
        lf.tick = f.n ? f.front().tick : kEmpty;
        lf.seq = f.n ? f.front().seq : kEmpty;
        for (uint32_t n = (m_leaves + q) >> 1; n >= 1; n >>= 1) {
            const Node& a = nd[2 * n];
            const Node& b = nd[2 * n + 1];
            const Node& w = (b.tick < a.tick || (b.tick == a.tick && b.seq < a.seq)) ? b : a;
            if (w.leaf == nd[n].leaf && w.tick == nd[n].tick && w.seq == nd[n].seq) break;
            nd[n] = w;
        }
    }

    uint32_t m_leaves = 1;
    std::vector<Fifo> m_fifo;
    std::vector<Node> m_node;  // the winner tree, root at 1
    uint64_t m_next_seq = 0;
    size_t m_size = 0;
};

}  // namespace sfumato::mem
