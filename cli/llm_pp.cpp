// `sfumato llm MODEL --system F --pp M [--tp T] ...`: the LLM run as a pipeline
// of M stages on M chips (or M groups of T chips, tensor parallel inside a
// stage) of a system (runtime/llm/pipeline.h). Builds the system
// (cli/system_session.h), one communicator per stage when T > 1, hands the
// request to llm::PpRun (one host program per chip, each with its own timing
// re-use service) and prints the stages, each chip's memory plan, TTFT, the
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
#include "sim/error.h"

namespace sfumato::cli {

namespace {

double pct(uint64_t a, uint64_t b) {
    return b ? 100.0 * static_cast<double>(a) / static_cast<double>(b) : 0.0;
}

nlohmann::json share_json(const llm::PpRun::Share& s) {
    return {{"window_ms", ms(s.window_ps)},
            {"busy_ms", ms(s.busy_ps)},
            {"comm_ms", ms(s.comm_ps)},
            {"bubble_ms", ms(s.idle_ps)},
            {"busy_share", pct(s.busy_ps, s.window_ps) / 100},
            {"comm_share", pct(s.comm_ps, s.window_ps) / 100},
            {"bubble_share", pct(s.idle_ps, s.window_ps) / 100},
            {"sent_bytes", s.sent_bytes},
            {"sends", s.sends},
            {"all_reduces", s.all_reduces}};
}

// Each chip's stage, memory plan and shares, printed and as summary.json's `stages` and `memory`.
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

nlohmann::json stages_json(const llm::PpRun& run) {
    nlohmann::json stages = nlohmann::json::array();
    for (uint32_t i = 0; i < run.chips(); ++i) {
        const llm::LlmRun& r = run.chip(i);
        const llm::PpRun::ChipShare sh = run.share(i);
        std::vector<double> busy;
        for (uint64_t b : sh.busy_per_decode_step) busy.push_back(ms(b));
        stages.push_back({{"chip", i},
                          {"stage", i / run.tp()},
                          {"rank", i % run.tp()},
                          {"first_layer", r.first_layer()},
                          {"end_layer", r.end_layer()},
                          {"prefill", share_json(sh.prefill)},
                          {"decode", share_json(sh.decode)},
                          {"decode_step_busy_ms", busy}});
    }
    return stages;
}

nlohmann::json memory_json(const llm::PpRun& run) {
    nlohmann::json mem = nlohmann::json::array();
    for (uint32_t i = 0; i < run.chips(); ++i)
        mem.push_back(llm::memory_json(run.chip(i).memory(), i, "transfer_and_collective_buffers"));
    return mem;
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
            "  kernels simulated on rank 0 of each stage only: its TP ranks run the same shard shapes on one "
            "chip config (identical), so their streams follow rank 0's (a notify before each all-reduce; "
            "their busy share shows 0) and each runs its part of every all-reduce and its own sends "
            "(--simulate all: every chip's kernels)\n");
}

nlohmann::json summary_llm(const LlmPpRequest& q, const llm::PpRun& run, const llm::Figures& f,
                           const llm::RunOptions& ro, bool functional) {
    const llm::ModelConfig& c = run.model();
    nlohmann::json j;
    j["model"] = llm::model_json(c, ro.quant);
    j["request"] = llm::request_json(ro, f.prefill_steps);
    nlohmann::json mbs = nlohmann::json::array();
    for (const auto& mb : run.microbatches()) mbs.push_back(mb.size());
    j["parallel"] = {{"pp", q.pp},
                     {"tp", q.tp},
                     {"simulate", run.mirrored() ? "one" : "all"},
                     {"microbatches", mbs},
                     {"receive_buffer_bytes", run.recv_bytes()}};
    j["stages"] = stages_json(run);
    j["memory"] = memory_json(run);
    llm::add_figures(j, f);
    j["tokens"] = run.tokens();
    if (functional) j["ranks_agree"] = run.ranks_agree();
    return j;
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
    const uint32_t chips = s.system().size();
    if (q.pp < 1 || q.tp < 1 || static_cast<uint64_t>(q.pp) * q.tp > chips)
        throw InputError("llm --pp " + std::to_string(q.pp) + " --tp " + std::to_string(q.tp) + ": " +
                         std::to_string(static_cast<uint64_t>(q.pp) * q.tp) +
                         " chips needed, the system has " + std::to_string(chips));
    llm::RunOptions ro = q.run;
    const llm::ModelWeights weights = llm::host_weights(q.model, ro.seed, s.functional(), q.weights_path);
    if (s.functional()) ro.weights = &weights;
    const llm::PpOptions p = pp_options(q, s);
    const uint32_t n = q.pp * q.tp;
    const ChipSet cs = first_chips(s, n);
    llm::PpRun run(q.model, ro, p, cs.infos);
    std::vector<std::unique_ptr<comm::Communicator>> comms;
    if (q.tp > 1)
        for (uint32_t st = 0; st < q.pp; ++st) {
            std::vector<rt::Device*> devs;
            for (uint32_t r = 0; r < q.tp; ++r) devs.push_back(&s.device(st * q.tp + r));
            comms.push_back(std::make_unique<comm::Communicator>(s.system().info(), devs, s.comm_params()));
        }
    s.run(cs.ids, [&](uint32_t i, rt::Context& ctx) {
        run.run_chip(i, s.device(i), ctx, q.tp > 1 ? comms[i / q.tp].get() : nullptr);
    });
    const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();

    const llm::Figures f = llm::figures(llm::run_totals(run.steps(), false).eager, ro.batch);
    print_run(q, s, run, f, ro);
    nlohmann::json summary = s.base_summary();
    summary["llm"] = summary_llm(q, run, f, ro, s.functional());
    finish_llm_run(s, summary, run.steps(), p.reuse, run.reuse_counters(), wall_s, q.common.out);
    if (s.functional() && !run.ranks_agree()) return kExitFailure;
    return kExitOk;
}

}  // namespace sfumato::cli
