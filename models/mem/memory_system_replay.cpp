// The traffic of kernels the chip did not simulate (timing re-use stand-ins, runtime/reuse),
// applied to the L2 tags at once and untimed (sim/traffic_replay.h). A stand-in takes the time
// of an earlier full run of the same kernel, which already holds that kernel's traffic and its
// contention; what it must still leave behind is the cache state: the lines it read valid, the
// lines it wrote dirty, the most recent last, and what they pushed out written back. Without
// that, the kernels simulated in full after it find in the L2 what its traffic would have
// evicted (an LLM decode step's paged attention finds its K and V resident) and run faster than
// in an exact run. Each line access is a tag lookup with the replacement state touched; a miss
// allocates the line (its missing sectors count as HBM reads), a dirty victim counts as an HBM
// write; nothing enters the HBM queues. Only the last L2-capacity bytes of the ranges are
// applied line by line: an LRU cache holds at most that much of the sequence, so the earlier part
// leaves no line behind; it is counted as HBM traffic whole (a line it would have found resident
// is counted too: the error is at most the L2's size per replay). Simplified: lines are taken in
// range order (a kernel's own order within its footprint is lost); a line whose fill is still
// outstanding is touched like any other (its fill lands as after an eviction).
#include <algorithm>

#include "models/mem/memory_system.h"

namespace sfumato::mem {

void MemorySystem::replay_traffic(const std::vector<GmRange>& ranges) {
    const uint64_t capacity = uint64_t{m_l2.g.line_bytes} * m_l2.g.sets * m_l2.g.ways * m_l2.g.slices;
    // From the end: the ranges (and the part of one) the last `capacity` bytes cover.
    uint64_t tail = 0;
    size_t first = ranges.size();
    uint64_t skip_in_first = 0;
    while (first > 0 && tail < capacity) {
        const GmRange& r = ranges[first - 1];
        --first;
        if (tail + r.bytes > capacity) {
            skip_in_first = r.bytes - (capacity - tail);
            tail = capacity;
            break;
        }
        tail += r.bytes;
    }
    for (size_t i = 0; i < first; ++i) (ranges[i].write ? m_standin_written : m_standin_read) += ranges[i].bytes;
    for (size_t i = first; i < ranges.size(); ++i) {
        const GmRange& r = ranges[i];
        const uint64_t skip = i == first ? skip_in_first : 0;
        if (skip) (r.write ? m_standin_written : m_standin_read) += skip;
        replay_range(r.addr + skip, r.bytes - skip, r.write);
    }
}

void MemorySystem::replay_range(uint64_t addr, uint64_t bytes, bool write) {
    const uint64_t lb = m_l2.g.line_bytes, sb = m_l2.g.sector_bytes;
    uint64_t a = addr;
    const uint64_t end = addr + bytes;
    while (a < end) {
        const uint64_t line = line_of(a);
        const uint64_t line_end = std::min(end, (line + 1) * lb);
        Slice& s = m_slices[slice_of(line)];
        const uint64_t mask = s.tags->sector_mask(a, static_cast<uint32_t>(line_end - a));
        ++m_standin_lines;
        uint32_t slot = s.tags->find(line, true);
        uint64_t have = 0;
        if (slot == L2Tags::kNone) {
            L2Tags::Victim v;
            slot = s.tags->allocate(line, v);
            if (v.evicted) {
                note_eviction(s, v);
                m_standin_written += static_cast<uint64_t>(__builtin_popcountll(v.dirty)) * sb;
            }
        } else {
            have = s.tags->valid(slot);
        }
        if (write) {
            s.tags->add_dirty(slot, mask);
        } else {
            m_standin_read += static_cast<uint64_t>(__builtin_popcountll(mask & ~have)) * sb;
            s.tags->add_valid(slot, mask);
        }
        a = line_end;
    }
}

}  // namespace sfumato::mem
