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

#include "cli/reuse_option.h"
#include "cli/system_session.h"
#include "isa/text.h"
#include "runtime/llm/parallel.h"
#include "runtime/llm/pipeline.h"
#include "sim/error.h"

namespace sfumato::cli {

namespace {

double ms(uint64_t ps) { return static_cast<double>(ps) / 1e9; }
double gib(uint64_t b) { return static_cast<double>(b) / (1ull << 30); }
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

void print_steps(const std::vector<double>& step_ms, double tpot, int64_t batch) {
    if (step_ms.empty()) return;
    std::printf("  decode steps (ms):");
    for (size_t i = 0; i < step_ms.size(); ++i)
        if (i < 8 || i + 4 >= step_ms.size())
            std::printf(" %.3f", step_ms[i]);
        else if (i == 8)
            std::printf(" ...");
    std::printf(
        "\n  TPOT (mean decode step): %.3f ms; decode throughput %.1f "
        "tokens/s (batch %lld)\n",
        tpot, static_cast<double>(batch) * 1e3 / tpot, static_cast<long long>(batch));
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
    for (uint32_t i = 0; i < run.chips(); ++i) {
        const llm::MemoryPlan& m = run.chip(i).memory();
        mem.push_back({{"chip", i},
                       {"capacity", m.capacity},
                       {"weights", m.weights},
                       {"kv", m.kv},
                       {"kv_blocks", m.kv_blocks},
                       {"kv_blocks_needed", m.kv_blocks_needed},
                       {"activations", m.activations},
                       {"transfer_and_collective_buffers", m.reserved},
                       {"free", m.free}});
    }
    return mem;
}

struct Figures {
    double ttft_ms = 0, tpot_ms = 0;
    std::vector<double> step_ms;
};

Figures figures(const llm::RunTotals& tot) {
    Figures f;
    f.ttft_ms = ms(tot.eager.prefill_ps);
    double sum = 0;
    for (uint64_t ps : tot.eager.decode_ps) {
        f.step_ms.push_back(ms(ps));
        sum += ms(ps);
    }
    f.tpot_ms = f.step_ms.empty() ? 0 : sum / static_cast<double>(f.step_ms.size());
    return f;
}

void print_run(const LlmPpRequest& q, SystemSession& s, const llm::PpRun& run, const Figures& f,
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
    std::printf("  TTFT (prefill, no queueing): %.3f ms\n", f.ttft_ms);
    print_steps(f.step_ms, f.tpot_ms, ro.batch);
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

nlohmann::json summary_llm(const LlmPpRequest& q, const llm::PpRun& run, const Figures& f,
                           const llm::RunOptions& ro, bool functional) {
    const llm::ModelConfig& c = run.model();
    nlohmann::json j;
    j["model"] = {{"name", c.name},
                  {"architecture", llm::arch_name(c.arch)},
                  {"params", c.params()},
                  {"dtype", c.torch_dtype}};
    j["request"] = {{"batch", ro.batch},
                    {"prefill", ro.prefill},
                    {"decode", ro.decode},
                    {"block_size", ro.block_size},
                    {"max_prefill_tokens", ro.max_prefill_tokens}};
    nlohmann::json mbs = nlohmann::json::array();
    for (const auto& mb : run.microbatches()) mbs.push_back(mb.size());
    j["parallel"] = {{"pp", q.pp},
                     {"tp", q.tp},
                     {"simulate", run.mirrored() ? "one" : "all"},
                     {"microbatches", mbs},
                     {"receive_buffer_bytes", run.recv_bytes()}};
    j["stages"] = stages_json(run);
    j["memory"] = memory_json(run);
    j["ttft_ms"] = f.ttft_ms;
    j["decode_step_ms"] = f.step_ms;
    j["tpot_ms"] = f.tpot_ms;
    j["decode_tokens_per_s"] = f.tpot_ms > 0 ? static_cast<double>(ro.batch) * 1e3 / f.tpot_ms : 0;
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
    if (q.simulate != "auto" && q.simulate != "all" && q.simulate != "one")
        throw InputError("--simulate must be auto, all or one, not '" + q.simulate + "'");
    if (q.simulate == "one" && s.functional())
        throw InputError("--simulate one needs timing mode (functional mode computes every chip's values)");
    p.mirror = q.simulate == "one" || (q.simulate == "auto" && !s.functional());
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
    llm::ModelWeights weights;
    if (s.functional()) {
        weights = q.weights_path.empty()
                      ? llm::random_weights(q.model, ro.seed)
                      : llm::load_weights(q.model, llm::Safetensors::read_file(q.weights_path));
        ro.weights = &weights;
    } else if (!q.weights_path.empty()) {
        throw InputError("--weights needs functional mode (timing mode moves no data)");
    }
    const llm::PpOptions p = pp_options(q, s);
    const uint32_t n = q.pp * q.tp;
    std::vector<DeviceInfo> infos;
    std::vector<uint32_t> ids;
    for (uint32_t i = 0; i < n; ++i) {
        infos.push_back(s.system().chip(i).info());
        ids.push_back(i);
    }
    llm::PpRun run(q.model, ro, p, infos);
    std::vector<std::unique_ptr<comm::Communicator>> comms;
    if (q.tp > 1)
        for (uint32_t st = 0; st < q.pp; ++st) {
            std::vector<rt::Device*> devs;
            for (uint32_t r = 0; r < q.tp; ++r) devs.push_back(&s.device(st * q.tp + r));
            comms.push_back(std::make_unique<comm::Communicator>(s.system().info(), devs, s.comm_params()));
        }
    s.run(ids, [&](uint32_t i, rt::Context& ctx) {
        run.run_chip(i, s.device(i), ctx, q.tp > 1 ? comms[i / q.tp].get() : nullptr);
    });
    const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();

    const Figures f = figures(llm::run_totals(run.steps(), false));
    print_run(q, s, run, f, ro);
    const reuse::ReuseCounters rc = run.reuse_counters();
    print_reuse(p.reuse, rc);
    std::printf("  wall %.1f s\n", wall_s);

    nlohmann::json summary = s.base_summary();
    nlohmann::json& j = summary["llm"];
    j = summary_llm(q, run, f, ro, s.functional());
    j["wall_s"] = wall_s;
    summary["reuse_timing"] = reuse_json(p.reuse, rc);
    j["reuse_timing"] = summary["reuse_timing"];
    if (!run.steps().empty())
        summary["links"] =
            s.links_json(run.steps().front().begin_ps, run.steps().back().begin_ps + run.steps().back().ps);
    s.write_outputs(summary);
    if (!q.common.out.empty())
        std::printf("  wrote %s/{summary.json,trace.json,stats.h5}\n", q.common.out.c_str());
    if (s.functional() && !run.ranks_agree()) return kExitFailure;
    return kExitOk;
}

}  // namespace sfumato::cli
