// A small set-associative tag array with LRU replacement and a dirty bit per line, no data: the
// scalar unit's instruction cache, data cache and TLB (scalar_mem.h). Plain C++.
#pragma once
#include <cstdint>
#include <vector>

namespace sfumato {

class TagArray {
public:
    struct Victim {
        bool valid = false, dirty = false;
        uint64_t line = 0;
    };
    void configure(uint64_t lines, uint32_t ways);
    // Hit: true, and the line becomes most recently used.
    bool lookup(uint64_t line);
    // Inserts a line known to be absent; returns the line it replaced.
    Victim insert(uint64_t line);
    void set_dirty(uint64_t line);
    // Removes the line if present; true when it was dirty.
    bool invalidate(uint64_t line);
    void clear();
    // Every dirty line, in set/way order; marks them clean.
    std::vector<uint64_t> take_dirty();
    uint64_t capacity_lines() const { return m_entries.size(); }

private:
    // An entry holds a line only while its epoch is the array's: clear() starts a new epoch (a
    // core clears its caches and TLB at every block's start, and a walk over every entry was
    // most of that start's host time).
    struct Entry {
        uint64_t line = 0, used = 0;
        uint32_t epoch = 0;
        bool valid = false, dirty = false;
    };
    bool holds(const Entry& e) const { return e.valid && e.epoch == m_epoch; }
    Entry* find(uint64_t line);
    std::vector<Entry> m_entries;
    uint32_t m_ways = 1;
    uint32_t m_epoch = 0;
    uint64_t m_sets = 1, m_clock = 0;
};

}  // namespace sfumato
