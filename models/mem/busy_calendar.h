// A resource's busy time as a sorted list of disjoint intervals, for the bulk memory service
// (memory_system_bulk.cpp): reserve(t, d) takes the earliest gap of length d starting at or
// after t, so a request reserved later may still use an idle gap before one reserved earlier
// (requests are reserved in acceptance order, which is not the order of their times). Intervals
// ending at or before the floor (no later request can start before it) are dropped, and
// touching intervals merge, so a resource streaming back to back keeps one interval.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace sfumato::mem {

class BusyCalendar {
public:
    // The earliest start >= t of a free span of d (> 0) ticks; reserves it.
    uint64_t reserve(uint64_t t, uint64_t d) {
        size_t i;
        const uint64_t start = find(t, d, i);
        insert(i, start, start + d);
        return start;
    }
    // The same start without reserving it.
    uint64_t find(uint64_t t, uint64_t d) const {
        size_t i;
        return find(t, d, i);
    }
    // No later reservation starts before `t`: intervals ending by then are dropped.
    void set_floor(uint64_t t) {
        while (m_head < m_busy.size() && m_busy[m_head].end <= t) ++m_head;
        if (m_head >= 32 && 2 * m_head >= m_busy.size()) {  // drop the dead front now and then
            m_busy.erase(m_busy.begin(), m_busy.begin() + static_cast<std::ptrdiff_t>(m_head));
            m_head = 0;
        }
    }
    size_t intervals() const { return m_busy.size() - m_head; }
    // Hints the host cache to load the last interval (where most searches start).
    void prefetch_tail() const {
        if (!m_busy.empty()) __builtin_prefetch(&m_busy.back(), 1);
    }

private:
    struct Span {
        uint64_t start, end;
    };
    // The start, and the index of the first interval after it.
    uint64_t find(uint64_t t, uint64_t d, size_t& i) const {
        // From the back: most reservations land at or near the end. Intervals i.. end after t.
        i = m_busy.size();
        while (i > m_head && m_busy[i - 1].end > t) --i;
        uint64_t start = t;
        for (; i < m_busy.size(); ++i) {  // forward to the first gap that fits
            if (m_busy[i].start >= start + d) break;
            if (m_busy[i].end > start) start = m_busy[i].end;
        }
        return start;
    }
    // Inserts [s, e) before index i (it fits between i - 1 and i), merging touching neighbours.
    void insert(size_t i, uint64_t s, uint64_t e) {
        const bool left = i > m_head && m_busy[i - 1].end == s;
        const bool right = i < m_busy.size() && m_busy[i].start == e;
        if (left && right) {
            m_busy[i - 1].end = m_busy[i].end;
            m_busy.erase(m_busy.begin() + static_cast<std::ptrdiff_t>(i));
        } else if (left) {
            m_busy[i - 1].end = e;
        } else if (right) {
            m_busy[i].start = s;
        } else {
            m_busy.insert(m_busy.begin() + static_cast<std::ptrdiff_t>(i), Span{s, e});
        }
    }
    std::vector<Span> m_busy;  // from m_head on (the ones before it are dropped)
    size_t m_head = 0;
};

}  // namespace sfumato::mem
