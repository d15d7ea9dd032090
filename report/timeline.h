// The memory timeline of a run, from its trace.json (Chrome Trace Event JSON written by
// traces/chrome_trace.h). With memory counters (a --trace mem run, and membench by default):
// HBM bandwidth summed over channels and the L2 hit rate, time-averaged into bins, one pair per
// memory process (a system's chips each have their own, "chipN memory": a plot per chip, its
// title led by "chipN: "). Without
// them: the share of the GM-moving pipes (MTE2, MTE3, FIX) busy in each bin, from their
// instruction slices. Each result is a series of (time in us, value) points.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace sfumato::report {

struct TimelineSeries {
    std::string title;    // what the plot shows
    std::string y_label;
    std::string note;     // a sentence for below the plot, if any
    std::vector<double> t_us, value;
};

// Empty when the trace has neither counters nor GM pipe slices.
std::vector<TimelineSeries> memory_timeline(const nlohmann::json& trace, size_t bins);

}  // namespace sfumato::report
