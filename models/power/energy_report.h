// The energy figures of a run as data (summary.json "energy", per-op "energy_j"/"power_w"):
// the run's breakdown by component from its chip-wide events, each kernel's energy from its own
// pipe busy cycles and the events attributed to its span (energy_attributor.h) plus the chip's
// static power over its span, and the chip's average and peak power over a sliding window.
#pragma once
#include <nlohmann/json.hpp>

#include "models/power/energy_attributor.h"

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

// summary.json "energy": total, dynamic and static joules, average and peak power, the breakdown
// by component, the static power (W), the events priced and the span-attributed events outside
// any kernel.
nlohmann::json run_energy_json(const EnergyAttributor& a, const Events& run, double seconds);
nlohmann::json events_json(const Events& e);

}  // namespace sfumato::power
