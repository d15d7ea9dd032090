#include "traces/run_diff.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "sim/error.h"

namespace sfumato::diff {

using nlohmann::json;

bool parse_by(const std::string& s, By& out) {
    if (s == "op") out = By::Op;
    else if (s == "type") out = By::Type;
    else if (s == "stream") out = By::Stream;
    else return false;
    return true;
}

double Row::pct() const {
    if (a == 0) return b == 0 ? 0.0 : 100.0;
    return 100.0 * static_cast<double>(delta()) / static_cast<double>(a);
}

json load_summary(const std::string& path) {
    std::string file = path;
    if (std::filesystem::is_directory(path)) file = path + "/summary.json";
    std::ifstream in(file);
    if (!in) throw InputError("diff: cannot open '" + file + "' (give a run's out dir or its summary.json)");
    std::stringstream ss;
    ss << in.rdbuf();
    json j;
    try {
        j = json::parse(ss.str());
    } catch (const json::parse_error& e) {
        throw InputError("diff: '" + file + "' is not valid JSON: " + e.what());
    }
    if (!j.is_object() || !j.contains("total_cycles") || !j["total_cycles"].is_number() || j["total_cycles"].get<double>() < 0)
        throw InputError("diff: '" + file + "' is not a sfumato summary (no total_cycles)");
    if (j.contains("ops") && !j["ops"].is_array()) throw InputError("diff: '" + file + "': field 'ops' must be an array");
    return j;
}

namespace {

struct Group {
    std::string type;
    uint64_t cycles = 0;
};

std::map<std::string, Group> groups(const json& s, By by) {
    std::map<std::string, Group> g;
    std::map<std::string, int> seen;
    // A long run's summary sums its launches per type instead of listing them (--summary-ops).
    if (by == By::Type && !s.contains("ops") && s.contains("ops_by_type") && s["ops_by_type"].is_array()) {
        for (const json& t : s["ops_by_type"]) {
            if (!t.is_object()) continue;
            const uint64_t cyc = t.contains("cycles") && t["cycles"].is_number_unsigned() ? t["cycles"].get<uint64_t>() : 0;
            g[t.value("type", "")].cycles += cyc;
        }
        return g;
    }
    if (!s.contains("ops")) return g;
    for (const json& o : s["ops"]) {
        if (!o.is_object()) continue;
        const std::string name = o.value("name", "");
        const std::string type = o.value("type", "");
        const uint64_t cyc = o.contains("cycles") && o["cycles"].is_number() && o["cycles"].get<double>() > 0
                                 ? static_cast<uint64_t>(o["cycles"].get<double>() + 0.5)
                                 : 0;
        std::string key;
        if (by == By::Op) {
            const int n = ++seen[name];
            key = n == 1 ? name : name + "#" + std::to_string(n);
        } else if (by == By::Type) {
            key = type;
        } else {
            key = "stream " + (o.contains("stream") ? o["stream"].dump() : std::string("?"));
        }
        Group& x = g[key];
        x.type = by == By::Op ? type : "";
        x.cycles += cyc;
    }
    return g;
}

}  // namespace

Result compare(const json& a, const json& b, By by, double tol) {
    Result r;
    r.total_a = static_cast<uint64_t>(a["total_cycles"].get<double>() + 0.5);
    r.total_b = static_cast<uint64_t>(b["total_cycles"].get<double>() + 0.5);
    Row total{"total", "", r.total_a, r.total_b};
    r.total_pct = total.pct();
    for (const json* s : {&a, &b})
        if (by != By::Type && !s->contains("ops") && s->contains("ops_omitted"))
            throw InputError(std::string("diff: summary ") + (s == &a ? "A" : "B") +
                             " lists no launches (its run had more tasks than --summary-ops): compare with --by type, "
                             "or rerun it with a larger --summary-ops");
    const auto ga = groups(a, by), gb = groups(b, by);
    for (const auto& [k, x] : ga) {
        auto it = gb.find(k);
        if (it == gb.end()) r.only_a.push_back({k, x.type, x.cycles, 0});
        else r.rows.push_back({k, x.type, x.cycles, it->second.cycles});
    }
    for (const auto& [k, x] : gb) {
        if (!ga.count(k)) r.only_b.push_back({k, x.type, 0, x.cycles});
    }
    std::stable_sort(r.rows.begin(), r.rows.end(),
                     [](const Row& x, const Row& y) { return std::llabs(x.delta()) > std::llabs(y.delta()); });
    for (const Row& x : r.rows) {
        if (std::fabs(x.pct()) > tol) ++r.beyond;
    }
    r.within = std::fabs(r.total_pct) <= tol && r.beyond == 0 && r.only_a.empty() && r.only_b.empty();
    return r;
}

}  // namespace sfumato::diff
