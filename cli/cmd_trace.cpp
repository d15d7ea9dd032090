// `sfumato trace summarize TRACE.json[.gz]`: per-track busy time of a Chrome trace (sfumato's
// trace.json or any other, e.g. a PyTorch profiler trace): for each (process, thread) track the
// number of complete events, the time covered by at least one of them (overlaps counted once),
// the span from the first to the last and the busy share of that span; counters and flows are
// counted apart. Reads the file one event at a time (traces/json_events.h), so a trace of
// millions of events needs memory only for its intervals.
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

int summarize(const std::string& path) {
    struct Track {
        std::vector<std::pair<double, double>> spans;  // [ts, ts + dur) in us
    };
    std::map<std::pair<std::string, std::string>, Track> tracks;
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
            if (dur > 0) tracks[{pid, tid}].spans.push_back({ts, ts + dur});
            else tracks[{pid, tid}];
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
    for (auto& [k, t] : tracks) {
        std::sort(t.spans.begin(), t.spans.end());
        double busy = 0, cur_b = 0, cur_e = -1;
        for (const auto& [b, en] : t.spans) {
            if (b > cur_e) {
                if (cur_e > cur_b) busy += cur_e - cur_b;
                cur_b = b;
                cur_e = en;
            } else {
                cur_e = std::max(cur_e, en);
            }
        }
        if (cur_e > cur_b) busy += cur_e - cur_b;
        double first = 0, last = 0;
        if (!t.spans.empty()) {
            first = t.spans.front().first;
            for (const auto& s : t.spans) last = std::max(last, s.second);
            if (!any || first < t0) t0 = first;
            if (!any || last > t1) t1 = last;
            any = true;
        }
        const std::string proc = process_names.count(k.first) ? process_names[k.first] : "pid " + k.first;
        const std::string thr = thread_names.count(k) ? thread_names[k] : "tid " + k.second;
        rows.push_back({proc, thr, t.spans.size(), busy, last - first, first});
    }
    std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
        return a.process != b.process ? a.process < b.process : a.busy > b.busy;
    });
    std::printf("trace %s: %zu events (%zu counter samples, %zu flow events, %zu other), %zu tracks, %.3f us from first to last slice\n",
                path.c_str(), events, counters, flows, other, rows.size(), t1 - t0);
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
