// The serving part of a run's report (`sfumato serve --out DIR`): the latency figures of
// summary.json's `serve` section, the distributions (CDFs) of TTFT, TPOT and E2E over the served
// requests of requests.csv, and the scheduler's time series from steps.csv: waiting requests,
// batch size and KV cache use, one curve per instance.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "report/report_common.h"
#include "report/svg_plot.h"
#include "sim/error.h"

namespace sfumato::report {

using json = nlohmann::json;

namespace {

// More points than this in a CDF or a time series are thinned (quantiles, time bins).
constexpr size_t kMaxPoints = 2000;

// One CSV record's fields ("" quoting as the serve outputs write it).
std::vector<std::string> csv_fields(const std::string& line) {
    std::vector<std::string> f(1);
    bool q = false;
    for (size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (q && c == '"' && i + 1 < line.size() && line[i + 1] == '"')
            f.back() += '"', ++i;
        else if (c == '"')
            q = !q;
        else if (c == ',' && !q)
            f.emplace_back();
        else
            f.back() += c;
    }
    return f;
}

// A CSV file as named numeric columns (a non-numeric cell reads as NaN); InputError naming the
// file and line for a row of the wrong width or a missing column.
struct CsvTable {
    std::map<std::string, std::vector<double>> col;
    std::vector<std::vector<std::string>> text;  // the raw rows
    std::vector<std::string> header;
    size_t rows = 0;
    const std::vector<double>& at(const std::string& path, const std::string& name) const {
        auto it = col.find(name);
        if (it == col.end()) throw InputError("'" + path + "' has no column '" + name + "'");
        return it->second;
    }
};

CsvTable read_csv(const std::string& path) {
    std::ifstream f(path);
    if (!f) throw InputError("cannot read '" + path + "'");
    CsvTable t;
    std::string line;
    if (!std::getline(f, line)) throw InputError("'" + path + "' is empty");
    t.header = csv_fields(line);
    for (size_t n = 2; std::getline(f, line); ++n) {
        if (line.empty()) continue;
        std::vector<std::string> r = csv_fields(line);
        if (r.size() != t.header.size())
            throw InputError("'" + path + "' line " + std::to_string(n) + ": " + std::to_string(r.size()) +
                             " fields, the header has " + std::to_string(t.header.size()));
        for (size_t k = 0; k < r.size(); ++k) {
            char* end = nullptr;
            const double v = std::strtod(r[k].c_str(), &end);
            t.col[t.header[k]].push_back(!r[k].empty() && end && *end == '\0' ? v : NAN);
        }
        t.text.push_back(std::move(r));
        ++t.rows;
    }
    return t;
}

// The empirical CDF of `v` (finite values): every point up to kMaxPoints, else kMaxPoints
// nearest-rank quantiles (the largest value always the last point).
Series cdf_series(std::vector<double> v, const std::string& label, const std::string& unit) {
    v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return !std::isfinite(x); }), v.end());
    std::sort(v.begin(), v.end());
    Series s;
    s.label = label;
    const size_t n = v.size(), pts = std::min(n, kMaxPoints);
    for (size_t j = 1; j <= pts; ++j) {
        const size_t k =
            n <= kMaxPoints ? j : static_cast<size_t>(std::ceil(static_cast<double>(j) * n / pts));
        const double x = v[std::clamp<size_t>(k, 1, n) - 1],
                     y = static_cast<double>(k) / static_cast<double>(n);
        s.x.push_back(x);
        s.y.push_back(y);
        s.tips.push_back(fixed(x, 3) + " " + unit + ": " + fixed(100 * y, 1) +
                         " % of the requests at or below");
    }
    return s;
}

// A time series of one step quantity per instance: a point at each step's start, or (more steps
// than kMaxPoints) the step-time weighted mean over each of `bins` time bins with steps in them.
struct StepSeries {
    std::vector<Series> per_instance;
    bool binned = false;
};

StepSeries step_series(const CsvTable& t, const std::string& path, const std::vector<double>& value,
                       double end_s, size_t bins) {
    const std::vector<double>& inst = t.at(path, "instance");
    const std::vector<double>& begin = t.at(path, "begin_s");
    const std::vector<double>& secs = t.at(path, "seconds");
    std::map<int64_t, std::vector<size_t>> rows;
    for (size_t r = 0; r < t.rows; ++r) rows[static_cast<int64_t>(inst[r])].push_back(r);
    StepSeries out;
    for (const auto& [i, rs] : rows) {
        Series s;
        s.label = rows.size() > 1 ? "instance " + std::to_string(i) : "";
        if (rs.size() <= kMaxPoints) {
            for (size_t r : rs) {
                s.x.push_back(begin[r] * 1e3);
                s.y.push_back(value[r]);
                s.tips.push_back("step at " + fixed(begin[r] * 1e3, 3) + " ms: " + format_number(value[r]));
            }
        } else {
            out.binned = true;
            const double w = std::max(end_s, 1e-12) / static_cast<double>(bins);
            std::vector<double> sum(bins, 0), dur(bins, 0);
            for (size_t r : rs) {
                // Split the step's time over the bins it covers.
                double a = begin[r];
                const double b = begin[r] + secs[r];
                while (a < b) {
                    const size_t k = std::min(bins - 1, static_cast<size_t>(a / w));
                    const double e = std::min(b, static_cast<double>(k + 1) * w);
                    const double d = std::max(e - a, 0.0);
                    sum[k] += value[r] * d, dur[k] += d;
                    if (k == bins - 1 || e <= a) break;
                    a = e;
                }
            }
            for (size_t k = 0; k < bins; ++k) {
                if (!(dur[k] > 0)) continue;
                s.x.push_back((static_cast<double>(k) + 0.5) * w * 1e3);
                s.y.push_back(sum[k] / dur[k]);
                s.tips.push_back(fixed(static_cast<double>(k) * w * 1e3, 3) + "-" +
                                 fixed(static_cast<double>(k + 1) * w * 1e3, 3) +
                                 " ms: " + format_number(s.y.back()) + " (step-time weighted mean)");
            }
        }
        out.per_instance.push_back(std::move(s));
    }
    return out;
}

void add_latency_table(HtmlPage& page, const json& m) {
    std::vector<std::vector<std::string>> rows;
    for (const auto& [key, label] : std::vector<std::pair<std::string, std::string>>{
             {"ttft_ms", "TTFT"}, {"tpot_ms", "TPOT"}, {"itl_ms", "inter-token"}, {"e2e_ms", "end-to-end"}}) {
        if (!m.contains(key)) continue;
        const json& p = m[key];
        rows.push_back({label, fixed(p.value("mean", NAN), 3), fixed(p.value("p50", NAN), 3),
                        fixed(p.value("p90", NAN), 3), fixed(p.value("p99", NAN), 3),
                        fixed(p.value("max", NAN), 3)});
    }
    page.table({"latency (ms)", "mean", "p50", "p90", "p99", "max"}, rows);
}

void add_cdfs(HtmlPage& page, const std::string& dir) {
    const std::string path = dir + "/requests.csv";
    if (!file_exists(path)) {
        page.paragraph("No requests.csv in this directory: no latency distributions.");
        return;
    }
    const CsvTable t = read_csv(path);
    const std::vector<double>& ttft = t.at(path, "ttft_ms");
    const std::vector<double>& tpot = t.at(path, "tpot_ms");
    const std::vector<double>& e2e = t.at(path, "e2e_ms");
    const std::vector<double>& out = t.at(path, "output_tokens");
    const auto rej = std::find(t.header.begin(), t.header.end(), "rejected") - t.header.begin();
    std::vector<double> a, b, c;
    for (size_t r = 0; r < t.rows; ++r) {
        if (static_cast<size_t>(rej) < t.header.size() && !t.text[r][static_cast<size_t>(rej)].empty())
            continue;
        a.push_back(ttft[r]);
        c.push_back(e2e[r]);
        if (out[r] > 1) b.push_back(tpot[r]);  // TPOT needs two tokens
    }
    page.paragraph("Distributions over the " + std::to_string(a.size()) +
                   " served requests of requests.csv (" + std::to_string(t.rows - a.size()) +
                   " rejected); TPOT over the " + std::to_string(b.size()) +
                   " with more than one output token." +
                   (a.size() > kMaxPoints ? " Drawn at " + std::to_string(kMaxPoints) + " quantiles." : ""));
    struct One {
        const char* id;
        const char* title;
        std::vector<double>* v;
    };
    for (const One& o : {One{"serve-cdf-ttft", "TTFT", &a}, One{"serve-cdf-tpot", "TPOT", &b},
                         One{"serve-cdf-e2e", "E2E", &c}}) {
        if (o.v->empty()) continue;
        Axis ya{"fraction of requests"};
        ya.include_lo = 0, ya.include_hi = 1;
        Axis xa{std::string(o.title) + " (ms)"};
        xa.include_lo = 0;
        Plot p(o.id, std::string(o.title) + " CDF", xa, ya);
        p.add(cdf_series(*o.v, "", "ms"));
        page.plot(p.svg());
    }
}

void add_time_series(HtmlPage& page, const std::string& dir, double end_s, const ReportOptions& o) {
    const std::string path = dir + "/steps.csv";
    if (!file_exists(path)) {
        page.paragraph("No steps.csv in this directory (written by sfumato serve --out): no time series.");
        return;
    }
    const CsvTable t = read_csv(path);
    if (t.rows == 0) {
        page.paragraph("steps.csv has no step.");
        return;
    }
    std::vector<double> kv(t.rows);
    const std::vector<double>& used = t.at(path, "kv_used_blocks");
    const std::vector<double>& pool = t.at(path, "kv_pool_blocks");
    for (size_t r = 0; r < t.rows; ++r) kv[r] = pool[r] > 0 ? 100 * used[r] / pool[r] : NAN;
    struct One {
        const char* id;
        const char* title;
        const char* y;
        const std::vector<double>* v;
        double hi;
    };
    bool binned = false;
    for (const One& x :
         {One{"serve-waiting", "Queue length", "waiting requests", &t.at(path, "waiting"), NAN},
          One{"serve-batch", "Batch size", "sequences per step", &t.at(path, "sequences"), NAN},
          One{"serve-kv", "KV cache use", "blocks in use (% of the pool)", &kv, 100}}) {
        const StepSeries s = step_series(t, path, *x.v, end_s, o.timeline_bins);
        binned = binned || s.binned;
        Axis ya{x.y};
        ya.include_lo = 0, ya.include_hi = x.hi;
        Plot p(x.id, x.title, Axis{"time (ms)"}, ya);
        for (const Series& q : s.per_instance) p.add(q);
        page.plot(p.svg());
    }
    page.paragraph(
        "Per scheduler step (steps.csv): the requests waiting after the step's admissions, the sequences in "
        "the step, and the KV blocks in use, at the step's start." +
        std::string(binned ? " An instance with more than " + std::to_string(kMaxPoints) +
                                 " steps is drawn as the step-time weighted mean over " +
                                 std::to_string(o.timeline_bins) + " time bins (idle time left out)."
                           : ""));
}

}  // namespace

void add_serve_section(HtmlPage& page, const std::string& dir, const json& sv, const ReportOptions& o) {
    page.heading("Serving");
    const json m = sv.value("metrics", json::object());
    const json setup = sv.value("setup", json::object());
    std::vector<std::pair<std::string, std::string>> info = {
        {"model", sv.contains("model") ? sv["model"].value("name", std::string("-")) : "-"},
        {"requests", sv.contains("trace") ? cell(sv["trace"].value("requests", json())) + " (" +
                                                sv["trace"].value("source", std::string("-")) + ")"
                                          : "-"},
        {"policy", setup.value("policy", std::string("-"))},
        {"served / rejected", cell(m.value("served", json())) + " / " + cell(m.value("rejected", json()))},
        {"simulated time", fixed(m.value("duration_s", NAN) * 1e3, 3) + " ms in " +
                               cell(m.value("steps", json())) + " steps, mean batch " +
                               fixed(m.value("mean_batch", NAN), 2)},
        {"throughput", fixed(m.value("requests_per_s", NAN), 3) + " requests/s, " +
                           fixed(m.value("output_tokens_per_s", NAN), 1) + " output tokens/s"},
        {"goodput", fixed(m.value("goodput_per_s", NAN), 3) +
                        " requests/s (TTFT <= " + cell(m.value("slo_ttft_ms", json())) +
                        " ms, TPOT <= " + cell(m.value("slo_tpot_ms", json())) + " ms; 0: no bound)"},
        {"preemptions", cell(m.value("preemptions", json()))}};
    if (setup.contains("instances"))
        info.emplace_back("instances",
                          cell(setup["instances"]) + ", router " + cell(setup.value("router", json())));
    page.definition_list(info);
    add_latency_table(page, m);
    add_cdfs(page, dir);
    add_time_series(page, dir, m.value("duration_s", 0.0), o);
}

}  // namespace sfumato::report
