// The shared figures and summary blocks of an LLM run (see summary.h).
#include "runtime/llm/summary.h"

#include "runtime/llm/safetensors.h"
#include "sim/error.h"

namespace sfumato::llm {

namespace {
double ms(uint64_t ps) { return static_cast<double>(ps) / 1e9; }
}  // namespace

Figures figures(const PhaseTotals& p, int64_t batch) {
    Figures f;
    f.ttft_ms = ms(p.prefill_ps);
    f.prefill_steps = p.prefill_steps;
    uint64_t sum = 0;
    for (uint64_t ps : p.decode_ps) {
        sum += ps;
        f.step_ms.push_back(ms(ps));
    }
    if (!f.step_ms.empty()) {
        f.tpot_ms = ms(sum) / static_cast<double>(f.step_ms.size());
        if (f.tpot_ms > 0) f.tokens_per_s = static_cast<double>(batch) * 1e3 / f.tpot_ms;
    }
    return f;
}

nlohmann::json model_json(const ModelConfig& c, Quant quant) {
    return {{"name", c.name},
            {"architecture", arch_name(c.arch)},
            {"params", c.params()},
            {"dtype", c.torch_dtype},
            {"quant", quant_name(quant)}};
}

nlohmann::json request_json(const RunOptions& o, size_t prefill_steps) {
    return {{"batch", o.batch},
            {"prefill", o.prefill},
            {"decode", o.decode},
            {"block_size", o.block_size},
            {"max_prefill_tokens", o.max_prefill_tokens},
            {"prefill_steps", prefill_steps}};
}

nlohmann::json memory_json(const MemoryPlan& m, int64_t chip, const std::string& reserved_key) {
    nlohmann::json j;
    if (chip >= 0) j["chip"] = chip;
    j["capacity"] = m.capacity;
    j["weights"] = m.weights;
    j["kv"] = m.kv;
    j["kv_blocks"] = m.kv_blocks;
    j["kv_blocks_needed"] = m.kv_blocks_needed;
    j["activations"] = m.activations;
    if (!reserved_key.empty()) j[reserved_key] = m.reserved;
    j["free"] = m.free;
    return j;
}

void add_figures(nlohmann::json& j, const Figures& f) {
    j["ttft_ms"] = f.ttft_ms;
    j["decode_step_ms"] = f.step_ms;
    j["tpot_ms"] = f.tpot_ms;
    j["decode_tokens_per_s"] = f.tokens_per_s;
}

nlohmann::json share_json(const RankCollectives::Share& s, const std::string& calls_key) {
    return {{"share", s.share()}, {"comm_ms", ms(s.comm_ps)}, {"step_ms", ms(s.step_ps)}, {calls_key, s.calls},
            {"bytes", s.bytes}};
}

ModelWeights host_weights(const ModelConfig& c, uint64_t seed, bool functional, const std::string& path) {
    if (!functional) {
        if (!path.empty()) throw InputError("--weights needs functional mode (timing mode moves no data)");
        return {};
    }
    return path.empty() ? random_weights(c, seed) : load_weights(c, Safetensors::read_file(path));
}

}  // namespace sfumato::llm
