// `sfumato trace summarize TRACE.json[.gz]`: per-track busy time of a Chrome trace (sfumato's
// trace.json or any other, e.g. a PyTorch profiler trace): for each (process, thread) track the
// number of complete events, the time covered by at least one of them (overlaps counted once),
// the span from the first to the last and the busy share of that span; counters and flows are
// counted apart. Reads the file one event at a time (traces/json_events.h) and keeps, per track,
// only a window of recent slices (kWindow): when it fills, the window is sorted and merged, and
// every busy interval but the latest is summed and dropped. Memory is bounded by tracks x window
// whatever the trace's length. Exact when a slice never starts before the end of intervals
// already dropped, i.e. when slices arrive in time order per track up to the window (sfumato
// writes them so); a slice that arrives later than that is clipped to the dropped part's end
// (the part before is not counted) and the note says how many were.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <vector>

#include "cli/command.h"
#include "sim/error.h"
#include "traces/json_events.h"

namespace sfumato::cli {

namespace {

std::string key_of(const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// Busy time of one track, streaming (see the file comment).
class BusyTrack {
public:
    static constexpr size_t kWindow = 4096;
    void add(double b, double e) {
        ++m_slices;
        if (m_slices == 1 || b < m_first) m_first = b;
        if (m_slices == 1 || e > m_last) m_last = e;
        if (b < m_closed) {
            ++m_late;
            b = m_closed;
            if (e <= b) return;
        }
        m_win.emplace_back(b, e);
        if (m_win.size() >= kWindow) compact(false);
    }
    // Sums what is left; returns the busy time.
    double finish() {
        compact(true);
        return m_busy;
    }
    size_t slices() const { return m_slices; }
    size_t late() const { return m_late; }
    double first() const { return m_first; }
    double last() const { return m_last; }

private:
    void compact(bool all) {
        std::sort(m_win.begin(), m_win.end());
        std::vector<std::pair<double, double>> merged;
        for (const auto& s : m_win) {
            if (!merged.empty() && s.first <= merged.back().second) merged.back().second = std::max(merged.back().second, s.second);
            else merged.push_back(s);
        }
        // Keep the latest half window open (later slices may extend or fill them); sum and drop
        // the rest.
        const size_t keep = all ? 0 : std::min(merged.size(), kWindow / 2);
        for (size_t i = 0; i + keep < merged.size(); ++i) {
            m_busy += merged[i].second - merged[i].first;
            m_closed = std::max(m_closed, merged[i].second);
        }
        m_win.assign(merged.end() - static_cast<std::ptrdiff_t>(keep), merged.end());
    }
    std::vector<std::pair<double, double>> m_win;
    double m_busy = 0, m_closed = -1e300, m_first = 0, m_last = 0;
    size_t m_slices = 0, m_late = 0;
};

int summarize(const std::string& path) {
    std::map<std::pair<std::string, std::string>, BusyTrack> tracks;
    std::map<std::string, std::string> process_names;
    std::map<std::pair<std::string, std::string>, std::string> thread_names;
    size_t events = 0, counters = 0, flows = 0, other = 0;
    TraceEventReader r(path);
    nlohmann::json e;
    while (r.next(e)) {
        ++events;
        const std::string ph = e.value("ph", "");
        const std::string pid = e.contains("pid") ? key_of(e["pid"]) : "", tid = e.contains("tid") ? key_of(e["tid"]) : "";
        if (ph == "X") {
            const double ts = e.value("ts", 0.0), dur = e.value("dur", 0.0);
            BusyTrack& t = tracks[{pid, tid}];
            if (dur > 0) t.add(ts, ts + dur);
        } else if (ph == "M" && e.contains("args") && e["args"].contains("name") && e["args"]["name"].is_string()) {
            const std::string name = e["args"]["name"].get<std::string>();
            if (e.value("name", "") == "process_name") process_names[pid] = name;
            else if (e.value("name", "") == "thread_name") thread_names[{pid, tid}] = name;
        } else if (ph == "C") {
            ++counters;
        } else if (ph == "s" || ph == "f" || ph == "t") {
            ++flows;
        } else {
            ++other;
        }
    }
    if (!r.found_array()) throw InputError(path + ": not a Chrome trace (no \"traceEvents\" array)");
    struct Row {
        std::string process, thread;
        size_t n;
        double busy, span, first;
    };
    std::vector<Row> rows;
    double t0 = 0, t1 = 0;
    bool any = false;
    size_t late = 0;
    for (auto& [k, t] : tracks) {
        const double busy = t.finish();
        late += t.late();
        const double first = t.first(), last = t.last();
        if (t.slices()) {
            if (!any || first < t0) t0 = first;
            if (!any || last > t1) t1 = last;
            any = true;
        }
        const std::string proc = process_names.count(k.first) ? process_names[k.first] : "pid " + k.first;
        const std::string thr = thread_names.count(k) ? thread_names[k] : "tid " + k.second;
        rows.push_back({proc, thr, t.slices(), busy, t.slices() ? last - first : 0, first});
    }
    std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
        return a.process != b.process ? a.process < b.process : a.busy > b.busy;
    });
    std::printf("trace %s: %zu events (%zu counter samples, %zu flow events, %zu other), %zu tracks, %.3f us from first to last slice\n",
                path.c_str(), events, counters, flows, other, rows.size(), t1 - t0);
    if (late)
        std::printf("  note: %zu slices started before intervals already summed (more than %zu slices out of time order on their "
                    "track); the part of them before those intervals' end is not counted, so busy time may be understated\n",
                    late, BusyTrack::kWindow);
    if (r.truncated()) std::printf("  note: the file is truncated or malformed after event %zu; the events before were read\n", events);
    std::printf("  %-28s %-40s %10s %14s %14s %7s\n", "process", "track", "slices", "busy us", "span us", "busy %");
    for (const Row& x : rows) {
        std::printf("  %-28s %-40s %10zu %14.3f %14.3f %6.1f%%\n", x.process.substr(0, 28).c_str(), x.thread.substr(0, 40).c_str(), x.n,
                    x.busy, x.span, x.span > 0 ? 100.0 * x.busy / x.span : 0.0);
    }
    return kExitOk;
}

int cmd_trace(const std::vector<std::string>& args) {
    const char* usage = "usage: sfumato trace summarize TRACE.json[.gz]\n";
    if (args.empty() || args[0] == "--help" || args[0] == "-h") {
        std::cout << usage;
        return args.empty() ? kExitBadInput : kExitOk;
    }
    if (args[0] != "summarize") throw InputError("trace: unknown subcommand '" + args[0] + "'\n" + usage);
    if (args.size() != 2) throw InputError(std::string("trace summarize: give one trace file\n") + usage);
    return summarize(args[1]);
}

}  // namespace

SFUMATO_COMMAND("trace", "summarize a trace: per-track busy time", cmd_trace);

}  // namespace sfumato::cli
