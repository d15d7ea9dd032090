// Automatic choice of a collective's algorithm: every applicable algorithm's plan for this
// message is costed on the system's routes (alpha-beta per step: a fixed step overhead, the
// largest route latency among the step's transfers, and the busiest channel's bytes over its
// bandwidth, so routes that share a link slow each other; plus the step's local reductions at
// the device's memory bandwidth), and the cheapest wins. The same inputs give the same choice on
// every rank. Plain C++.
#pragma once
#include <cstdint>
#include <vector>

#include "runtime/comm/algorithms.h"
#include "sim/device_if.h"
#include "sim/system_info.h"

namespace sfumato::comm {

struct CostModel {
    const SystemInfo* sys = nullptr;
    std::vector<uint32_t> chip_of_rank;
    double step_overhead_ns = 0;
    double local_gbps = 0;  // bytes a rank's local copies and reductions move per ns
    uint32_t elem_bytes = 2;
};

// Estimated time of a plan, in ns.
double plan_cost_ns(const Plan& p, const CostModel& m);
// The applicable algorithms for this request (hierarchical needs equal groups and more than one).
std::vector<Algo> candidates(const PlanRequest& r);
Algo choose(PlanRequest r, const CostModel& m);

}  // namespace sfumato::comm
