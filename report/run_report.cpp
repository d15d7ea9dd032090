// The report of one run (sfumato kernel/replay/asm/run) and of a membench run.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include "report/report_common.h"
#include "report/svg_plot.h"
#include "report/timeline.h"
#include "sim/error.h"
#include "traces/hdf5_stats.h"

namespace sfumato::report {

namespace fs = std::filesystem;
using json = nlohmann::json;

json read_json_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw InputError("cannot read '" + path + "'");
    try {
        return json::parse(f);
    } catch (const json::exception& e) {
        throw InputError("'" + path + "' is not valid JSON: " + e.what());
    }
}

bool file_exists(const std::string& path) {
    std::error_code ec;
    return fs::is_regular_file(path, ec);
}

std::string fixed(double v, int digits) {
    if (!std::isfinite(v)) return "-";
    char b[64];
    std::snprintf(b, sizeof b, "%.*f", digits, v);
    return b;
}

std::string cell(const json& v) {
    if (v.is_number_integer() || v.is_number_unsigned()) return v.dump();
    if (v.is_number()) return format_number(v.get<double>());
    if (v.is_string()) return v.get<std::string>();
    if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
    return "-";
}

void add_memory_timeline(HtmlPage& page, const std::string& dir, const ReportOptions& o, const std::string& id_prefix) {
    page.heading("Memory timeline");
    const std::string path = dir + "/trace.json";
    if (!file_exists(path)) {
        page.paragraph("No trace.json in this directory (the run had --trace off, or no --out).");
        return;
    }
    std::error_code ec;
    const uint64_t size = fs::file_size(path, ec);
    if (size > o.max_trace_bytes) {
        page.paragraph("trace.json is " + format_number(static_cast<double>(size)) + " B, above the report's limit; " +
                       "rerun with --trace mem or --trace op for a smaller trace.");
        return;
    }
    const std::vector<TimelineSeries> tl = memory_timeline(read_json_file(path), o.timeline_bins);
    if (tl.empty()) {
        page.paragraph("trace.json has no memory counters and no GM pipe slices (rerun with --trace mem).");
        return;
    }
    for (size_t i = 0; i < tl.size(); ++i) {
        Axis ya{tl[i].y_label};
        ya.include_lo = 0;
        if (tl[i].y_label == "hit rate" || tl[i].y_label.rfind("share", 0) == 0) ya.include_hi = 1;
        Plot p(id_prefix + "timeline-" + std::to_string(i), tl[i].title, Axis{"time (us)"}, ya);
        Series s;
        s.x = tl[i].t_us;
        s.y = tl[i].value;
        p.add(s);
        page.plot(p.svg());
    }
    for (const auto& s : tl)
        if (!s.note.empty()) page.paragraph(s.note);
}

ReportKind detect_report_kind(const std::string& dir) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) throw InputError("'" + dir + "' is not a directory");
    if (file_exists(dir + "/sweep.h5")) return ReportKind::Sweep;
    if (file_exists(dir + "/summary.json")) {
        const json s = read_json_file(dir + "/summary.json");
        return s.is_object() && s.value("command", "") == "membench" ? ReportKind::Membench : ReportKind::Run;
    }
    throw InputError("'" + dir + "' holds neither sweep.h5 (a sweep) nor summary.json (a run)");
}

std::string render_report(const std::string& dir, const ReportOptions& o) {
    switch (detect_report_kind(dir)) {
        case ReportKind::Sweep: return sweep_report(dir, o);
        case ReportKind::Membench: return membench_report(dir, o);
        case ReportKind::Run: return run_report(dir, o);
    }
    return "";
}

namespace {

std::string pipe_label(const std::string& p) {
    if (p == "m") return "cube";
    if (p == "v") return "vector";
    if (p == "fix") return "fixpipe";
    return p;
}

// Busy cycles per core kind and pipe from stats.h5 (chip/<core>/<pipe>/busy_cycles and
// chip/<core>/scalar_busy_cycles), and the number of cores of each kind.
struct PipeBusy {
    std::map<std::string, std::map<std::string, double>> busy;  // kind -> pipe -> cycles
    std::map<std::string, std::set<std::string>> cores;
};

PipeBusy pipe_busy(const std::vector<StatRecord>& stats) {
    PipeBusy b;
    static const std::regex pipe_re(R"(^chip/(([a-z]+)\d+)/([a-z0-9]+)/busy_cycles$)");
    static const std::regex scalar_re(R"(^chip/(([a-z]+)\d+)/scalar_busy_cycles$)");
    for (const auto& r : stats) {
        if (r.values.size() != 1) continue;
        std::smatch m;
        if (std::regex_match(r.path, m, pipe_re)) {
            b.busy[m[2]][pipe_label(m[3])] += r.values[0];
            b.cores[m[2]].insert(m[1]);
        } else if (std::regex_match(r.path, m, scalar_re)) {
            b.busy[m[2]]["scalar"] += r.values[0];
            b.cores[m[2]].insert(m[1]);
        }
    }
    return b;
}

std::string kind_label(const std::string& k) {
    if (k == "aic") return "AIC (cube cores)";
    if (k == "aiv") return "AIV (vector cores)";
    return k + " cores";
}

// The chip's power over the run (summary.json energy.power_over_time, models/power), with its
// static power and the part's published maximum as reference lines.
void add_power_timeline(HtmlPage& page, const json& s) {
    if (!s.contains("energy") || !s["energy"].is_object() || !s["energy"].contains("power_over_time")) return;
    const json& e = s["energy"];
    const json& pt = e["power_over_time"];
    const double bin = pt.value("bin_us", 0.0);
    page.heading("Power over time");
    page.paragraph("Energy " + format_number(e.value("total_j", 0.0)) + " J (dynamic " + format_number(e.value("dynamic_j", 0.0)) +
                   " J), average " + format_number(e.value("average_power_w", 0.0)) + " W, peak " +
                   format_number(e.value("peak_power_w", 0.0)) + " W over " + format_number(e.value("peak_window_us", 0.0)) +
                   " us; static power and the part's published maximum dashed (docs/energy.md).");
    Series sr;
    sr.label = "chip power";
    for (size_t i = 0; i < pt["watts"].size(); ++i) {
        sr.x.push_back((static_cast<double>(i) + 0.5) * bin);
        sr.y.push_back(pt["watts"][i].get<double>());
    }
    if (sr.x.empty()) return;
    Axis ya{"W"};
    ya.include_lo = 0;
    Plot p("power-timeline", "Chip power (W)", Axis{"time (us)"}, ya);
    const double t1 = sr.x.back() + bin / 2;
    p.add(RefLine{0, e.value("static_power_w", 0.0), t1, e.value("static_power_w", 0.0), "static", true});
    p.add(RefLine{0, e.value("envelope_w", 0.0), t1, e.value("envelope_w", 0.0), "published maximum", true});
    p.add(sr);
    page.plot(p.svg());
}

void add_roofline(HtmlPage& page, const json& summary, const json& ops) {
    page.heading("Roofline");
    Plot plot("roofline", "Roofline: achieved vs. bound", Axis{"arithmetic intensity (FLOP/B)", true}, Axis{"GFLOP/s", true});
    Series achieved, bound;
    achieved.label = "op (achieved)";
    achieved.line = false;
    bound.label = "op's own bound";
    bound.line = false;
    bound.hollow = true;
    std::vector<std::string> unplaced;
    double ai_min = INFINITY, ai_max = 0, perf_max = 0, ghz = 0;
    for (const auto& op : ops) {
        const double flops = op.value("flops", 0.0), bytes = op.value("bytes", 0.0);
        const double t_us = op.value("time_us", 0.0), cycles = op.value("cycles", 0.0);
        const std::string name = op.value("name", std::string("op"));
        if (!(flops > 0 && bytes > 0 && t_us > 0)) {
            unplaced.push_back(name);
            continue;
        }
        const double ai = flops / bytes, perf = flops / (t_us * 1e3);
        ai_min = std::min(ai_min, ai);
        ai_max = std::max(ai_max, ai);
        perf_max = std::max(perf_max, perf);
        achieved.x.push_back(ai);
        achieved.y.push_back(perf);
        achieved.tips.push_back(name + ": " + format_number(ai) + " FLOP/B, " + format_number(perf) + " GFLOP/s, " +
                                fixed(op.value("roofline_fraction", 0.0), 3) + " of its bound");
        if (cycles > 0) ghz = cycles / (t_us * 1e3);
        const double rc = op.value("roofline_cycles", 0.0);
        if (rc > 0 && cycles > 0) {
            bound.x.push_back(ai);
            bound.y.push_back(flops / (rc * t_us * 1e3 / cycles));
            bound.tips.push_back(name + " bound: " + format_number(bound.y.back()) + " GFLOP/s (" + op.value("bound", std::string()) +
                                 ")");
            perf_max = std::max(perf_max, bound.y.back());
        }
    }
    if (achieved.x.empty()) {
        page.paragraph("No op has both FLOPs and bytes, so none can be placed on a roofline.");
        return;
    }
    double lo = ai_min / 10, hi = ai_max * 10;
    if (summary.contains("device") && summary["device"].is_object()) {
        const json& d = summary["device"];
        const double clk = d.value("clock_ghz", ghz);
        const double peak = d.value("cube_fp16_flops_per_cycle", 0.0) * clk;
        struct Roof {
            const char* key;
            const char* label;
            bool dashed;
        };
        for (const Roof r : {Roof{"gm_bytes_per_cycle", "HBM roof", false}, Roof{"mem_max_bytes_per_cycle", "fastest path (L2) roof", true}}) {
            const double bw = d.value(r.key, 0.0) * clk;  // GB/s
            if (!(bw > 0)) continue;
            if (peak > 0) {
                const double knee = peak / bw;
                lo = std::min(lo, knee / 10);
                hi = std::max(hi, knee * 10);
                plot.add(RefLine{lo, lo * bw, knee, peak, std::string(r.label) + " (" + format_number(bw) + " GB/s)", r.dashed});
            } else {
                plot.add(RefLine{lo, lo * bw, hi, hi * bw, std::string(r.label) + " (" + format_number(bw) + " GB/s)", r.dashed});
            }
        }
        if (peak > 0) plot.add(RefLine{lo, peak, hi, peak, "cube fp16 peak (" + format_number(peak) + " GFLOP/s)", false});
    }
    plot.add(achieved);
    plot.add(bound);
    page.plot(plot.svg());
    if (!unplaced.empty()) {
        std::string s;
        for (const auto& u : unplaced) s += (s.empty() ? "" : ", ") + u;
        page.paragraph("Not on the roofline (no FLOPs or no bytes): " + s + ".");
    }
}

void add_pipe_utilisation(HtmlPage& page, const std::string& dir, const json& ops) {
    page.heading("Pipe utilisation per core kind");
    double op_cycles = 0;
    for (const auto& op : ops) op_cycles += op.value("cycles", 0.0);
    std::vector<BarGroup> groups;
    if (file_exists(dir + "/stats.h5") && op_cycles > 0) {
        const PipeBusy b = pipe_busy(read_stats_h5(dir + "/stats.h5"));
        for (const auto& [kind, pipes] : b.busy) {
            BarGroup g{kind_label(kind), {}};
            const double n = static_cast<double>(b.cores.at(kind).size());
            for (const char* p : {"scalar", "mte1", "mte2", "cube", "fixpipe", "vector", "mte3"})
                if (auto it = pipes.find(p); it != pipes.end()) g.bars.emplace_back(p, it->second / (n * op_cycles));
            groups.push_back(std::move(g));
        }
        page.paragraph("Busy cycles of each pipe summed over the cores of a kind (stats.h5), divided by the cores of that kind "
                       "times the kernels' cycles (" + format_number(op_cycles) + ").");
    }
    if (groups.empty()) {
        for (const auto& op : ops) {
            if (!op.contains("pipe_util")) continue;
            BarGroup g{op.value("name", std::string("op")), {}};
            for (const auto& [p, u] : op["pipe_util"].items()) g.bars.emplace_back(p, u.get<double>());
            groups.push_back(std::move(g));
        }
        if (!groups.empty()) page.paragraph("Per op (summary.json pipe_util): no stats.h5 in this directory.");
    }
    if (groups.empty()) {
        page.paragraph("No pipe statistics in this run.");
        return;
    }
    page.plot(bar_chart("pipe-util", "Pipe utilisation", "busy / available", groups, 1.0, 640));
}

}  // namespace

std::string run_report(const std::string& dir, const ReportOptions& o) {
    const json s = read_json_file(dir + "/summary.json");
    if (!s.is_object()) throw InputError("'" + dir + "/summary.json' is not a run summary");
    const json ops = s.contains("ops") && s["ops"].is_array() ? s["ops"] : json::array();
    HtmlPage page("sfumato run: " + fs::path(dir).lexically_normal().filename().string());
    std::vector<std::pair<std::string, std::string>> info = {
        {"directory", dir},
        {"chip", s.value("chip", std::string("-"))},
        {"config", s.contains("config") ? cell(s["config"]) : "-"},
        {"mode", s.value("mode", std::string("-"))},
        {"config hash", s.value("config_hash", std::string("-"))},
        {"total cycles", s.contains("total_cycles") ? cell(s["total_cycles"]) : "-"},
        {"total time", s.contains("total_time_us") ? fixed(s["total_time_us"].get<double>(), 3) + " us" : "-"}};
    if (s.contains("check") && s["check"].is_object()) {
        const json& c = s["check"];
        info.emplace_back("check", !c.value("checked", false) ? "skipped (timing mode)"
                                                                : std::string(c.value("passed", false) ? "passed" : "FAILED") +
                                                                      " (max abs err " + cell(c.value("max_abs_err", json())) +
                                                                      ", max rel err " + cell(c.value("max_rel_err", json())) + ")");
    }
    page.definition_list(info);
    if (s.contains("serve") && s["serve"].is_object()) add_serve_section(page, dir, s["serve"], o);

    page.heading("Operators");
    std::vector<std::vector<std::string>> rows;
    for (const auto& op : ops) {
        const double t = op.value("time_us", 0.0);
        std::string top;
        if (op.contains("pipe_util") && op["pipe_util"].is_object()) {
            std::vector<std::pair<double, std::string>> u;
            for (const auto& [p, v] : op["pipe_util"].items()) u.emplace_back(v.get<double>(), p);
            std::sort(u.rbegin(), u.rend());
            for (size_t i = 0; i < u.size() && i < 3; ++i) top += (i ? ", " : "") + u[i].second + " " + fixed(u[i].first, 2);
        }
        rows.push_back({op.value("name", std::string("-")), op.value("type", std::string("-")), cell(op.value("block_dim", json())),
                        cell(op.value("cycles", json())), fixed(t, 3), format_number(op.value("flops", 0.0)),
                        format_number(op.value("bytes", 0.0)), t > 0 ? fixed(op.value("flops", 0.0) / (t * 1e6), 3) : "-",
                        t > 0 ? fixed(op.value("bytes", 0.0) / (t * 1e3), 1) : "-", op.value("bound", std::string("-")),
                        fixed(op.value("roofline_fraction", NAN), 3), top});
    }
    page.table({"op", "type", "blocks", "cycles", "time (us)", "FLOPs", "bytes", "TFLOPS", "GB/s", "bound", "roofline fraction",
                "busiest pipes"},
               rows);
    if (ops.empty() && s.contains("ops_by_type") && s["ops_by_type"].is_array()) {
        // A long run's summary sums its launches per operator type (sfumato --summary-ops).
        const json& om = s.value("ops_omitted", json::object());
        page.paragraph("The run had " + cell(om.value("tasks", json())) + " tasks, more than --summary-ops " +
                       cell(om.value("limit", json())) + ": its " + cell(om.value("launches", json())) +
                       " kernel launches are summed per operator type.");
        std::vector<std::vector<std::string>> by;
        for (const auto& t : s["ops_by_type"]) {
            const double us = t.value("time_us", 0.0);
            by.push_back({t.value("type", std::string("-")), cell(t.value("count", json())), cell(t.value("cycles", json())),
                          fixed(us, 3), format_number(t.value("flops", 0.0)), format_number(t.value("bytes", 0.0)),
                          us > 0 ? fixed(t.value("flops", 0.0) / (us * 1e6), 3) : "-",
                          us > 0 ? fixed(t.value("bytes", 0.0) / (us * 1e3), 1) : "-"});
        }
        page.table({"type", "launches", "cycles", "time (us)", "FLOPs", "bytes", "TFLOPS", "GB/s"}, by);
    }
    add_roofline(page, s, ops);
    add_pipe_utilisation(page, dir, ops);
    add_memory_timeline(page, dir, o, "");
    add_power_timeline(page, s);
    return page.render();
}

std::string membench_report(const std::string& dir, const ReportOptions& o) {
    const json s = read_json_file(dir + "/summary.json");
    HtmlPage page("sfumato membench: " + s.value("pattern", std::string("?")) + " " + s.value("op", std::string("?")) + " (" +
                  fs::path(dir).lexically_normal().filename().string() + ")");
    page.definition_list({{"directory", dir},
                          {"config", s.contains("config") ? (s["config"].is_array() && !s["config"].empty() ? s["config"].back().get<std::string>() : cell(s["config"])) : "-"},
                          {"mode", s.value("mode", std::string("-"))},
                          {"pattern / op", s.value("pattern", std::string("-")) + " / " + s.value("op", std::string("-"))},
                          {"cores", cell(s.value("cores", json()))},
                          {"bytes moved", format_number(s.value("bytes", 0.0)) + " B"},
                          {"request size", cell(s.value("request_bytes", json())) + " B"},
                          {"simulated time", fixed(s.value("sim_time_ns", 0.0) / 1000, 2) + " us"}});
    page.heading("Figures");
    const double peak = s.value("peak_gbps", 0.0), ach = s.value("achieved_gbps", 0.0);
    page.table({"figure", "value"},
               {{"achieved GB/s", fixed(ach, 1)},
                {"accepted GB/s (requesters)", fixed(s.value("accepted_gbps", 0.0), 1)},
                {"peak GB/s", fixed(peak, 1)},
                {"achieved / peak", peak > 0 ? fixed(ach / peak, 3) : "-"},
                {"row-buffer hit rate", fixed(s.value("row_hit_rate", NAN), 3)},
                {"L2 hit rate", fixed(s.value("l2_hit_rate", NAN), 3)},
                {"read latency mean (ns)", fixed(s.value("avg_latency_ns", NAN), 1)},
                {"read latency p99 (ns)", fixed(s.value("p99_latency_ns", NAN), 1)},
                {"bytes still dirty at the end", cell(s.value("bytes_unwritten", json()))}});
    page.plot(bar_chart("bandwidth", "Bandwidth", "GB/s",
                        {{"bandwidth", {{"achieved", ach}, {"accepted", s.value("accepted_gbps", 0.0)}, {"peak", peak}}}}, 0, 420));
    page.plot(bar_chart("hit-rates", "Hit rates", "rate",
                        {{"hit rates", {{"HBM row buffer", s.value("row_hit_rate", 0.0)}, {"L2", s.value("l2_hit_rate", 0.0)}}}}, 1.0,
                        420));
    // Read latency distribution from the stats histogram, merged into at most 60 bins.
    if (file_exists(dir + "/stats.h5")) {
        for (const auto& r : read_stats_h5(dir + "/stats.h5")) {
            if (r.path != "mem/read_latency" || r.values.size() < 2 || !(r.width > 0)) continue;
            size_t first = r.values.size(), last = 0;
            for (size_t i = 0; i < r.values.size(); ++i)
                if (r.values[i] > 0) {
                    first = std::min(first, i);
                    last = i;
                }
            if (first > last) break;
            const size_t span = last - first + 1, merge = (span + 59) / 60;
            Series h;
            h.label = "";
            for (size_t i = first; i <= last; i += merge) {
                double n = 0;
                for (size_t k = i; k < i + merge && k <= last; ++k) n += r.values[k];
                h.x.push_back(r.lo + (static_cast<double>(i) + merge / 2.0) * r.width);
                h.y.push_back(n);
            }
            Axis ya{"requests"};
            ya.include_lo = 0;
            Plot p("latency", "Read latency distribution", Axis{"latency (" + r.unit + ")"}, ya);
            p.add(h);
            page.plot(p.svg());
            break;
        }
    }
    add_memory_timeline(page, dir, o, "mem-");
    return page.render();
}

}  // namespace sfumato::report
