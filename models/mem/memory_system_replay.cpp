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
// Speed: a decode step hands over an L2's worth of lines (393216 on the 910B-like chip) before
// each of its kernels simulated in full. With a replacement policy that keeps its state per set
// as age ranks (LRU, FIFO: L2Tags::bulk_replay), the accesses are grouped by slice (each slice's
// in range order), then by set (a stable counting sort over a slice's accesses, which fit the host
// cache), and each set's applied at once (L2Tags::replay_set): its tags, states and ranks are
// looked up once, and a full set whose accesses all miss (distinct lines, none held: the usual
// case for streamed weights) takes them without stepping the ranks access by access. Sets are
// independent (a line maps to one set of one slice; the counters are sums; an eviction's only
// other effect, marking a pending fill of the victim stolen, does not depend on the order), so
// the result is exactly that of applying the accesses line by line in range order, which the
// other policies (random: one generator per slice, whose draws follow the order) and
// set_replay_per_line still do, by slice.
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
    if (!m_replay_per_line && m_slices[0].tags->bulk_replay()) {
        replay_by_set(ranges, first, skip_in_first);
        return;
    }
    if (m_replay_by_slice.size() != m_slices.size()) m_replay_by_slice.assign(m_slices.size(), {});
    for (auto& v : m_replay_by_slice) v.clear();
    for (size_t i = first; i < ranges.size(); ++i) {
        const GmRange& r = ranges[i];
        const uint64_t skip = i == first ? skip_in_first : 0;
        if (skip) (r.write ? m_standin_written : m_standin_read) += skip;
        replay_range(r.addr + skip, r.bytes - skip, r.write);
    }
    for (size_t si = 0; si < m_slices.size(); ++si) {
        Slice& s = m_slices[si];
        for (const ReplayLine& l : m_replay_by_slice[si])
            replay_line(s, l.line_w & ~(uint64_t{1} << 63), l.mask, (l.line_w >> 63) != 0);
    }
}

void MemorySystem::replay_by_set(const std::vector<GmRange>& ranges, size_t first, uint64_t skip_in_first) {
    const uint64_t lb = m_l2.g.line_bytes;
    const uint32_t sets = m_l2.g.sets;
    const L2Tags& tags0 = *m_slices[0].tags;
    // The accesses by slice, each slice's in range order.
    if (m_rp_slice.size() != m_slices.size()) m_rp_slice.assign(m_slices.size(), {});
    for (auto& v : m_rp_slice) v.clear();
    size_t lines = 0;
    for (size_t i = first; i < ranges.size(); ++i) {
        const GmRange& r = ranges[i];
        const uint64_t skip = i == first ? skip_in_first : 0;
        if (skip) (r.write ? m_standin_written : m_standin_read) += skip;
        for (uint64_t a = r.addr + skip, end = r.addr + r.bytes; a < end; ++lines) {
            const uint64_t line = line_of(a);
            const uint64_t line_end = std::min(end, (line + 1) * lb);
            m_rp_slice[slice_of(line)].push_back({static_cast<uint32_t>(line), r.write ? 1u : 0u,
                                                  tags0.sector_mask(a, static_cast<uint32_t>(line_end - a))});
            a = line_end;
        }
    }
    L2Tags::ReplayTotals totals;
    m_rp_start.resize(size_t(sets) + 1);
    for (size_t si = 0; si < m_slices.size(); ++si) {
        Slice& s = m_slices[si];
        const std::vector<L2Tags::ReplayAccess>& in = m_rp_slice[si];
        if (in.empty()) continue;
        // A stable counting sort by set (a slice's accesses fit the host cache).
        std::fill(m_rp_start.begin(), m_rp_start.end(), 0u);
        for (const L2Tags::ReplayAccess& x : in) ++m_rp_start[s.tags->set_of(x.line) + 1];
        for (size_t k = 1; k <= sets; ++k) m_rp_start[k] += m_rp_start[k - 1];
        m_rp_fill.assign(m_rp_start.begin(), m_rp_start.end() - 1);
        m_rp_sorted.resize(in.size());
        for (const L2Tags::ReplayAccess& x : in) m_rp_sorted[m_rp_fill[s.tags->set_of(x.line)]++] = x;
        // Evicting a line whose fill is outstanding marks that fill stolen (note_eviction): only
        // while one of the slice's MSHRs is busy.
        const bool busy = s.free_mshrs.size() != s.mshrs.size();
        m_rp_evicted.clear();
        for (uint32_t set = 0; set < sets; ++set) {
            if (set + 4 < sets) s.tags->prefetch_set(set + 4);
            const uint32_t b = m_rp_start[set], e = m_rp_start[set + 1];
            if (b != e)
                s.tags->replay_set(set, &m_rp_sorted[b], e - b, totals, busy ? &m_rp_evicted : nullptr);
        }
        for (const uint64_t line : m_rp_evicted) note_eviction(s, L2Tags::Victim{line, 0, true});
    }
    m_standin_lines += lines;
    m_standin_read += totals.read_sectors * m_l2.g.sector_bytes;
    m_standin_written += totals.written_sectors * m_l2.g.sector_bytes;
}

// Splits [addr, addr + bytes) into line accesses, by slice.
void MemorySystem::replay_range(uint64_t addr, uint64_t bytes, bool write) {
    const uint64_t lb = m_l2.g.line_bytes;
    const L2Tags& tags = *m_slices[0].tags;
    const uint64_t w = write ? uint64_t{1} << 63 : 0;
    uint64_t a = addr;
    const uint64_t end = addr + bytes;
    while (a < end) {
        const uint64_t line = line_of(a);
        const uint64_t line_end = std::min(end, (line + 1) * lb);
        m_replay_by_slice[slice_of(line)].push_back({line | w, tags.sector_mask(a, static_cast<uint32_t>(line_end - a))});
        a = line_end;
    }
}

void MemorySystem::replay_line(Slice& s, uint64_t line, uint64_t mask, bool write) {
    ++m_standin_lines;
    uint32_t slot = s.tags->find(line, true);
    uint64_t have = 0;
    if (slot == L2Tags::kNone) {
        L2Tags::Victim v;
        slot = s.tags->allocate(line, v);
        if (v.evicted) {
            note_eviction(s, v);
            m_standin_written += static_cast<uint64_t>(__builtin_popcountll(v.dirty)) * m_l2.g.sector_bytes;
        }
    } else {
        have = s.tags->valid(slot);
    }
    if (write) {
        s.tags->add_dirty(slot, mask);
    } else {
        m_standin_read += static_cast<uint64_t>(__builtin_popcountll(mask & ~have)) * m_l2.g.sector_bytes;
        s.tags->add_valid(slot, mask);
    }
}

}  // namespace sfumato::mem
