// The report of a sweep: one plot per (figure, varied dimension) with a curve per combination
// of the other dimensions' values, the failed points with their errors, and the whole table.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <numeric>
#include <set>
#include <sstream>

#include "report/report_common.h"
#include "report/svg_plot.h"
#include "sim/error.h"
#include "sweep/gather.h"
#include "traces/hdf5_table.h"

namespace sfumato::report {

namespace fs = std::filesystem;

bool parse_param_number(const std::string& s, double& v) {
    if (s.empty()) return false;
    size_t pos = 0;
    try {
        v = std::stod(s, &pos);
    } catch (const std::exception&) {
        return false;
    }
    const std::string suf = s.substr(pos);
    static const std::map<std::string, double> k = {{"", 1},           {"K", 1024},         {"KiB", 1024},
                                                    {"M", 1 << 20},    {"MiB", 1 << 20},    {"G", 1 << 30},
                                                    {"GiB", 1 << 30}, {"k", 1000},         {"KB", 1000},
                                                    {"MB", 1e6},       {"GB", 1e9}};
    auto it = k.find(suf);
    if (it == k.end()) return false;
    v *= it->second;
    return std::isfinite(v);
}

namespace {

std::vector<std::string> split_lines(const std::string& s, char sep) {
    std::vector<std::string> v;
    if (s.empty()) return v;
    std::stringstream ss(s);
    std::string x;
    while (std::getline(ss, x, sep)) v.push_back(x);
    return v;
}

std::string cell_text(const TableColumn& c, size_t r) {
    switch (c.kind) {
        case TableColumn::Kind::Int: return std::to_string(c.ints[r]);
        case TableColumn::Kind::Float: return std::isnan(c.floats[r]) ? "" : format_number(c.floats[r]);
        case TableColumn::Kind::Text: return c.texts[r];
    }
    return "";
}

// The last part of a key, for legends ("chip.l2.size_kib" -> "size_kib"; tooltips keep it whole).
std::string short_key(const std::string& k) {
    const size_t dot = k.rfind('.');
    return dot == std::string::npos ? k : k.substr(dot + 1);
}

double cell_value(const TableColumn& c, size_t r) {
    if (c.kind == TableColumn::Kind::Int) return static_cast<double>(c.ints[r]);
    if (c.kind == TableColumn::Kind::Float) return c.floats[r];
    return NAN;
}

// Energy against time, one mark per done point (summary.json energy.total_j vs total_time_us,
// models/power): the sweep's energy-delay trade-off.
void add_energy_delay(HtmlPage& page, const Table& t, const std::vector<bool>& done, const std::vector<std::string>& keys) {
    const TableColumn* e = t.find("energy.total_j");
    const TableColumn* d = t.find("total_time_us");
    const TableColumn* name = t.find("name");
    if (!e || !d || !name) return;
    Series s;
    s.label = "points";
    s.line = false;
    for (size_t r = 0; r < t.rows(); ++r) {
        const double x = cell_value(*d, r), y = cell_value(*e, r);
        if (!done[r] || !std::isfinite(x) || !std::isfinite(y)) continue;
        std::string tip = name->texts[r] + ":";
        for (const auto& k : keys) tip += " " + short_key(k) + "=" + t.find(k)->texts[r];
        s.x.push_back(x);
        s.y.push_back(y);
        s.tips.push_back(tip + ": " + format_number(x) + " us, " + format_number(y) + " J");
    }
    if (s.x.empty()) return;
    page.heading("Energy against time");
    page.paragraph("Each point's energy (summary.json energy.total_j: dynamic and static, docs/energy.md) against its simulated "
                   "time (total_time_us); lower left is better on both.");
    Plot p("sweep-energy-delay", "energy vs time", Axis{"total_time_us"}, Axis{"energy.total_j (J)"});
    p.add(s);
    page.plot(p.svg());
}

}  // namespace

std::string sweep_report(const std::string& dir, const ReportOptions& o) {
    const Table t = read_table_h5(dir + "/sweep.h5", "/sweep");
    const TableColumn* status = t.find("status");
    const TableColumn* name = t.find("name");
    if (!status || !name) throw InputError("'" + dir + "/sweep.h5' is not a sweep table (no status/name columns)");
    const size_t n = t.rows();
    auto attr = [&](const char* k) {
        auto it = t.attrs.find(k);
        return it == t.attrs.end() ? std::string() : it->second;
    };
    const std::vector<std::string> keys = split_lines(attr("params"), '\n');
    std::vector<int> dims;
    for (const auto& d : split_lines(attr("param_dims"), ',')) dims.push_back(std::stoi(d));
    if (dims.size() != keys.size()) {
        dims.assign(keys.size(), 0);
        std::iota(dims.begin(), dims.end(), 0);
    }
    std::vector<bool> done(n);
    size_t ndone = 0;
    for (size_t r = 0; r < n; ++r) ndone += (done[r] = status->texts[r] == "done");

    HtmlPage page("sfumato sweep: " + fs::path(dir).lexically_normal().filename().string());
    page.definition_list({{"directory", dir},
                          {"spec", attr("spec")},
                          {"command", attr("command")},
                          {"configs", attr("configs")},
                          {"points", std::to_string(n) + " (" + std::to_string(ndone) + " done, " + std::to_string(n - ndone) +
                                         " not done)"}});

    // Dimensions: the first key of each names its axis; zipped keys ride along.
    std::map<int, std::vector<std::string>> dim_keys;
    for (size_t i = 0; i < keys.size(); ++i) dim_keys[dims[i]].push_back(keys[i]);
    std::vector<std::string> figures;
    for (const auto& f : sweep::figure_columns(t)) {
        const TableColumn* c = t.find(f);
        if (!c || c->kind == TableColumn::Kind::Text) continue;
        if (!o.figures.empty() &&
            std::none_of(o.figures.begin(), o.figures.end(), [&](const std::string& w) { return f.find(w) != std::string::npos; }))
            continue;
        double lo = INFINITY, hi = -INFINITY;
        for (size_t r = 0; r < n; ++r) {
            const double v = cell_value(*c, r);
            if (!done[r] || !std::isfinite(v)) continue;
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
        if (lo < hi) figures.push_back(f);  // constant figures say nothing about the parameters
    }

    page.heading("Figures against each varied parameter");
    if (dim_keys.empty() || figures.empty() || ndone == 0) {
        page.paragraph(ndone == 0 ? "No point is done: nothing to plot."
                                  : dim_keys.empty() ? "The sweep varies no parameter." : "No figure varies across the points.");
    } else {
        page.paragraph("Each plot shows one figure against one varied parameter, with a curve for each combination of the other "
                       "parameters; points that did not complete are left out. Figures constant over the sweep are not plotted.");
    }
    size_t plot_id = 0;
    for (const auto& f : figures) {
        if (dim_keys.empty() || ndone == 0) break;
        const TableColumn& fc = *t.find(f);
        for (const auto& [d, dkeys] : dim_keys) {
            const TableColumn& xc = *t.find(dkeys.front());
            bool numeric = true;
            std::vector<std::string> cats;
            for (size_t r = 0; r < n; ++r) {
                double v;
                numeric = numeric && parse_param_number(xc.texts[r], v);
                if (std::find(cats.begin(), cats.end(), xc.texts[r]) == cats.end()) cats.push_back(xc.texts[r]);
            }
            std::string xlabel = dkeys.front();
            if (dkeys.size() > 1) {
                xlabel += " (with";
                for (size_t i = 1; i < dkeys.size(); ++i) xlabel += " " + dkeys[i];
                xlabel += ")";
            }
            Axis xa{xlabel};
            if (!numeric) xa.categories = cats;
            Plot p("sweep-" + std::to_string(plot_id++), f + " vs " + dkeys.front(), xa, Axis{f});
            std::map<std::string, Series> series;
            std::vector<std::string> order;
            for (size_t r = 0; r < n; ++r) {
                if (!done[r]) continue;
                std::string label;
                for (const auto& [d2, k2] : dim_keys) {
                    if (d2 == d) continue;
                    label += (label.empty() ? "" : ", ") + short_key(k2.front()) + "=" + t.find(k2.front())->texts[r];
                }
                if (!series.count(label)) order.push_back(label);
                Series& s = series[label];
                s.label = label;
                double x = 0;
                if (numeric) parse_param_number(xc.texts[r], x);
                else x = static_cast<double>(std::find(cats.begin(), cats.end(), xc.texts[r]) - cats.begin());
                s.x.push_back(x);
                s.y.push_back(cell_value(fc, r));
                s.tips.push_back(name->texts[r] + ": " + dkeys.front() + "=" + xc.texts[r] + (label.empty() ? "" : ", " + label) +
                                 ": " + f + " = " + format_number(s.y.back()));
            }
            for (const auto& l : order) {
                Series s = series[l];
                std::vector<size_t> idx(s.x.size());
                std::iota(idx.begin(), idx.end(), 0);
                std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return s.x[a] < s.x[b]; });
                Series sorted = s;
                for (size_t i = 0; i < idx.size(); ++i) {
                    sorted.x[i] = s.x[idx[i]];
                    sorted.y[i] = s.y[idx[i]];
                    sorted.tips[i] = s.tips[idx[i]];
                }
                p.add(sorted);
            }
            page.plot(p.svg());
        }
    }

    add_energy_delay(page, t, done, keys);

    if (ndone < n) {
        page.heading("Points not done");
        std::vector<std::vector<std::string>> rows;
        const TableColumn* ec = t.find("exit_code");
        const TableColumn* er = t.find("error");
        for (size_t r = 0; r < n; ++r) {
            if (done[r]) continue;
            std::string params;
            for (const auto& k : keys) params += (params.empty() ? "" : " ") + k + "=" + t.find(k)->texts[r];
            rows.push_back({name->texts[r], status->texts[r], ec ? cell_text(*ec, r) : "", params, er ? er->texts[r] : ""});
        }
        page.table({"point", "status", "exit code", "parameters", "error"}, rows);
    }

    page.heading("Table");
    std::vector<std::string> header;
    for (const auto& c : t.columns)
        if (c.name != "error") header.push_back(c.name);
    std::vector<std::vector<std::string>> rows;
    for (size_t r = 0; r < n; ++r) {
        std::vector<std::string> row;
        for (const auto& c : t.columns)
            if (c.name != "error") row.push_back(cell_text(c, r));
        rows.push_back(std::move(row));
    }
    page.table(header, rows, true);
    page.paragraph("The same table: sweep.csv and sweep.h5 (dataset /sweep) in this directory.");
    return page.render();
}

}  // namespace sfumato::report
