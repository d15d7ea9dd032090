// What the several-chip forms of `sfumato llm` (--tp, --pp, --ep; cli/llm_{tp,pp,ep}.cpp) share
// around their runtime/llm host programs (runtime/llm/system_parallel.h runs them on the system):
// the --simulate choice, the printed TTFT / decode lines, and the tail that prints the re-use
// counters and wall time and writes summary.json with the re-use and link sections. The figures
// and JSON blocks themselves come from runtime/llm/summary.h and system_parallel.h.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/system_session.h"
#include "runtime/llm/path_bound.h"
#include "runtime/llm/summary.h"
#include "runtime/reuse/timing_reuse.h"

namespace sfumato::cli {

// Picoseconds in milliseconds; bytes in GiB (for the printed figures).
inline double ms(uint64_t ps) { return static_cast<double>(ps) / 1e9; }
inline double gib(uint64_t b) { return static_cast<double>(b) / (1ull << 30); }

// --simulate auto|all|one resolved for the mode (runtime/system/simulate.h): true = mirror (chip 0's
// kernels only; `one`, an approximation), false for auto and all.
bool simulate_one(const std::string& simulate, bool functional);

// The TTFT line (with the number of prefill steps when `prefill_steps`) and, with decode steps,
// the steps (first 8 and last 4) and the TPOT / tokens-per-second line.
void print_figures(const llm::Figures& f, int64_t batch, bool prefill_steps);

// Prints the re-use counters and the wall time, then completes `summary` (its `llm` section's
// wall_s and reuse_timing, the top-level reuse_timing and the links over the run's steps) and
// writes the outputs. `path` (EP): the re-use bound propagated along the critical path, printed
// and written as reuse_timing's ttft_error_bound_fraction and tpot_error_bound_fraction.
void finish_llm_run(SystemSession& s, nlohmann::json& summary, const std::vector<llm::StepRecord>& steps,
                    const reuse::ReuseOptions& ropt, const reuse::ReuseCounters& rc, double wall_s,
                    const std::string& out_dir, const llm::PathBound* path = nullptr);

}  // namespace sfumato::cli
