#include "models/power/energy_report.h"

#include <algorithm>
#include <cmath>

namespace sfumato::power {

KernelEnergy kernel_energy(const EnergyAttributor& a, const Task& t, double seconds) {
    KernelEnergy k;
    k.events = kernel_events(t);
    const Events span = a.kernel_span_events(t.id);
    for (size_t i = 0; i < kNumEvents; ++i) k.events.n[i] += span.n[i];
    k.dynamic_j = a.model().dynamic(k.events).dynamic();
    k.static_j = a.model().static_power().static_j() * seconds;
    return k;
}

PowerSeries power_series(const EnergyAttributor& a, double run_s) {
    PowerSeries s;
    const PowerTimeline& tl = a.timeline();
    s.bin_s = tl.bin_seconds();
    const double static_w = a.model().static_power().static_j();
    const size_t n = run_s > 0 ? static_cast<size_t>(std::ceil(run_s / s.bin_s)) : 0;
    s.watts.assign(n, static_w);
    for (size_t i = 0; i < n && i < tl.bins().size(); ++i) {
        // The last bin may be partial: its power is over the part the run covers.
        const double width = std::min(s.bin_s, run_s - static_cast<double>(i) * s.bin_s);
        s.watts[i] += width > 0 ? tl.bins()[i] / width : 0.0;
    }
    // The window is window_us rounded to whole bins (the timeline may have coarsened its bins).
    const double want = a.model().params().window_us * 1e-6;
    const size_t k = std::max<size_t>(1, static_cast<size_t>(std::llround(want / s.bin_s)));
    s.window_s = static_cast<double>(k) * s.bin_s;
    if (n == 0) return s;
    const size_t w = std::min(k, n);
    double sum = 0;
    for (size_t i = 0; i < w; ++i) sum += s.watts[i];
    s.peak_w = sum / static_cast<double>(w);
    for (size_t i = w; i < n; ++i) {
        sum += s.watts[i] - s.watts[i - w];
        if (sum / static_cast<double>(w) > s.peak_w) {
            s.peak_w = sum / static_cast<double>(w);
            s.peak_at_s = static_cast<double>(i + 1 - w) * s.bin_s;
        }
    }
    return s;
}

nlohmann::json power_over_time_json(const PowerSeries& s, size_t max_points) {
    const size_t n = s.watts.size();
    const size_t per = std::max<size_t>(1, (n + max_points - 1) / std::max<size_t>(1, max_points));
    nlohmann::json w = nlohmann::json::array();
    for (size_t i = 0; i < n; i += per) {
        const size_t end = std::min(n, i + per);
        double sum = 0;
        for (size_t j = i; j < end; ++j) sum += s.watts[j];
        w.push_back(sum / static_cast<double>(end - i));
    }
    return {{"bin_us", s.bin_s * static_cast<double>(per) * 1e6}, {"watts", w}};
}

nlohmann::json events_json(const Events& e) {
    nlohmann::json j = nlohmann::json::object();
    for (size_t i = 0; i < kNumEvents; ++i) j[event_name(static_cast<Event>(i))] = e.n[i];
    return j;
}

nlohmann::json run_energy_json(const EnergyAttributor& a, const Events& run, double seconds) {
    const EnergyModel& m = a.model();
    const Breakdown b = m.energy(run, seconds);
    nlohmann::json by = nlohmann::json::object();
    for (const auto& [name, j] : b.items()) by[name] = j;
    const PowerSeries ps = power_series(a, seconds);
    return {{"total_j", b.total()},
            {"dynamic_j", b.dynamic()},
            {"static_j", b.static_j()},
            {"average_power_w", seconds > 0 ? b.total() / seconds : 0.0},
            {"peak_power_w", ps.peak_w},
            {"peak_window_us", ps.window_s * 1e6},
            {"peak_at_us", ps.peak_at_s * 1e6},
            {"static_power_w", m.static_power().static_j()},
            {"voltage_v", m.params().voltage_v.get()},
            {"envelope_w", m.params().envelope_w.get()},
            {"by_component_j", by},
            {"events", events_json(run)},
            {"power_over_time", power_over_time_json(ps, 256)},
            {"outside_kernels",
             {{"dynamic_j", m.dynamic(a.outside_events()).dynamic()},
              {"events", events_json(a.outside_events())}}}};
}

}  // namespace sfumato::power

namespace sfumato::power {

nlohmann::json system_energy_json(const std::vector<const EnergyAttributor*>& chips,
                                  const std::vector<uint32_t>& ids, const LinkEnergy* links, double now_cycles,
                                  double seconds) {
    nlohmann::json per = nlohmann::json::array();
    double total = 0, dyn = 0, stat = 0, static_w = 0, peak = 0, outside = 0;
    for (size_t i = 0; i < chips.size(); ++i) {
        const EnergyAttributor* a = chips[i];
        nlohmann::json j = run_energy_json(*a, a->run_events(now_cycles), seconds);
        total += j["total_j"].get<double>();
        dyn += j["dynamic_j"].get<double>();
        stat += j["static_j"].get<double>();
        static_w += j["static_power_w"].get<double>();
        peak += j["peak_power_w"].get<double>();
        outside += j["outside_kernels"]["dynamic_j"].get<double>();
        j.erase("power_over_time");
        const uint32_t id = i < ids.size() ? ids[i] : static_cast<uint32_t>(i);
        j["id"] = id;
        if (links && id < links->chip_dynamic_j.size()) {
            const double ld = links->chip_dynamic_j[id], ls = links->chip_static_w[id] * seconds;
            j["links"] = {{"dynamic_j", ld}, {"static_j", ls}, {"static_power_w", links->chip_static_w[id]}};
            j["total_with_links_j"] = j["total_j"].get<double>() + ld + ls;
        }
        per.push_back(std::move(j));
    }
    nlohmann::json out = {{"chips", per}};
    if (links) {
        total += links->total();
        dyn += links->dynamic();
        stat += links->static_j;
        static_w += links->static_w;
        peak += links->static_w;
        out["fabric"] = link_energy_json(*links);
    }
    out["total_j"] = total;
    out["dynamic_j"] = dyn;
    out["static_j"] = stat;
    out["average_power_w"] = seconds > 0 ? total / seconds : 0.0;
    out["static_power_w"] = static_w;
    out["peak_power_w_bound"] = peak;
    out["outside_kernels"] = {{"dynamic_j", outside}};
    return out;
}

double energy_per_unit(const nlohmann::json& energy, double units, double seconds) {
    if (units <= 0 || !energy.is_object()) return 0.0;
    const double kernels = energy.value("dynamic_j", 0.0) - energy["outside_kernels"].value("dynamic_j", 0.0);
    return (kernels + energy.value("static_power_w", 0.0) * seconds) / units;
}

}  // namespace sfumato::power
