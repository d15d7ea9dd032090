// `sfumato llm MODEL --system F --ep E ...`: an MoE model's run on E chips of a
// system, expert parallel (runtime/llm/expert_parallel.h). Builds the system
// (cli/system_session.h), hands the request to llm::EpRun (one host program per
// chip, each with its own timing re-use service) and prints the per-chip memory
// plan, TTFT, the decode steps, TPOT, tokens/s, each chip's communication share
// (time its dispatches and combines run / its step time) and the rows its
// dispatches sent, in the summary and in summary.json's `llm` section (with the
// links' counters). Simplified: no per-op table (the single-chip run prints
// one).
#include "cli/llm_ep.h"

#include <chrono>
#include <cstdio>

#include "cli/reuse_option.h"
#include "cli/system_session.h"
#include "isa/text.h"
#include "runtime/llm/expert_parallel.h"
#include "sim/error.h"

namespace sfumato::cli {

namespace {

double ms(uint64_t ps) { return static_cast<double>(ps) / 1e9; }
double gib(uint64_t b) { return static_cast<double>(b) / (1ull << 30); }

nlohmann::json share_json(const llm::RankCollectives::Share &s) {
  return {{"share", s.share()},
          {"comm_ms", ms(s.comm_ps)},
          {"step_ms", ms(s.step_ps)},
          {"exchanges", s.calls},
          {"bytes", s.bytes}};
}

nlohmann::json memory_json(const llm::EpRun &run, uint32_t n) {
  nlohmann::json mem = nlohmann::json::array();
  for (uint32_t r = 0; r < n; ++r) {
    const llm::MemoryPlan &p = run.rank(r).memory();
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
  return mem;
}

} // namespace

int run_llm_ep(const LlmTpRequest &q) {
  const auto wall0 = std::chrono::steady_clock::now();
  SystemSession s(q.common, q.system_file, text::join("sfumato llm", q.args));
  s.elaborate();
  const uint32_t chips = s.system().size(), n = q.tp;
  if (n < 1 || n > chips)
    throw InputError("llm --ep " + std::to_string(n) + ": the system has " +
                     std::to_string(chips) + " chips");
  if (q.simulate == "one")
    throw InputError("--simulate one does not apply to --ep (each chip routes "
                     "its own tokens: the chips differ)");
  if (q.simulate != "auto" && q.simulate != "all")
    throw InputError("--simulate must be auto, all or one, not '" + q.simulate +
                     "'");
  llm::RunOptions ro = q.run;
  llm::ModelWeights weights;
  llm::ep_shard_config(
      q.model,
      n); // a dense model or an indivisible expert count: before any weights
  if (s.functional()) {
    weights = q.weights_path.empty()
                  ? llm::random_weights(q.model, ro.seed)
                  : llm::load_weights(
                        q.model, llm::Safetensors::read_file(q.weights_path));
    ro.weights = &weights;
  } else if (!q.weights_path.empty()) {
    throw InputError(
        "--weights needs functional mode (timing mode moves no data)");
  }
  llm::EpOptions e;
  e.ep = n;
  e.reuse = reuse_options(q.reuse, s.functional(), false, s.chip_params());
  std::vector<DeviceInfo> infos;
  std::vector<rt::Device *> devs;
  std::vector<uint32_t> ids;
  for (uint32_t i = 0; i < n; ++i) {
    infos.push_back(s.system().chip(i).info());
    devs.push_back(&s.device(i));
    ids.push_back(i);
  }
  llm::EpRun run(q.model, ro, e, infos);
  s.run(ids, [&](uint32_t r, rt::Context &ctx) {
    run.run_rank(r, s.device(r), ctx, devs);
  });
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0)
          .count();

  const llm::ModelConfig &c = run.model();
  const llm::MemoryPlan &m = run.rank(0).memory();
  const llm::RunTotals tot = llm::run_totals(run.steps(), false);
  uint64_t decode_ps = 0;
  std::vector<double> step_ms;
  for (uint64_t ps : tot.eager.decode_ps) {
    decode_ps += ps;
    step_ms.push_back(ms(ps));
  }
  const double tpot =
      step_ms.empty() ? 0 : ms(decode_ps) / static_cast<double>(step_ms.size());
  std::printf("llm %s (%s, %.2f B parameters, %s) on %s: expert parallel over "
              "%u of %u chips, %s mode\n",
              c.name.c_str(), llm::arch_name(c.arch),
              static_cast<double>(c.params()) / 1e9, c.torch_dtype.c_str(),
              s.system_params().name.get().c_str(), n, chips, s.mode().c_str());
  std::printf("  per chip: %lld of %lld experts (top-%lld routing); attention "
              "data parallel over the batch (%lld "
              "sequences per chip), attention, router, embedding and LM head "
              "replicated; all-to-all dispatch and "
              "combine of the routed rows in every MoE layer\n",
              static_cast<long long>(run.shard().num_experts),
              static_cast<long long>(c.num_experts),
              static_cast<long long>(c.experts_per_token),
              static_cast<long long>(ro.batch / n));
  std::printf("  request: batch %lld, prefill %lld tokens, %lld decode steps\n",
              static_cast<long long>(ro.batch),
              static_cast<long long>(ro.prefill),
              static_cast<long long>(ro.decode));
  std::printf("  memory plan of chip 0 (every chip the same): capacity %.2f "
              "GiB = weights %.2f + KV cache %.2f (%lld "
              "blocks of %lld tokens, %lld needed) + activations %.2f + "
              "dispatch window %.2f + free %.2f\n",
              gib(m.capacity), gib(m.weights), gib(m.kv),
              static_cast<long long>(m.kv_blocks),
              static_cast<long long>(ro.block_size),
              static_cast<long long>(m.kv_blocks_needed), gib(m.activations),
              gib(m.reserved), gib(m.free));
  std::printf("  TTFT (prefill, no queueing): %.3f ms (%zu prefill step%s)\n",
              ms(tot.eager.prefill_ps), tot.eager.prefill_steps,
              tot.eager.prefill_steps == 1 ? "" : "s");
  if (!step_ms.empty()) {
    std::printf("  decode steps (ms):");
    for (size_t i = 0; i < step_ms.size(); ++i)
      if (i < 8 || i + 4 >= step_ms.size())
        std::printf(" %.3f", step_ms[i]);
      else if (i == 8)
        std::printf(" ...");
    std::printf("\n  TPOT (mean decode step): %.3f ms; decode throughput %.1f "
                "tokens/s (batch %lld)\n",
                tpot, static_cast<double>(ro.batch) * 1e3 / tpot,
                static_cast<long long>(ro.batch));
  }
  std::printf("  communication share per chip (time its dispatches and "
              "combines run / its step time):\n");
  nlohmann::json comm_j = nlohmann::json::array();
  for (uint32_t r = 0; r < n; ++r) {
    const llm::EpRun::RankShare sr = run.comm_share(r);
    const llm::EpRun::Rows rows = run.dispatched_rows(r);
    std::printf("    chip %u: prefill %.1f %%, decode %.1f %% (%zu + %zu "
                "exchanges); dispatched %llu rows to other "
                "chips (%.1f MB each way), %llu to its own experts\n",
                r, 100 * sr.prefill.share(), 100 * sr.decode.share(),
                sr.prefill.calls, sr.decode.calls,
                static_cast<unsigned long long>(rows.remote),
                static_cast<double>(rows.remote * run.row_bytes()) / 1e6,
                static_cast<unsigned long long>(rows.local));
    comm_j.push_back({{"chip", r},
                      {"prefill", share_json(sr.prefill)},
                      {"decode", share_json(sr.decode)},
                      {"dispatch_rows_remote", rows.remote},
                      {"dispatch_rows_local", rows.local},
                      {"row_bytes", run.row_bytes()}});
  }
  const reuse::ReuseCounters rc = run.reuse_counters();
  print_reuse(e.reuse, rc);
  std::printf("  wall %.1f s\n", wall_s);

  nlohmann::json summary = s.base_summary();
  nlohmann::json &j = summary["llm"];
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
  j["parallel"] = {
      {"ep", n},
      {"experts_per_chip", run.shard().num_experts},
      {"sequences_per_chip", ro.batch / n},
      {"attention", "data parallel"},
      {"replicated", "attention, norms, router, embedding, lm_head"}};
  j["memory"] = memory_json(run, n);
  j["ttft_ms"] = ms(tot.eager.prefill_ps);
  j["decode_step_ms"] = step_ms;
  j["tpot_ms"] = tpot;
  j["decode_tokens_per_s"] =
      tpot > 0 ? static_cast<double>(ro.batch) * 1e3 / tpot : 0;
  j["communication"] = comm_j;
  j["tokens"] = run.tokens();
  j["wall_s"] = wall_s;
  summary["reuse_timing"] = reuse_json(e.reuse, rc);
  j["reuse_timing"] = summary["reuse_timing"];
  if (!run.steps().empty())
    summary["links"] =
        s.links_json(run.steps().front().begin_ps,
                     run.steps().back().begin_ps + run.steps().back().ps);
  s.write_outputs(summary);
  if (!q.common.out.empty())
    std::printf("  wrote %s/{summary.json,trace.json,stats.h5}\n",
                q.common.out.c_str());
  return kExitOk;
}

} // namespace sfumato::cli
