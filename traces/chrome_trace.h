// Chrome Trace Event JSON writer (opens in Perfetto and chrome://tracing). Tracks are
// (process, thread) pairs; slices are complete events ("X"), counters "C", flag arrows flow
// events ("s"/"f"). Consecutive slices of the same static name that touch on one track are
// merged into one slice with a count, so long runs of one instruction stay small. Memory is
// bounded: past kMaxBuffered events the buffer is formatted into an anonymous temporary file in
// $TMPDIR (else /tmp; slices are not merged across such a spill), and write() streams that file,
// then the rest. An optional event budget (set_budget) calls its hook once when the trace
// reaches it: the session then coarsens the level, so a default run's trace stays bounded.
#pragma once
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "sim/trace.h"

namespace sfumato {

class ChromeTraceWriter : public ITraceSink {
public:
    static constexpr size_t kMaxBuffered = 1 << 18;
    ChromeTraceWriter() = default;
    ~ChromeTraceWriter() override;
    ChromeTraceWriter(const ChromeTraceWriter&) = delete;
    ChromeTraceWriter& operator=(const ChromeTraceWriter&) = delete;
    TrackId track(const std::string& process, const std::string& thread, int sort) override;
    void slice(TrackId t, const char* name, Tick begin, Tick end, const TraceArg* args, int nargs) override;
    void slice_str(TrackId t, const std::string& name, Tick begin, Tick end, const TraceArg* args, int nargs) override;
    TrackId counter_track(const std::string& process, const std::string& name) override;
    void counter(TrackId t, Tick at, double value) override;
    void flow(TrackId from, Tick t_from, TrackId to, Tick t_to, const char* name) override;

    // Calls `on_reached` once, when the trace holds `events` events (0: no budget).
    void set_budget(size_t events, std::function<void()> on_reached) {
        m_budget = events;
        m_on_budget = std::move(on_reached);
    }
    bool budget_reached() const { return m_budget_reached; }
    size_t budget() const { return m_budget; }
    Tick budget_tick() const { return Tick(m_budget_ts); }  // the last event's start when it was reached

    // Writes the whole trace atomically.
    void write(const std::string& path) const;
    size_t events() const { return m_events.size() + m_spilled; }

private:
    struct Track {
        uint32_t pid, tid;
        std::string process, thread;
        int sort;
        int64_t last = -1;  // index of the last slice, for merging
    };
    struct Event {
        char ph;
        TrackId track;
        const char* name;  // static, or null when str >= 0
        int32_t str;       // index into m_strings
        uint64_t ts, dur;  // ps
        uint32_t merged;
        uint8_t nargs;
        TraceArg args[2];
        int32_t extra;  // index into m_extra_args of the args beyond two (-1: none)
        double value;
        uint64_t flow_id;
    };
    uint32_t pid_of(const std::string& process);
    void put_event(std::FILE* f, const Event& e) const;
    void push(const Event& e);
    void spill();
    void add_slice(TrackId t, const char* name, int32_t str, Tick b, Tick e, const TraceArg* args, int nargs);

    std::vector<Track> m_tracks;
    std::map<std::string, uint32_t> m_pids;
    std::vector<std::string> m_process_names;
    std::vector<Event> m_events;
    std::vector<std::string> m_strings;
    std::vector<std::vector<TraceArg>> m_extra_args;  // rare: slices with more than two args
    uint64_t m_next_flow = 1;
    std::FILE* m_spill = nullptr;  // events formatted so far (each preceded by ",\n")
    size_t m_spilled = 0;
    bool m_spill_failed = false;
    size_t m_budget = 0;
    std::function<void()> m_on_budget;
    bool m_budget_reached = false;
    uint64_t m_budget_ts = 0;
};

}  // namespace sfumato
