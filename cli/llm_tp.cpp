// `sfumato llm MODEL --system F --tp N ...`: the LLM run on N chips of a
// system, tensor parallel (runtime/llm/parallel.h). Builds the system
// (cli/system_session.h), a communicator over chips 0..N-1, hands the request
// to llm::TpRun (one host program per chip, each with its own timing re-use
// service), and prints the per-chip memory plan, TTFT, the decode steps, TPOT,
// tokens/s and each chip's communication share (time its all-reduces run / its
// step time), in the summary and in summary.json's `llm` section (with the
// links' counters). Simplified: no per-op table here yet (the single-chip run
// prints one).
#include "cli/llm_tp.h"

#include <chrono>
#include <cstdio>

#include "cli/reuse_option.h"
#include "cli/system_session.h"
#include "isa/text.h"
#include "runtime/llm/parallel.h"
#include "sim/error.h"

namespace sfumato::cli {

namespace {

double ms(uint64_t ps) { return static_cast<double>(ps) / 1e9; }
double gib(uint64_t b) { return static_cast<double>(b) / (1ull << 30); }

nlohmann::json share_json(const llm::RankCollectives::Share& s) {
    return {{"share", s.share()},
            {"comm_ms", ms(s.comm_ps)},
            {"step_ms", ms(s.step_ps)},
            {"all_reduces", s.calls},
            {"bytes", s.bytes}};
}

}  // namespace

int run_llm_tp(const LlmTpRequest& q) {
    const auto wall0 = std::chrono::steady_clock::now();
    SystemSession s(q.common, q.system_file, text::join("sfumato llm", q.args));
    s.elaborate();
    const uint32_t chips = s.system().size();
    if (q.tp < 1 || q.tp > chips)
        throw InputError("llm --tp " + std::to_string(q.tp) + ": the system has " + std::to_string(chips) +
                         " chips");
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
    llm::TpOptions t;
    t.tp = q.tp;
    t.reuse = reuse_options(q.reuse, s.functional(), false, s.chip_params());
    t.comm_buffer_bytes = s.comm_params().buffer_bytes;
    if (q.simulate != "auto" && q.simulate != "all" && q.simulate != "one")
        throw InputError("--simulate must be auto, all or one, not '" + q.simulate + "'");
    if (q.simulate == "one" && s.functional())
        throw InputError(
            "--simulate one needs timing mode (functional mode "
            "computes every chip's values)");
    t.mirror = q.simulate == "one" || (q.simulate == "auto" && !s.functional());
    std::vector<DeviceInfo> infos;
    std::vector<rt::Device*> devs;
    std::vector<uint32_t> ids;
    for (uint32_t i = 0; i < q.tp; ++i) {
        infos.push_back(s.system().chip(i).info());
        devs.push_back(&s.device(i));
        ids.push_back(i);
    }
    llm::TpRun run(q.model, ro, t, infos);
    std::unique_ptr<comm::Communicator> comm;
    if (q.tp > 1) comm = std::make_unique<comm::Communicator>(s.system().info(), devs, s.comm_params());
    s.run(ids, [&](uint32_t r, rt::Context& ctx) { run.run_rank(r, s.device(r), ctx, comm.get()); });
    const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();

    const llm::ModelConfig& c = run.model();
    const llm::ModelConfig& sh = run.shard();
    const llm::MemoryPlan& m = run.rank(0).memory();
    const llm::RunTotals tot = llm::run_totals(run.steps(), false);
    uint64_t decode_ps = 0;
    std::vector<double> step_ms;
    for (uint64_t ps : tot.eager.decode_ps) {
        decode_ps += ps;
        step_ms.push_back(ms(ps));
    }
    const double tpot = step_ms.empty() ? 0 : ms(decode_ps) / static_cast<double>(step_ms.size());
    std::printf(
        "llm %s (%s, %.2f B parameters, %s) on %s: tensor parallel over "
        "%u of %u chips, %s mode\n",
        c.name.c_str(), llm::arch_name(c.arch), static_cast<double>(c.params()) / 1e9, c.torch_dtype.c_str(),
        s.system_params().name.get().c_str(), q.tp, chips, s.mode().c_str());
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
    nlohmann::json mem = nlohmann::json::array();
    for (uint32_t r = 0; r < q.tp; ++r) {
        const llm::MemoryPlan& p = run.rank(r).memory();
        mem.push_back({{"chip", r},
                       {"capacity", p.capacity},
                       {"weights", p.weights},
                       {"kv", p.kv},
                       {"kv_blocks", p.kv_blocks},
                       {"kv_blocks_needed", p.kv_blocks_needed},
                       {"activations", p.activations},
                       {"collective_buffers", p.reserved},
                       {"free", p.free}});
    }
    std::printf(
        "  memory plan per chip (every chip the same): capacity %.2f GiB "
        "= weights %.2f + KV cache %.2f (%lld "
        "blocks of %lld tokens, %lld needed) + activations %.2f + "
        "collective buffers %.2f + free %.2f\n",
        gib(m.capacity), gib(m.weights), gib(m.kv), static_cast<long long>(m.kv_blocks),
        static_cast<long long>(ro.block_size), static_cast<long long>(m.kv_blocks_needed), gib(m.activations),
        gib(m.reserved), gib(m.free));
    std::printf("  TTFT (prefill, no queueing): %.3f ms (%zu prefill step%s)\n", ms(tot.eager.prefill_ps),
                tot.eager.prefill_steps, tot.eager.prefill_steps == 1 ? "" : "s");
    if (!step_ms.empty()) {
        std::printf("  decode steps (ms):");
        for (size_t i = 0; i < step_ms.size(); ++i)
            if (i < 8 || i + 4 >= step_ms.size())
                std::printf(" %.3f", step_ms[i]);
            else if (i == 8)
                std::printf(" ...");
        std::printf(
            "\n  TPOT (mean decode step): %.3f ms; decode throughput %.1f "
            "tokens/s (batch %lld)\n",
            tpot, static_cast<double>(ro.batch) * 1e3 / tpot, static_cast<long long>(ro.batch));
    }
    std::printf(
        "  communication share per chip (time its all-reduces run / its "
        "step time):\n");
    nlohmann::json comm_j = nlohmann::json::array();
    for (uint32_t r = 0; r < q.tp; ++r) {
        const llm::TpRun::RankShare sr = run.comm_share(r);
        std::printf(
            "    chip %u: prefill %.1f %% (%zu all-reduces, %.1f MB), "
            "decode %.1f %% (%zu all-reduces, %.1f MB)\n",
            r, 100 * sr.prefill.share(), sr.prefill.calls, static_cast<double>(sr.prefill.bytes) / 1e6,
            100 * sr.decode.share(), sr.decode.calls, static_cast<double>(sr.decode.bytes) / 1e6);
        comm_j.push_back(
            {{"chip", r}, {"prefill", share_json(sr.prefill)}, {"decode", share_json(sr.decode)}});
    }
    if (run.mirrored())
        std::printf(
            "  kernels simulated on chip 0 only: chips 1..%u run the same shard "
            "shapes on one chip config "
            "(identical), so their streams follow chip 0's (a notify before each "
            "all-reduce) and each runs its "
            "part of every all-reduce (--simulate all: every chip's kernels)\n",
            q.tp - 1);
    if (s.functional())
        std::printf("  tokens: every chip sampled the same tokens: %s\n", run.ranks_agree() ? "yes" : "NO");
    const reuse::ReuseCounters rc = run.reuse_counters();
    print_reuse(t.reuse, rc);
    std::printf("  wall %.1f s\n", wall_s);

    nlohmann::json summary = s.base_summary();
    nlohmann::json& j = summary["llm"];
    j["model"] = {{"name", c.name},
                  {"architecture", llm::arch_name(c.arch)},
                  {"params", c.params()},
                  {"dtype", c.torch_dtype}};
    j["request"] = {{"batch", ro.batch},
                    {"prefill", ro.prefill},
                    {"decode", ro.decode},
                    {"block_size", ro.block_size},
                    {"max_prefill_tokens", ro.max_prefill_tokens},
                    {"prefill_steps", tot.eager.prefill_steps}};
    j["parallel"] = {{"tp", q.tp},
                     {"simulate", run.mirrored() ? "one" : "all"},
                     {"heads_per_chip", sh.num_heads},
                     {"kv_heads_per_chip", sh.num_kv_heads},
                     {"kv_heads_replicated", run.kv_replicated()},
                     {"intermediate_per_chip", sh.intermediate_size},
                     {"replicated", "embedding, norms, lm_head"}};
    j["memory"] = mem;
    j["ttft_ms"] = ms(tot.eager.prefill_ps);
    j["decode_step_ms"] = step_ms;
    j["tpot_ms"] = tpot;
    j["decode_tokens_per_s"] = tpot > 0 ? static_cast<double>(ro.batch) * 1e3 / tpot : 0;
    j["communication"] = comm_j;
    j["tokens"] = run.tokens();
    if (s.functional()) j["ranks_agree"] = run.ranks_agree();
    j["wall_s"] = wall_s;
    summary["reuse_timing"] = reuse_json(t.reuse, rc);
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
