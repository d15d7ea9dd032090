// The LLM's several-chip host programs on a system of chips (runtime/system/system_run.h), as a
// library: tensor parallel (parallel.h), a pipeline of stages with TP inside each (pipeline.h) and
// expert parallel (expert_parallel.h), each over chips 0..n-1 of the system with one host program
// per chip, and summary.json's `llm` section of each. `sfumato llm --system F --tp/--pp/--ep`
// (cli/llm_{tp,pp,ep}.cpp) parses, calls these and prints; a user's C++ program does the same:
//
//   sys::SystemRun s(system, host_params, &trace, stats_root);    // system: models/link's System
//   llm::check_tp(s, t.tp);                                      // before loading weights
//   auto run = llm::run_tp(s, model, ro, t, comm_params);
//   ... run->steps(), llm::tp_json(*run, ro, figures, functional) ...
#pragma once
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "runtime/comm/communicator.h"
#include "runtime/llm/expert_parallel.h"
#include "runtime/llm/parallel.h"
#include "runtime/llm/path_bound.h"
#include "runtime/llm/pipeline.h"
#include "runtime/llm/summary.h"
#include "runtime/system/system_run.h"

namespace sfumato::llm {

// Chips 0..n-1 of the system: their descriptions, devices and ids.
struct ChipSet {
    std::vector<DeviceInfo> infos;
    std::vector<rt::Device*> devices;
    std::vector<uint32_t> ids;
};
ChipSet first_chips(sys::SystemRun& s, uint32_t n);

// InputError when the system has too few chips for the degree (call before loading weights).
void check_tp(const sys::SystemRun& s, int64_t tp);
void check_pp(const sys::SystemRun& s, int64_t pp, int64_t tp);
void check_ep(const sys::SystemRun& s, int64_t ep);

// The runs (check_* first; the plans' own InputErrors), run to completion on the system.
// ro.weights: the full model's host weights in functional mode (host_weights).
std::unique_ptr<TpRun> run_tp(sys::SystemRun& s, const ModelConfig& c, const RunOptions& ro, const TpOptions& t,
                              const comm::CommParams& cp);
std::unique_ptr<PpRun> run_pp(sys::SystemRun& s, const ModelConfig& c, const RunOptions& ro, const PpOptions& p,
                              const comm::CommParams& cp);
std::unique_ptr<EpRun> run_ep(sys::SystemRun& s, const ModelConfig& c, const RunOptions& ro, const EpOptions& e);

// summary.json's `llm` section of each form: model, request, parallel, memory, the figures,
// communication shares (TP, EP) or stages (PP), tokens, and ranks_agree in functional mode.
nlohmann::json tp_json(const TpRun& run, const RunOptions& ro, const Figures& f, bool functional);
nlohmann::json pp_json(const PpRun& run, const RunOptions& ro, const Figures& f, bool functional);
nlohmann::json ep_json(const EpRun& run, const RunOptions& ro, const Figures& f);

// Re-use's bound propagated along the critical path across the chips, as fractions of TTFT and
// TPOT (reuse_timing's ttft_error_bound_fraction and tpot_error_bound_fraction; null when the
// path is not known).
struct PathFractions {
    bool known = false;
    double ttft = 0, tpot = 0;
};
PathFractions path_fractions(const std::vector<StepRecord>& steps, const PathBound& path);

}  // namespace sfumato::llm
