// `sfumato report`: one self-contained HTML page for a run directory (summary.json, stats.h5,
// trace.json as present), a membench run, or a sweep directory (sweep.h5). A run shows its
// per-op table, a roofline with every op placed on it (and its own bound), pipe utilisation per
// core kind and the memory timeline (a serving run first its latency CDFs and its queue, batch
// and KV time series, report/serve_report.cpp); membench its bandwidth, hit rates, latency distribution
// and timeline; a sweep one curve of each figure against each varied parameter (a curve per
// combination of the other parameters) and its table. Plain C++: reads files, writes text.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace sfumato::report {

struct ReportOptions {
    size_t timeline_bins = 120;
    // Sweep plots only for figures whose name contains one of these (empty: every figure that
    // varies across the points).
    std::vector<std::string> figures;
    // trace.json files larger than this are not read (their timeline is left out, with a note).
    uint64_t max_trace_bytes = 512ull << 20;
};

enum class ReportKind { Run, Membench, Sweep };

// What DIR holds; throws InputError when it is none of the three.
ReportKind detect_report_kind(const std::string& dir);
std::string render_report(const std::string& dir, const ReportOptions& o);

// The page for each kind (each throws InputError naming a missing or malformed file).
std::string run_report(const std::string& dir, const ReportOptions& o);
std::string membench_report(const std::string& dir, const ReportOptions& o);
std::string sweep_report(const std::string& dir, const ReportOptions& o);

// "128KiB" -> 131072, "2400" -> 2400, "1.5" -> 1.5; false when not a number.
bool parse_param_number(const std::string& s, double& v);

}  // namespace sfumato::report
