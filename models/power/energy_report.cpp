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
            {"outside_kernels",
             {{"dynamic_j", m.dynamic(a.outside_events()).dynamic()},
              {"events", events_json(a.outside_events())}}}};
}

}  // namespace sfumato::power
