// `sfumato llm MODEL --system F --pp M [--tp T] ...`: the LLM run as a pipeline
// of M stages on M chips (or M groups of T chips, tensor parallel inside a
// stage) of a system (runtime/llm/pipeline.h). Builds the system
// (cli/system_session.h), hands the request to llm::run_pp
// (runtime/llm/system_parallel.h: one communicator per stage when T > 1, one
// host program per chip, each with its own timing re-use service) and prints the stages, each chip's memory plan, TTFT, the
// decode steps, TPOT, tokens/s and, per chip and phase, the share of time its
// kernels ran (busy), its sends and all-reduces ran (communication) and neither
// (bubble), in the summary and in summary.json's `llm` section. Simplified: no
// per-op table (the single-chip run prints one).
#include "cli/llm_pp.h"

#include <chrono>
#include <cstdio>

#include "cli/llm_common.h"
#include "cli/reuse_option.h"
#include "cli/system_session.h"
#include "isa/text.h"
#include "runtime/llm/parallel.h"
#include "runtime/llm/pipeline.h"
#include "runtime/llm/summary.h"
#include "runtime/llm/system_parallel.h"
#include "sim/error.h"

namespace sfumato::cli {

namespace {

double pct(uint64_t a, uint64_t b) {
    return b ? 100.0 * static_cast<double>(a) / static_cast<double>(b) : 0.0;
}

// Each chip's stage, memory plan and shares (summary.json's `stages` and `memory`, llm::pp_json).
void print_stages(const llm::PpRun& run) {
    std::printf(
        "  stages (layers; memory plan in GiB: weights + KV + activations + receive/collective buffers + "
        "free):\n");
    for (uint32_t i = 0; i < run.chips(); ++i) {
        const llm::LlmRun& r = run.chip(i);
        const llm::MemoryPlan& m = r.memory();
        const llm::PpRun::ChipShare sh = run.share(i);
        std::printf(
            "    chip %u: stage %lld, layers %lld..%lld%s%s; %.2f = %.2f + %.2f (%lld blocks) + %.2f + %.2f "
            "+ "
            "free %.2f\n",
            i, static_cast<long long>(i / run.tp()), static_cast<long long>(r.first_layer()),
            static_cast<long long>(r.end_layer() - 1), r.first_layer() == 0 ? " + embedding" : "",
            r.has_head() ? " + final norm, LM head, sampling" : "", gib(m.capacity), gib(m.weights),
            gib(m.kv), static_cast<long long>(m.kv_blocks), gib(m.activations), gib(m.reserved), gib(m.free));
        const llm::PpRun::Share &a = sh.prefill, &b = sh.decode;
        std::printf(
            "      prefill: busy %.1f %%, communication %.1f %%, bubble %.1f %%; decode: busy %.1f %%, "
            "communication %.1f %%, bubble %.1f %%; sent %.2f MB (prefill) + %.2f MB (decode)\n",
            pct(a.busy_ps, a.window_ps), pct(a.comm_ps, a.window_ps), pct(a.idle_ps, a.window_ps),
            pct(b.busy_ps, b.window_ps), pct(b.comm_ps, b.window_ps), pct(b.idle_ps, b.window_ps),
            static_cast<double>(a.sent_bytes) / 1e6, static_cast<double>(b.sent_bytes) / 1e6);
    }
}

void print_run(const LlmPpRequest& q, SystemSession& s, const llm::PpRun& run, const llm::Figures& f,
               const llm::RunOptions& ro) {
    const llm::ModelConfig& c = run.model();
    const std::string tp = q.tp > 1 ? ", tensor parallel " + std::to_string(q.tp) + " inside each" : "";
    std::printf(
        "llm %s (%s, %.2f B parameters, %s) on %s: pipeline of %u stages%s, %zu of %u chips, %s mode\n",
        c.name.c_str(), llm::arch_name(c.arch), static_cast<double>(c.params()) / 1e9, c.torch_dtype.c_str(),
        s.system_params().name.get().c_str(), q.pp, tp.c_str(), run.chips(), s.system().size(),
        s.mode().c_str());
    std::printf("  request: batch %lld in %zu micro-batches (", static_cast<long long>(ro.batch),
                run.microbatches().size());
    for (size_t m = 0; m < run.microbatches().size(); ++m)
        std::printf("%s%zu", m ? ", " : "", run.microbatches()[m].size());
    std::printf(" sequences), prefill %lld tokens, %lld decode steps\n", static_cast<long long>(ro.prefill),
                static_cast<long long>(ro.decode));
    print_stages(run);
    print_figures(f, ro.batch, false);
    if (s.functional() && q.tp > 1)
        std::printf("  tokens: every rank of the last stage sampled the same tokens: %s\n",
                    run.ranks_agree() ? "yes" : "NO");
    if (run.mirrored())
        std::printf(
            "  APPROXIMATION --simulate one: kernels simulated on rank 0 of each stage only; its TP ranks' "
            "streams follow rank 0's (a notify before each all-reduce, a link latency late; their busy share "
            "shows 0) and each runs its part of every all-reduce and its own sends (--simulate all, the "
            "default: every chip's kernels)\n");
}

// The plan's options from the request and the session (--simulate resolved for the mode).
llm::PpOptions pp_options(const LlmPpRequest& q, SystemSession& s) {
    llm::PpOptions p;
    p.pp = q.pp;
    p.tp = q.tp;
    p.microbatches = q.microbatches;
    p.reuse = reuse_options(q.reuse, s.functional(), false, s.chip_params());
    p.comm_buffer_bytes = s.comm_params().buffer_bytes;
    p.mirror = simulate_one(q.simulate, s.functional());
    return p;
}

}  // namespace

int run_llm_pp(const LlmPpRequest& q) {
    const auto wall0 = std::chrono::steady_clock::now();
    SystemSession s(q.common, q.system_file, text::join("sfumato llm", q.args));
    s.elaborate();
    llm::check_pp(s.host(), q.pp, q.tp);
    llm::RunOptions ro = q.run;
    const llm::ModelWeights weights = llm::host_weights(q.model, ro.seed, s.functional(), q.weights_path);
    if (s.functional()) ro.weights = &weights;
    const llm::PpOptions p = pp_options(q, s);
    const std::unique_ptr<llm::PpRun> rp = llm::run_pp(s.host(), q.model, ro, p, s.comm_params());
    const llm::PpRun& run = *rp;
    const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();

    const llm::Figures f = llm::figures(llm::run_totals(run.steps(), false).eager, ro.batch);
    print_run(q, s, run, f, ro);
    nlohmann::json summary = s.base_summary();
    summary["llm"] = llm::pp_json(run, ro, f, s.functional());
    finish_llm_run(s, summary, run.steps(), p.reuse, run.reuse_counters(), wall_s, q.common.out);
    if (s.functional() && !run.ranks_agree()) return kExitFailure;
    return kExitOk;
}

}  // namespace sfumato::cli
