// `sfumato llm MODEL --system F --tp N ...`: the LLM run on N chips of a
// system, tensor parallel (runtime/llm/parallel.h). Builds the system
// (cli/system_session.h), hands the request to llm::run_tp
// (runtime/llm/system_parallel.h: a communicator over chips 0..N-1, one host
// program per chip, each with its own timing re-use service), and prints the per-chip memory plan, TTFT, the decode steps, TPOT,
// tokens/s and each chip's communication share (time its all-reduces run / its
// step time), in the summary and in summary.json's `llm` section (with the
// links' counters). Simplified: no per-op table here yet (the single-chip run
// prints one).
#include "cli/llm_tp.h"

#include <chrono>
#include <cstdio>

#include "cli/llm_common.h"
#include "cli/reuse_option.h"
#include "cli/system_session.h"
#include "isa/text.h"
#include "runtime/llm/parallel.h"
#include "runtime/llm/system_parallel.h"
#include "runtime/llm/summary.h"
#include "sim/error.h"

namespace sfumato::cli {

namespace {

void print_run(SystemSession& s, const llm::TpRun& run, const llm::RunOptions& ro, uint32_t tp) {
    const llm::ModelConfig& c = run.model();
    const llm::ModelConfig& sh = run.shard();
    const llm::MemoryPlan& m = run.rank(0).memory();
    std::printf(
        "llm %s (%s, %.2f B parameters, %s) on %s: tensor parallel over "
        "%u of %u chips, %s mode\n",
        c.name.c_str(), llm::arch_name(c.arch), static_cast<double>(c.params()) / 1e9, c.torch_dtype.c_str(),
        s.system_params().name.get().c_str(), tp, s.system().size(), s.mode().c_str());
    std::printf(
        "  per chip: %lld of %lld heads, %lld of %lld KV heads%s, MLP "
        "%lld of %lld; embedding, norms and LM head "
        "replicated; an all-reduce after o_proj and after down_proj\n",
        static_cast<long long>(sh.num_heads), static_cast<long long>(c.num_heads),
        static_cast<long long>(sh.num_kv_heads), static_cast<long long>(c.num_kv_heads),
        run.kv_replicated() ? " (replicated)" : "", static_cast<long long>(sh.intermediate_size),
        static_cast<long long>(c.intermediate_size));
    std::printf("  request: batch %lld, prefill %lld tokens, %lld decode steps\n",
                static_cast<long long>(ro.batch), static_cast<long long>(ro.prefill),
                static_cast<long long>(ro.decode));
    std::printf(
        "  memory plan per chip (every chip the same): capacity %.2f GiB "
        "= weights %.2f + KV cache %.2f (%lld "
        "blocks of %lld tokens, %lld needed) + activations %.2f + "
        "collective buffers %.2f + free %.2f\n",
        gib(m.capacity), gib(m.weights), gib(m.kv), static_cast<long long>(m.kv_blocks),
        static_cast<long long>(ro.block_size), static_cast<long long>(m.kv_blocks_needed), gib(m.activations),
        gib(m.reserved), gib(m.free));
}

// Each chip's communication share (summary.json's `communication`, llm::tp_json).
void print_shares(const llm::TpRun& run, uint32_t tp) {
    std::printf(
        "  communication share per chip (time its all-reduces run / its "
        "step time):\n");
    for (uint32_t r = 0; r < tp; ++r) {
        const llm::TpRun::RankShare sr = run.comm_share(r);
        std::printf(
            "    chip %u: prefill %.1f %% (%zu all-reduces, %.1f MB), "
            "decode %.1f %% (%zu all-reduces, %.1f MB)\n",
            r, 100 * sr.prefill.share(), sr.prefill.calls, static_cast<double>(sr.prefill.bytes) / 1e6,
            100 * sr.decode.share(), sr.decode.calls, static_cast<double>(sr.decode.bytes) / 1e6);
    }
}

}  // namespace

int run_llm_tp(const LlmTpRequest& q) {
    const auto wall0 = std::chrono::steady_clock::now();
    SystemSession s(q.common, q.system_file, text::join("sfumato llm", q.args));
    s.elaborate();
    llm::check_tp(s.host(), q.tp);
    llm::RunOptions ro = q.run;
    const llm::ModelWeights weights = llm::host_weights(q.model, ro.seed, s.functional(), q.weights_path);
    if (s.functional()) ro.weights = &weights;
    llm::TpOptions t;
    t.tp = q.tp;
    t.reuse = reuse_options(q.reuse, s.functional(), false, s.chip_params());
    t.comm_buffer_bytes = s.comm_params().buffer_bytes;
    t.mirror = simulate_one(q.simulate, s.functional());
    const std::unique_ptr<llm::TpRun> rp = llm::run_tp(s.host(), q.model, ro, t, s.comm_params());
    const llm::TpRun& run = *rp;
    const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();

    const llm::Figures f = llm::figures(llm::run_totals(run.steps(), false).eager, ro.batch);
    print_run(s, run, ro, q.tp);
    print_figures(f, ro.batch, true);
    print_shares(run, q.tp);
    if (run.mirrored())
        std::printf(
            "  APPROXIMATION --simulate one: kernels simulated on chip 0 only; chips 1..%u follow chip 0's "
            "stream (a notify before each all-reduce, a link latency late) and each runs its part of every "
            "all-reduce (--simulate all, the default: every chip's kernels)\n",
            q.tp - 1);
    if (s.functional())
        std::printf("  tokens: every chip sampled the same tokens: %s\n", run.ranks_agree() ? "yes" : "NO");

    nlohmann::json summary = s.base_summary();
    summary["llm"] = llm::tp_json(run, ro, f, s.functional());
    const llm::PathBound path = run.path_bound();
    finish_llm_run(s, summary, run.steps(), t.reuse, run.reuse_counters(), wall_s, q.common.out, &path);
    if (s.functional() && !run.ranks_agree()) return kExitFailure;
    return kExitOk;
}

}  // namespace sfumato::cli
