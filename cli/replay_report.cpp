#include "cli/replay_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace sfumato::cli {

namespace {

double quantile(std::vector<double> v, double q) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const double pos = q * static_cast<double>(v.size() - 1);
    const size_t lo = static_cast<size_t>(pos);
    const size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

// "aten::addmm#1619" -> "aten::addmm"; "MatMulV2#12" -> "MatMulV2".
std::string type_of(const std::string& source) { return source.substr(0, source.rfind('#')); }

}  // namespace

nlohmann::json imported_report(const workload::Workload& w, const workload::Replayer& rep,
                               const std::map<size_t, std::string>& skipped) {
    struct Op {
        std::string source, name;
        double measured = 0, simulated_ps = 0;
        bool skipped = false;
        std::string why;
    };
    std::vector<Op> ops;
    std::map<std::string, size_t> index;
    for (const workload::Task& t : w.tasks) {
        if (t.kind != workload::Kind::Kernel || t.measured_us < 0) continue;
        const std::string key = t.source.empty() ? "task " + std::to_string(t.index) : t.source;
        auto [it, fresh] = index.try_emplace(key, ops.size());
        if (fresh) ops.push_back({key, t.name, t.measured_us, 0, false, ""});
        Op& o = ops[it->second];
        if (auto s = skipped.find(t.index); s != skipped.end()) o.skipped = true, o.why = s->second;
        for (const auto& d : rep.device_tasks(t.index)) {
            if (d->done) o.simulated_ps += static_cast<double>(d->end_tick.v - d->start_tick.v);
        }
    }
    if (ops.empty()) return nullptr;
    nlohmann::json list = nlohmann::json::array(), skip = nlohmann::json::array();
    std::vector<double> all;
    std::map<std::string, std::vector<double>> by_type;
    std::map<std::string, std::pair<double, double>> type_time;
    for (const Op& o : ops) {
        if (o.skipped) {
            skip.push_back({{"source", o.source}, {"measured_us", o.measured}, {"why", o.why}});
            continue;
        }
        const double sim = o.simulated_ps / 1e6;
        nlohmann::json e = {{"source", o.source}, {"name", o.name}, {"measured_us", o.measured}, {"simulated_us", sim}};
        if (o.measured > 0) {
            const double err = sim / o.measured - 1.0;
            e["error"] = err;
            all.push_back(std::fabs(err));
            by_type[type_of(o.source)].push_back(std::fabs(err));
        } else {
            e["error"] = nullptr;
        }
        auto& tt = type_time[type_of(o.source)];
        tt.first += o.measured;
        tt.second += sim;
        list.push_back(std::move(e));
    }
    nlohmann::json types = nlohmann::json::object();
    for (const auto& [t, v] : by_type) {
        types[t] = {{"count", v.size()},
                    {"median_abs_error", quantile(v, 0.5)},
                    {"p90_abs_error", quantile(v, 0.9)},
                    {"measured_us", type_time[t].first},
                    {"simulated_us", type_time[t].second}};
    }
    return {{"ops", list},
            {"compared", all.size()},
            {"median_abs_error", quantile(all, 0.5)},
            {"p90_abs_error", quantile(all, 0.9)},
            {"by_type", types},
            {"skipped", skip}};
}

void print_imported_report(const nlohmann::json& r) {
    if (r.is_null()) return;
    std::printf("  measured vs simulated, %zu operators: median |error| %.1f%%, p90 |error| %.1f%%\n",
                r["compared"].get<size_t>(), 100 * r["median_abs_error"].get<double>(), 100 * r["p90_abs_error"].get<double>());
    std::vector<std::pair<double, std::string>> order;
    for (const auto& [t, v] : r["by_type"].items()) order.push_back({-v["measured_us"].get<double>(), t});
    std::sort(order.begin(), order.end());
    std::printf("    %-36s %6s %12s %12s %10s %10s\n", "op type", "count", "measured us", "simulated us", "median|e|", "p90|e|");
    for (size_t i = 0; i < order.size() && i < 25; ++i) {
        const auto& v = r["by_type"][order[i].second];
        std::printf("    %-36s %6zu %12.1f %12.1f %9.1f%% %9.1f%%\n", order[i].second.c_str(), v["count"].get<size_t>(),
                    v["measured_us"].get<double>(), v["simulated_us"].get<double>(), 100 * v["median_abs_error"].get<double>(),
                    100 * v["p90_abs_error"].get<double>());
    }
    if (!r["skipped"].empty()) {
        std::printf("  %zu operators the chip could not plan (summary.json \"imported\".skipped), e.g.:\n", r["skipped"].size());
        for (size_t i = 0; i < r["skipped"].size() && i < 5; ++i)
            std::printf("    %s: %s\n", r["skipped"][i]["source"].get<std::string>().c_str(), r["skipped"][i]["why"].get<std::string>().c_str());
    }
}

}  // namespace sfumato::cli
