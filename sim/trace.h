// Trace hooks: components emit timeline events through a TraceHub, which forwards them to a
// sink (traces/ writes Chrome Trace Event JSON). Call sites check TraceHub::on(level) first, a
// cached comparison, so a run without tracing pays one branch per event site.
// Levels: op (host API and operators), task (stream tasks), instr (per-pipe instructions and
// flag arrows), mem (memory counters).
#pragma once
#include <cstdint>
#include <string>

#include "sim/time.h"

namespace sfumato {

enum class TraceLevel : uint8_t { Off = 0, Op = 1, Task = 2, Instr = 3, Mem = 4 };
// Parses off|op|task|instr|mem; false when unknown.
bool parse_trace_level(const std::string& s, TraceLevel& out);

using TrackId = uint32_t;

struct TraceArg {
    const char* key = nullptr;  // static string
    int64_t value = 0;
};

class ITraceSink {
public:
    virtual ~ITraceSink() = default;
    // A timeline track: `process` groups tracks (a device, a core), `thread` names the track.
    // `sort` orders tracks within their process.
    virtual TrackId track(const std::string& process, const std::string& thread, int sort) = 0;
    // `name` must outlive the sink (a static string such as an opcode mnemonic).
    virtual void slice(TrackId t, const char* name, Tick begin, Tick end, const TraceArg* args, int nargs) = 0;
    // Same, for names built at run time (operators, tasks): copied.
    virtual void slice_str(TrackId t, const std::string& name, Tick begin, Tick end, const TraceArg* args, int nargs) = 0;
    virtual TrackId counter_track(const std::string& process, const std::string& name) = 0;
    virtual void counter(TrackId t, Tick at, double value) = 0;
    // A flow arrow from (from, t_from) to (to, t_to); ids are unique per run.
    virtual void flow(TrackId from, Tick t_from, TrackId to, Tick t_to, const char* name) = 0;
};

class TraceHub {
public:
    void attach(ITraceSink* sink, TraceLevel level) { m_sink = sink; m_level = sink ? level : TraceLevel::Off; }
    bool on(TraceLevel l) const { return m_level >= l && l != TraceLevel::Off; }
    // Lowers the level for the rest of the run (a trace past its event budget keeps ops and
    // tasks only); never raises it.
    void coarsen(TraceLevel l) {
        if (m_level > l) m_level = l;
    }
    ITraceSink* sink() const { return m_sink; }
    TraceLevel level() const { return m_level; }

private:
    ITraceSink* m_sink = nullptr;
    TraceLevel m_level = TraceLevel::Off;
};

}  // namespace sfumato
