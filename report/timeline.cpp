#include "report/timeline.h"

#include <algorithm>
#include <map>
#include <set>

namespace sfumato::report {

namespace {

using json = nlohmann::json;

// Piecewise-constant samples (ts, value) of one counter, integrated into bins of [0, end).
void integrate(const std::vector<std::pair<double, double>>& samples, double end, std::vector<double>& acc) {
    const size_t bins = acc.size();
    const double w = end / static_cast<double>(bins);
    for (size_t i = 0; i < samples.size(); ++i) {
        const double a = samples[i].first;
        const double b = i + 1 < samples.size() ? samples[i + 1].first : end;
        const double v = samples[i].second;
        if (b <= a) continue;
        size_t k = static_cast<size_t>(std::max(0.0, a / w));
        for (; k < bins; ++k) {
            const double lo = std::max(a, k * w), hi = std::min(b, (k + 1) * w);
            if (hi <= lo) {
                if (k * w >= b) break;
                continue;
            }
            acc[k] += v * (hi - lo) / w;
        }
    }
}

}  // namespace

std::vector<TimelineSeries> memory_timeline(const json& trace, size_t bins) {
    std::vector<TimelineSeries> out;
    const json* events = &trace;
    if (trace.is_object()) {
        if (!trace.contains("traceEvents")) return out;
        events = &trace["traceEvents"];
    }
    if (!events->is_array() || bins == 0) return out;
    // Counters per process (a chip's "memory", or "chipN memory" in a system of chips) and name:
    // each chip's channels and L2 apart, so one chip's samples never interleave with another's.
    using Samples = std::vector<std::pair<double, double>>;
    std::map<int64_t, std::map<std::string, Samples>> hbm, l2;
    std::map<int64_t, std::string> process_names;
    std::map<std::pair<int64_t, int64_t>, std::string> thread_names;
    double end = 0;
    for (const json& e : *events) {
        if (!e.is_object()) continue;
        const std::string ph = e.value("ph", "");
        const double ts = e.contains("ts") && e["ts"].is_number() ? e["ts"].get<double>() : 0.0;
        const double dur = e.contains("dur") && e["dur"].is_number() ? e["dur"].get<double>() : 0.0;
        end = std::max(end, ts + dur);
        const int64_t pid = e.contains("pid") && e["pid"].is_number_integer() ? e["pid"].get<int64_t>() : 0;
        if (ph == "C") {
            const std::string name = e.value("name", "");
            double v = 0;
            if (e.contains("args") && e["args"].is_object() && e["args"].contains("value") && e["args"]["value"].is_number())
                v = e["args"]["value"].get<double>();
            if (name.rfind("hbm ", 0) == 0 && name.find("GB/s") != std::string::npos) hbm[pid][name].emplace_back(ts, v);
            else if (name == "l2 hit rate") l2[pid][name].emplace_back(ts, v);
        } else if (ph == "M" && e.contains("args") && e["args"].is_object()) {
            const std::string meta = e.value("name", "");
            if (meta == "thread_name")
                thread_names[{pid, e.value("tid", int64_t{0})}] = e["args"].value("name", "");
            else if (meta == "process_name")
                process_names[pid] = e["args"].value("name", "");
        }
    }
    if (end <= 0) return out;
    std::vector<double> t(bins);
    for (size_t k = 0; k < bins; ++k) t[k] = (k + 0.5) * end / static_cast<double>(bins);
    if (!hbm.empty()) {
        // Several chips: a plot per chip, titled by its process ("chip1 memory" -> "chip1").
        const bool several = hbm.size() > 1;
        auto title = [&](int64_t pid, const std::string& what) {
            if (!several) return what;
            std::string p = process_names.count(pid) ? process_names[pid] : "process " + std::to_string(pid);
            const std::string suffix = " memory";
            if (p.size() > suffix.size() && p.compare(p.size() - suffix.size(), suffix.size(), suffix) == 0)
                p.resize(p.size() - suffix.size());
            return p + ": " + what;
        };
        for (auto& [pid, channels] : hbm) {
            TimelineSeries s{title(pid, "HBM bandwidth (all channels)"), "GB/s", "", t, std::vector<double>(bins, 0.0)};
            for (auto& [name, samples] : channels) {
                std::stable_sort(samples.begin(), samples.end(), [](auto& a, auto& b) { return a.first < b.first; });
                integrate(samples, end, s.value);
            }
            out.push_back(std::move(s));
            if (!l2.count(pid)) continue;
            TimelineSeries h{title(pid, "L2 hit rate"), "hit rate", "", t, std::vector<double>(bins, 0.0)};
            auto& samples = l2[pid].begin()->second;
            std::stable_sort(samples.begin(), samples.end(), [](auto& a, auto& b) { return a.first < b.first; });
            integrate(samples, end, h.value);
            out.push_back(std::move(h));
        }
        return out;
    }
    // No counters: GM-moving pipes busy, from their slices.
    std::set<std::pair<int64_t, int64_t>> gm_tracks;
    for (const auto& [key, name] : thread_names)
        if (name == "MTE2" || name == "MTE3" || name == "FIX") gm_tracks.insert(key);
    if (gm_tracks.empty()) return out;
    std::vector<double> busy(bins, 0.0);
    const double w = end / static_cast<double>(bins);
    for (const json& e : *events) {
        if (!e.is_object() || e.value("ph", "") != "X") continue;
        if (!gm_tracks.count({e.value("pid", int64_t{0}), e.value("tid", int64_t{0})})) continue;
        const double a = e.value("ts", 0.0), b = a + e.value("dur", 0.0);
        for (size_t k = static_cast<size_t>(std::max(0.0, a / w)); k < bins && k * w < b; ++k) {
            const double lo = std::max(a, k * w), hi = std::min(b, (k + 1) * w);
            if (hi > lo) busy[k] += (hi - lo) / w;
        }
    }
    for (double& b : busy) b /= static_cast<double>(gm_tracks.size());
    out.push_back({"GM pipes busy (MTE2, MTE3, FIX)", "share of GM pipes busy",
                   "This trace has no memory counters: the timeline shows the share of the pipes that move data to and from GM "
                   "(MTE2, MTE3, FIX) busy over time. Run with --trace mem for HBM bandwidth and the L2 hit rate.",
                   t, busy});
    return out;
}

}  // namespace sfumato::report
