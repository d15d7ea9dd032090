// A single-producer single-consumer ring of fixed power-of-two capacity for the memory system's
// two threads (memory_system_mt.cpp). Each side keeps its own index and a cached copy of the
// other's; indices are published with release stores every kBatch entries (and when a side asks
// with publish()), read with acquire loads only when the cached copy runs out. No locks.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace sfumato::mem {

template <class T>
class SpscRing {
public:
    static constexpr uint64_t kBatch = 16;
    explicit SpscRing(size_t capacity_pow2) : m_buf(capacity_pow2), m_mask(capacity_pow2 - 1) {}

    // Producer: the slot to fill next, or nullptr while the ring is full.
    T* slot() {
        if (m_p.head - m_p.tail_seen == m_buf.size()) {
            m_p.tail_seen = m_tail.load(std::memory_order_acquire);
            if (m_p.head - m_p.tail_seen == m_buf.size()) return nullptr;
        }
        return &m_buf[m_p.head & m_mask];
    }
    // Producer: the slot from slot() is filled.
    void commit() {
        if ((++m_p.head & (kBatch - 1)) == 0) publish();
    }
    // Producer: everything committed becomes visible to the consumer.
    void publish() {
        if (m_p.head != m_p.published) {
            m_head.store(m_p.head, std::memory_order_release);
            m_p.published = m_p.head;
        }
    }

    // Consumer: the oldest entry, or nullptr when none is visible.
    const T* front() {
        if (m_c.tail == m_c.head_seen) {
            m_c.head_seen = m_head.load(std::memory_order_acquire);
            if (m_c.tail == m_c.head_seen) return nullptr;
        }
        return &m_buf[m_c.tail & m_mask];
    }
    // Consumer: the entry `k` after front() if already seen (for prefetching), else nullptr.
    const T* ahead(uint64_t k) const {
        return m_c.tail + k < m_c.head_seen ? &m_buf[(m_c.tail + k) & m_mask] : nullptr;
    }
    // Consumer: done with front().
    void pop() {
        if ((++m_c.tail & (kBatch - 1)) == 0) release();
    }
    // Consumer: the slots consumed so far may be refilled.
    void release() {
        if (m_c.tail != m_c.released) {
            m_tail.store(m_c.tail, std::memory_order_release);
            m_c.released = m_c.tail;
        }
    }

private:
    std::vector<T> m_buf;
    uint64_t m_mask;
    alignas(64) std::atomic<uint64_t> m_head{0};  // published by the producer
    alignas(64) std::atomic<uint64_t> m_tail{0};  // published by the consumer
    struct alignas(64) Producer {
        uint64_t head = 0, tail_seen = 0, published = 0;
    } m_p;
    struct alignas(64) Consumer {
        uint64_t tail = 0, head_seen = 0, released = 0;
    } m_c;
};

}  // namespace sfumato::mem
