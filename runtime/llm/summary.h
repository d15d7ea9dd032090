// What an LLM run reports, built once for every host program (one chip, --tp, --pp, --ep): the
// figures of a run's steps (TTFT, decode step times, TPOT, tokens/s) and the JSON blocks of
// summary.json's `llm` section that every form shares (model, request, memory plan, figures,
// a collective's share of the step time). Also the weights a run needs from its mode: functional
// runs draw random weights from the seed or load a safetensors file, timing runs move no data and
// take none. The CLI prints from these; a user's C++ program gets the same summary.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runtime/llm/engine.h"
#include "runtime/llm/parallel.h"

namespace sfumato::llm {

// A phase's figures: TTFT is the prefill steps' time (no queueing), TPOT the mean decode step.
struct Figures {
    double ttft_ms = 0, tpot_ms = 0;
    double tokens_per_s = 0;  // decode throughput: batch tokens per mean decode step
    size_t prefill_steps = 0;
    std::vector<double> step_ms;  // each decode step
};
Figures figures(const PhaseTotals& p, int64_t batch);

nlohmann::json model_json(const ModelConfig& c, Quant quant);
nlohmann::json request_json(const RunOptions& o, size_t prefill_steps);
// One chip's memory plan; `chip` < 0 leaves the chip out; `reserved_key` names what the reserved
// bytes hold in this form ("collective_buffers", ...; empty: not written).
nlohmann::json memory_json(const MemoryPlan& m, int64_t chip, const std::string& reserved_key);
// ttft_ms, decode_step_ms, tpot_ms, decode_tokens_per_s, merged into `j`.
void add_figures(nlohmann::json& j, const Figures& f);
// A collective's share of a phase on one chip; `calls_key` names its calls ("all_reduces", ...).
nlohmann::json share_json(const RankCollectives::Share& s, const std::string& calls_key);

// The weights of a `functional` run (random from `seed`, or the safetensors file `path` when not
// empty; the caller points RunOptions::weights at them); none for a timing run, and InputError
// when a timing run is given a weights file (it moves no data).
ModelWeights host_weights(const ModelConfig& c, uint64_t seed, bool functional, const std::string& path);

}  // namespace sfumato::llm
