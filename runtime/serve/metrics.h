// Serving metrics from a scheduler run (runtime/serve/scheduler.h): percentiles of TTFT, TPOT
// and end-to-end latency over the served requests, throughput, and goodput under SLOs (requests
// whose TTFT and TPOT both meet them, per second), as serving benchmarks report them.
// Percentiles by the nearest-rank rule (the smallest value with at least p % of the sample at
// or below it), so each is a latency some request had.
#pragma once
#include <cstddef>
#include <vector>

#include "runtime/serve/scheduler.h"

namespace sfumato::serve {

struct Percentiles {
    double mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
};
Percentiles percentiles(std::vector<double> v);

struct ServeMetrics {
    size_t served = 0, rejected = 0;
    Percentiles ttft, tpot, e2e;  // seconds; TPOT over requests with more than one output token
    Percentiles itl;              // inter-token latency: every gap between two tokens of a request
    double requests_per_s = 0;        // served requests over the run (first arrival to last finish)
    double output_tokens_per_s = 0;
    double goodput_per_s = 0;         // served requests meeting both SLOs, per second
    size_t met_slo = 0;
    double mean_batch = 0;            // sequences per step
};

// slo_ttft_s / slo_tpot_s: 0 means no bound.
ServeMetrics summarize(const ServeResult& r, double slo_ttft_s = 0, double slo_tpot_s = 0);

}  // namespace sfumato::serve
