// Statistics and trace counters of the memory system (memory_system.h): totals over the HBM
// channels, L2 hit rates, the formulas registered under the component's stats group, and the
// windowed bandwidth / hit-rate counters of the Mem trace level.
#include "models/mem/memory_system.h"

#include <algorithm>

#include "sim/error.h"
#include "sim/sc_time_util.h"

namespace sfumato::mem {

void MemorySystem::add_stat_formulas() {
    auto sum = [this](uint64_t HbmChannelStats::*f) {
        return [this, f] { return static_cast<double>(hbm_totals().*f); };
    };
    auto add = [this](const char* n, const char* unit, const char* d, std::function<double()> fn) {
        m_formulas.push_back(std::make_unique<Formula>(m_hbm_stats, n, unit, d, std::move(fn)));
    };
    add("reads", "requests", "read requests served", sum(&HbmChannelStats::reads));
    add("writes", "requests", "write requests served", sum(&HbmChannelStats::writes));
    add("bytes_read", "B", "bytes read", sum(&HbmChannelStats::bytes_read));
    add("bytes_written", "B", "bytes written", sum(&HbmChannelStats::bytes_written));
    add("row_hits", "requests", "requests that found their row open", sum(&HbmChannelStats::row_hits));
    add("row_misses", "requests", "requests to a closed bank", sum(&HbmChannelStats::row_misses));
    add("row_conflicts", "requests", "requests that closed another row", sum(&HbmChannelStats::row_conflicts));
    add("activates", "commands", "activate commands", sum(&HbmChannelStats::activates));
    add("refreshes", "commands", "refresh windows that took effect", sum(&HbmChannelStats::refreshes));
    add("write_drains", "batches", "write drains started by the high watermark", sum(&HbmChannelStats::write_drains));
    add("turnarounds", "switches", "read-to-write and write-to-read switches of the data bus", sum(&HbmChannelStats::turnarounds));
    add("bursts", "commands", "column accesses", sum(&HbmChannelStats::bursts));
    add("row_hit_rate", "ratio", "column accesses that found their row open / all column accesses", [this] { return row_hit_rate(); });
    add("peak_gbps", "GB/s", "channels x bus width x data rate", [this] { return peak_gbps(); });
    m_formulas.push_back(std::make_unique<Formula>(m_l2_stats, "hit_rate", "ratio", "L2 hits / accesses", [this] { return l2_hit_rate(); }));
}

HbmChannelStats MemorySystem::hbm_totals() const {
    mt_settle();
    HbmChannelStats t;
    std::vector<HbmChannelStats> per;
    per.reserve(m_channels.size());
    if (m_bulk)
        for (const auto& c : m_bulk_ch) per.push_back(c.stats());
    else
        for (const auto& c : m_channels) per.push_back(c.stats());
    for (const auto& s : per) {
        t.reads += s.reads;
        t.writes += s.writes;
        t.bytes_read += s.bytes_read;
        t.bytes_written += s.bytes_written;
        t.row_hits += s.row_hits;
        t.row_misses += s.row_misses;
        t.row_conflicts += s.row_conflicts;
        t.activates += s.activates;
        t.refreshes += s.refreshes;
        t.busy_ck += s.busy_ck;
        t.bursts += s.bursts;
        t.burst_row_hits += s.burst_row_hits;
        t.write_drains += s.write_drains;
        t.turnarounds += s.turnarounds;
    }
    return t;
}

double MemorySystem::row_hit_rate() const {
    const auto t = hbm_totals();
    return t.bursts ? static_cast<double>(t.burst_row_hits) / static_cast<double>(t.bursts) : 0.0;
}
uint64_t MemorySystem::l2_hits() const {
    uint64_t n = 0;
    for (const auto& r : m_req) n += r->hits.value();
    return n;
}
uint64_t MemorySystem::l2_misses() const {
    uint64_t n = 0;
    for (const auto& r : m_req) n += r->misses.value();
    return n;
}
double MemorySystem::l2_hit_rate() const {
    const uint64_t h = l2_hits(), m = l2_misses();
    return h + m ? static_cast<double>(h) / static_cast<double>(h + m) : 0.0;
}

void MemorySystem::trace_tick(uint64_t t) {
    if (!m_trace_ready) {
        const uint32_t chans = m_hbm.stacks * m_hbm.channels_per_stack;
        m_trace_bytes.assign(chans, 0);
        // A lone chip's counters go in the "memory" process; in a system of chips (a chip module
        // inside another) each chip's get their own ("chip3 memory"), so chips do not share tracks.
        std::string process = "memory";
        if (const sc_core::sc_object* chip = get_parent_object(); chip && chip->get_parent_object())
            process = std::string(chip->basename()) + " memory";
        for (uint32_t c = 0; c < chans; ++c)
            m_trace_tracks.push_back(m_trace->sink()->counter_track(process, "hbm ch" + std::to_string(c) + " GB/s"));
        m_trace_l2 = m_trace->sink()->counter_track(process, "l2 hit rate");
        m_trace_window_end = m_trace_window_ps;
        m_trace_ready = true;
    }
    while (t >= m_trace_window_end) {
        const Tick at(m_trace_window_end - m_trace_window_ps);
        bool idle = m_trace_accesses == 0;
        for (size_t c = 0; c < m_trace_bytes.size(); ++c) {
            idle = idle && m_trace_bytes[c] == 0;
            m_trace->sink()->counter(m_trace_tracks[c], at, static_cast<double>(m_trace_bytes[c]) / static_cast<double>(m_trace_window_ps) * 1000.0);
            m_trace_bytes[c] = 0;
        }
        if (m_trace_accesses)
            m_trace->sink()->counter(m_trace_l2, at, static_cast<double>(m_trace_hits) / static_cast<double>(m_trace_accesses));
        m_trace_hits = m_trace_accesses = 0;
        m_trace_window_end += m_trace_window_ps;
        // Skip a gap of idle windows after emitting one zero sample.
        if (idle && t >= m_trace_window_end) m_trace_window_end = (t / m_trace_window_ps + 1) * m_trace_window_ps;
    }
}

void MemorySystem::flush_trace() {
    if (!m_trace || !m_trace->on(TraceLevel::Mem) || !m_trace_ready) return;
    trace_tick(m_trace_window_end);
}

}  // namespace sfumato::mem
