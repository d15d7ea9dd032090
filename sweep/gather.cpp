#include "sweep/gather.h"

#include <cmath>
#include <fstream>
#include <limits>
#include <set>

#include "sweep/point_run.h"
#include "traces/atomic_file.h"
#include "traces/hdf5_table.h"

namespace sfumato::sweep {

namespace {

// Host-dependent or bookkeeping fields of a summary, never figures.
const std::set<std::string> kSkip = {"wall_seconds", "sim_gb_per_wall_second", "version", "config_hash",
                                     "config",       "mode",                   "chip",    "command",
                                     "tasks",        "device"};

// Host timings that may sit one level down ("graph.compile_s"): never figures either.
const std::set<std::string> kHostNested = {"wall_seconds", "sim_gb_per_wall_second", "compile_s"};

void add_value(std::vector<std::pair<std::string, nlohmann::json>>& out, const std::string& name, const nlohmann::json& v) {
    if (v.is_boolean()) out.emplace_back(name, v.get<bool>() ? 1 : 0);
    else if (v.is_number()) out.emplace_back(name, v);
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
    return s;
}

}  // namespace

std::vector<std::pair<std::string, nlohmann::json>> summary_figures(const nlohmann::json& summary) {
    std::vector<std::pair<std::string, nlohmann::json>> out;
    if (!summary.is_object()) return out;
    // The two headline figures first.
    for (const char* k : {"total_cycles", "total_time_us"})
        if (summary.contains(k)) add_value(out, k, summary[k]);
    for (const auto& [k, v] : summary.items()) {
        if (kSkip.count(k) || k == "total_cycles" || k == "total_time_us" || k == "ops") continue;
        if (v.is_object()) {
            for (const auto& [k2, v2] : v.items())
                if (!kHostNested.count(k2)) add_value(out, k + "." + k2, v2);
        } else {
            add_value(out, k, v);
        }
    }
    if (summary.contains("ops") && summary["ops"].is_array()) {
        std::map<std::string, int> seen;
        for (const auto& op : summary["ops"]) {
            if (!op.is_object()) continue;
            std::string name = op.value("name", std::string("op"));
            const int n = ++seen[name];
            if (n > 1) name += "#" + std::to_string(n);
            const double t = op.value("time_us", 0.0);
            const double flops = op.value("flops", 0.0), bytes = op.value("bytes", 0.0);
            for (const char* f : {"cycles", "time_us", "flops", "bytes"})
                if (op.contains(f)) add_value(out, name + "." + f, op[f]);
            if (t > 0) {
                out.emplace_back(name + ".tflops", flops / (t * 1e6));
                out.emplace_back(name + ".gbps", bytes / (t * 1e3));
            }
            for (const char* f : {"energy_j", "power_w"})
                if (op.contains(f)) add_value(out, name + "." + f, op[f]);
            if (op.contains("bound") && op["bound"].is_string()) out.emplace_back(name + ".bound", op["bound"]);
            if (op.contains("roofline_fraction")) add_value(out, name + ".roofline_fraction", op["roofline_fraction"]);
            if (op.contains("pipe_util") && op["pipe_util"].is_object())
                for (const auto& [p, u] : op["pipe_util"].items()) add_value(out, name + ".util." + p, u);
        }
    }
    return out;
}

Table gather(const Spec& spec, const std::vector<Point>& points, const std::string& out_dir,
             const std::map<size_t, std::string>& extra_errors, const std::map<size_t, std::string>& extra_states) {
    const size_t n = points.size();
    Table t;
    auto text_col = [&](const std::string& name) {
        TableColumn c;
        c.name = name;
        c.kind = TableColumn::Kind::Text;
        c.texts.assign(n, "");
        return c;
    };
    TableColumn point{"point", TableColumn::Kind::Int, {}, {}, {}, {}};
    TableColumn name = text_col("name"), state = text_col("status"), error = text_col("error");
    TableColumn exit_code{"exit_code", TableColumn::Kind::Int, {}, {}, {}, {}};
    TableColumn wall{"wall_seconds", TableColumn::Kind::Float, {}, {}, {}, {}};
    std::vector<TableColumn> params;
    for (const Param* p : spec.params()) params.push_back(text_col(p->key));

    // Figures: column order of first appearance; each cell a JSON value (null when missing).
    std::vector<std::string> fig_order;
    std::map<std::string, std::vector<nlohmann::json>> figs;
    for (size_t r = 0; r < n; ++r) {
        const Point& pt = points[r];
        const std::string dir = out_dir + "/points/" + point_name(pt.index, spec.num_points());
        point.ints.push_back(static_cast<int64_t>(pt.index));
        name.texts[r] = point_name(pt.index, spec.num_points());
        for (size_t i = 0; i < pt.params.size(); ++i) params[i].texts[r] = pt.params[i].second;
        PointStatus s = read_status(dir);
        const bool current = s.present && s.args == pt.args;
        if (current && s.ok()) {
            nlohmann::json summary;
            if (std::ifstream f(dir + "/summary.json"); f) {
                try {
                    summary = nlohmann::json::parse(f);
                } catch (const nlohmann::json::exception&) {
                    summary = nullptr;
                }
            }
            if (!summary.is_object()) {
                s.state = "failed";
                s.error = "summary.json is missing or malformed";
            }
            for (auto& [k, v] : summary_figures(summary)) {
                auto it = figs.find(k);
                if (it == figs.end()) {
                    fig_order.push_back(k);
                    it = figs.emplace(k, std::vector<nlohmann::json>(n)).first;
                }
                it->second[r] = v;
            }
        }
        if (current) {
            state.texts[r] = s.state;
            exit_code.ints.push_back(s.exit_code);
            wall.floats.push_back(s.wall_seconds);
            error.texts[r] = s.error;
        } else {
            auto st = extra_states.find(pt.index);
            auto er = extra_errors.find(pt.index);
            state.texts[r] = st != extra_states.end() ? st->second : "not run";
            exit_code.ints.push_back(-1);
            wall.floats.push_back(std::numeric_limits<double>::quiet_NaN());
            error.texts[r] = er != extra_errors.end() ? er->second : "";
        }
    }
    t.columns.push_back(std::move(point));
    t.columns.push_back(std::move(name));
    t.columns.push_back(std::move(state));
    t.columns.push_back(std::move(exit_code));
    for (auto& c : params) t.columns.push_back(std::move(c));
    for (const auto& k : fig_order) {
        const auto& cells = figs[k];
        bool all_int = true, any_text = false;
        for (const auto& v : cells) {
            if (v.is_null()) all_int = false;
            else if (v.is_string()) any_text = true;
            else if (!v.is_number_integer() && !v.is_number_unsigned()) all_int = false;
        }
        TableColumn c;
        c.name = k;
        if (any_text) {
            c.kind = TableColumn::Kind::Text;
            for (const auto& v : cells) c.texts.push_back(v.is_string() ? v.get<std::string>() : v.is_null() ? "" : v.dump());
        } else if (all_int) {
            c.kind = TableColumn::Kind::Int;
            for (const auto& v : cells) c.ints.push_back(v.get<int64_t>());
        } else {
            c.kind = TableColumn::Kind::Float;
            for (const auto& v : cells) c.floats.push_back(v.is_number() ? v.get<double>() : std::numeric_limits<double>::quiet_NaN());
        }
        t.columns.push_back(std::move(c));
    }
    t.columns.push_back(std::move(wall));
    t.columns.push_back(std::move(error));

    std::vector<std::string> keys, dims;
    const std::vector<int> d = spec.dims();
    for (size_t i = 0; i < spec.params().size(); ++i) {
        keys.push_back(spec.params()[i]->key);
        dims.push_back(std::to_string(d[i]));
    }
    t.attrs["spec"] = spec.path;
    t.attrs["command"] = join(spec.command, " ");
    t.attrs["configs"] = join(spec.configs, "\n");
    t.attrs["params"] = join(keys, "\n");
    t.attrs["param_dims"] = join(dims, ",");
    t.attrs["points"] = std::to_string(n);
    return t;
}

void write_results(const std::string& out_dir, const Table& t) {
    write_text_atomically(out_dir + "/sweep.csv", table_csv(t));
    write_table_h5(out_dir + "/sweep.h5", "/sweep", t);
}

std::vector<std::string> figure_columns(const Table& t) {
    std::set<std::string> params;
    if (auto it = t.attrs.find("params"); it != t.attrs.end()) {
        std::string s = it->second;
        size_t start = 0;
        while (start <= s.size()) {
            const size_t e = s.find('\n', start);
            params.insert(s.substr(start, e == std::string::npos ? std::string::npos : e - start));
            if (e == std::string::npos) break;
            start = e + 1;
        }
    }
    static const std::set<std::string> kBook = {"point", "name", "status", "exit_code", "wall_seconds", "error"};
    std::vector<std::string> v;
    for (const auto& c : t.columns)
        if (!kBook.count(c.name) && !params.count(c.name)) v.push_back(c.name);
    return v;
}

}  // namespace sfumato::sweep
