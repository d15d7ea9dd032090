// A data-parallel training step on a system of chips as a library (the host side of `sfumato
// train-step`, cli/cmd_train_step.cpp, which parses, calls this and prints; a user's C++ program
// does the same): over a sys::SystemRun (runtime/system/system_run.h) it opens the communicator
// over chips 0..R-1, runs each rank's host program (train_step.h, run_rank) on its chip, takes
// the step's times from the device tasks, runs the functional check, and makes summary.json's
// train-step sections:
//
//   sys::SystemRun s(system, host_params, &trace, stats_root);   // system: models/link's System
//   graph::TrainSetup ts;  ... options ...
//   const uint32_t ranks = graph::train_ranks(s, 0);             // 0: every chip
//   ts.compile(std::move(g), batch, s.system().device(0).info()); ts.make_data(ranks, functional);
//   graph::TrainStepRun run = graph::run_train_step(s, ts, ranks, comm_params, functional);
//   ... graph::train_step_figures(ts, run, batch), graph::train_step_json(...) ...
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runtime/comm/communicator.h"
#include "runtime/graph/train_step.h"
#include "runtime/system/system_run.h"

namespace sfumato::graph {

// The ranks of a step: `ranks` (0: every chip of the system). InputError when the system has
// fewer chips.
uint32_t train_ranks(const sys::SystemRun& s, uint32_t ranks);

struct TrainStepRun {
    std::vector<RankRun> runs;  // per rank
    StepTimes times;
    reuse::ReuseCounters reuse;  // summed over the ranks
    nlohmann::json check = {{"checked", false}};  // functional: check_against_reference
    bool passed = true;
};

// Runs the compiled step (ts.compile, ts.make_data) on chips 0..ranks-1 of s, one host program
// per rank, to completion; functional: checks it against the host reference.
TrainStepRun run_train_step(sys::SystemRun& s, const TrainSetup& ts, uint32_t ranks, const comm::CommParams& cp,
                            bool functional);

// The step's figures, per step (the run's times over ts.steps), in us.
struct TrainStepFigures {
    double step_us = 0, compute_us = 0, comm_us = 0, overlap_us = 0;
    double exposed_us = 0;  // communicating with no kernel computing
    double exposed_share = 0, comm_share = 0;  // of the step (comm_share: overlapped or not)
    double samples_per_s = 0;  // per chip
};
TrainStepFigures train_step_figures(const TrainSetup& ts, const TrainStepRun& run, int64_t batch);

// summary.json's `train` section: the step's setup (ranks, batches, precision, optimizer, buckets,
// kernels, loss scaling, layout).
nlohmann::json train_json(const TrainSetup& ts, uint32_t ranks, int64_t batch, const std::string& precision, double lr);

// The run's summary.json sections: memory_plan (with rank 0's device allocator peaks), the
// figures (step_us, step_cycles, compute_us, ...), step_records, ranks_simulated, simulate, links
// over the step and check. The caller adds the model, `train`, its wall time, re-use and energy.
nlohmann::json train_step_json(const sys::SystemRun& s, const TrainSetup& ts, const TrainStepRun& run, uint32_t ranks,
                               int64_t batch);

}  // namespace sfumato::graph
