// What `sfumato replay` reports about an imported workload (tasks with a measured time): per
// profiled operator its measured and simulated time and the error (simulated / measured - 1),
// the distribution of |error| (median, p90) overall and by operator type, and the operators
// the target chip could not plan (skipped with the reason).
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "traces/workload_replay.h"

namespace sfumato::cli {

// null when the workload has no measured times. `skipped`: task index -> reason.
nlohmann::json imported_report(const workload::Workload& w, const workload::Replayer& rep,
                               const std::map<size_t, std::string>& skipped);
void print_imported_report(const nlohmann::json& r);

}  // namespace sfumato::cli
