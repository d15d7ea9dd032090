// `sfumato llm MODEL --system F --ep E ...`: an MoE model's run on E chips of a
// system, expert parallel (runtime/llm/expert_parallel.h). Builds the system
// (cli/system_session.h), hands the request to llm::run_ep
// (runtime/llm/system_parallel.h: one host program per chip, each with its own
// timing re-use service) and prints the per-chip memory
// plan, TTFT, the decode steps, TPOT, tokens/s, each chip's communication share
// (time its dispatches and combines run / its step time) and the rows its
// dispatches sent, in the summary and in summary.json's `llm` section (with the
// links' counters). Simplified: no per-op table (the single-chip run prints
// one).
#include "cli/llm_ep.h"

#include <chrono>
#include <cstdio>

#include "cli/llm_common.h"
#include "cli/reuse_option.h"
#include "cli/system_session.h"
#include "isa/text.h"
#include "runtime/llm/expert_parallel.h"
#include "runtime/llm/summary.h"
#include "runtime/llm/system_parallel.h"
#include "sim/error.h"

namespace sfumato::cli {

namespace {

void print_run(SystemSession& s, const llm::EpRun& run, const llm::RunOptions& ro, uint32_t n) {
    const llm::ModelConfig& c = run.model();
    const llm::MemoryPlan& m = run.rank(0).memory();
    std::printf("llm %s (%s, %.2f B parameters, %s) on %s: expert parallel over %u of %u chips, %s mode\n",
                c.name.c_str(), llm::arch_name(c.arch), static_cast<double>(c.params()) / 1e9,
                c.torch_dtype.c_str(), s.system_params().name.get().c_str(), n, s.system().size(),
                s.mode().c_str());
    std::printf(
        "  per chip: %lld of %lld experts (top-%lld routing); attention data parallel over the batch (%lld "
        "sequences per chip), attention, router, embedding and LM head replicated; all-to-all dispatch and "
        "combine of the routed rows in every MoE layer\n",
        static_cast<long long>(run.shard().num_experts), static_cast<long long>(c.num_experts),
        static_cast<long long>(c.experts_per_token), static_cast<long long>(ro.batch / n));
    std::printf("  request: batch %lld, prefill %lld tokens, %lld decode steps\n",
                static_cast<long long>(ro.batch), static_cast<long long>(ro.prefill),
                static_cast<long long>(ro.decode));
    std::printf(
        "  memory plan of chip 0 (every chip the same): capacity %.2f GiB = weights %.2f + KV cache %.2f (%lld "
        "blocks of %lld tokens, %lld needed) + activations %.2f + dispatch window %.2f + free %.2f\n",
        gib(m.capacity), gib(m.weights), gib(m.kv), static_cast<long long>(m.kv_blocks),
        static_cast<long long>(ro.block_size), static_cast<long long>(m.kv_blocks_needed), gib(m.activations),
        gib(m.reserved), gib(m.free));
}

// Each chip's communication share and dispatched rows (summary.json's `communication`,
// llm::ep_json).
void print_shares(const llm::EpRun& run, uint32_t n) {
    std::printf("  communication share per chip (time its dispatches and combines run / its step time):\n");
    for (uint32_t r = 0; r < n; ++r) {
        const llm::EpRun::RankShare sr = run.comm_share(r);
        const llm::EpRun::Rows rows = run.dispatched_rows(r);
        std::printf(
            "    chip %u: prefill %.1f %%, decode %.1f %% (%zu + %zu exchanges); dispatched %llu rows to other "
            "chips (%.1f MB each way), %llu to its own experts\n",
            r, 100 * sr.prefill.share(), 100 * sr.decode.share(), sr.prefill.calls, sr.decode.calls,
            static_cast<unsigned long long>(rows.remote), static_cast<double>(rows.remote * run.row_bytes()) / 1e6,
            static_cast<unsigned long long>(rows.local));
    }
}

}  // namespace

int run_llm_ep(const LlmTpRequest& q) {
    const auto wall0 = std::chrono::steady_clock::now();
    SystemSession s(q.common, q.system_file, text::join("sfumato llm", q.args));
    s.elaborate();
    const uint32_t n = q.tp;
    llm::check_ep(s.host(), n);
    if (q.simulate == "one")
        throw InputError("--simulate one does not apply to --ep (each chip routes its own tokens: the chips differ)");
    if (q.simulate != "auto" && q.simulate != "all")
        throw InputError("--simulate must be auto, all or one, not '" + q.simulate + "'");
    llm::RunOptions ro = q.run;
    llm::ep_shard_config(q.model, n);  // a dense model or an indivisible expert count: before any weights
    const llm::ModelWeights weights = llm::host_weights(q.model, ro.seed, s.functional(), q.weights_path);
    if (s.functional()) ro.weights = &weights;
    llm::EpOptions e;
    e.ep = n;
    e.reuse = reuse_options(q.reuse, s.functional(), false, s.chip_params());
    const std::unique_ptr<llm::EpRun> rp = llm::run_ep(s.host(), q.model, ro, e);
    const llm::EpRun& run = *rp;
    const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();

    const llm::Figures f = llm::figures(llm::run_totals(run.steps(), false).eager, ro.batch);
    print_run(s, run, ro, n);
    print_figures(f, ro.batch, true);
    print_shares(run, n);

    nlohmann::json summary = s.base_summary();
    summary["llm"] = llm::ep_json(run, ro, f);
    const llm::PathBound path = run.path_bound();
    finish_llm_run(s, summary, run.steps(), e.reuse, run.reuse_counters(), wall_s, q.common.out, &path);
    return kExitOk;
}

}  // namespace sfumato::cli
