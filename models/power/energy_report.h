// The energy figures of a run as data (summary.json "energy", per-op "energy_j"/"power_w"):
// the run's breakdown by component from its chip-wide events, each kernel's energy from its own
// pipe busy cycles and the events attributed to its span (energy_attributor.h) plus the chip's
// static power over its span, and the chip's average and peak power over a sliding window.
#pragma once
#include <nlohmann/json.hpp>
#include <vector>

#include "models/power/energy_attributor.h"
#include "models/power/link_energy.h"

namespace sfumato::power {

struct KernelEnergy {
    Events events;  // pipe busy cycles (the task's) and span-attributed events
    double dynamic_j = 0, static_j = 0;
    double total() const { return dynamic_j + static_j; }
};
KernelEnergy kernel_energy(const EnergyAttributor& a, const Task& t, double seconds);

// Power over time: the timeline's dynamic energy per bin plus static power.
struct PowerSeries {
    double bin_s = 0;
    std::vector<double> watts;  // per bin
    double window_s = 0;        // the peak's sliding window (a whole number of bins)
    double peak_w = 0;          // highest average over any window of consecutive bins
    double peak_at_s = 0;       // where that window starts
};
// `run_s`: the run's length (bins past it are dropped, the last one is partial).
PowerSeries power_series(const EnergyAttributor& a, double run_s);

// The series averaged down to at most `max_points` points: {"bin_us", "watts": [...]}.
nlohmann::json power_over_time_json(const PowerSeries& s, size_t max_points);

// summary.json "energy": total, dynamic and static joules, average and peak power, the breakdown
// by component, the static power (W), the events priced and the span-attributed events outside
// any kernel.
nlohmann::json run_energy_json(const EnergyAttributor& a, const Events& run, double seconds);
nlohmann::json events_json(const Events& e);
// Several chips (a system): each chip's run_energy_json under "chips" (with "id", and with
// `links`: "links" (the energy of the channels it drives, link_energy.h) and
// "total_with_links_j"), the links' energy under "fabric", and the sums over chips and links
// (total, dynamic, static joules; average and static power; the peak bound: the sum of each
// chip's peak, which may lie in different windows, and the links' static power).
nlohmann::json system_energy_json(const std::vector<const EnergyAttributor*>& chips,
                                  const std::vector<uint32_t>& ids, const LinkEnergy* links, double now_cycles,
                                  double seconds);
// Energy per unit of work (an inference, a training step, a token): the kernels' dynamic energy
// (the run's less what ran outside kernels; in a system, plus the links' dynamic energy) over
// `units`, plus the static power (chips and switch ports) over `seconds` (the time those units
// took) / `units`.
double energy_per_unit(const nlohmann::json& energy, double units, double seconds);

}  // namespace sfumato::power
