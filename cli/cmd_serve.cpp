// `sfumato serve MODEL --config F (--requests TRACE | --generate SPEC) [--policy P] [--set serve.K=V]
// [--slo-ttft-ms X] [--slo-tpot-ms Y] [--out DIR]`: LLM serving on the simulated chip. The command
// parses its options, builds the chip, hands the trace and the `serve.*` parameters to
// runtime/serve's ServeRun (the scheduler with every step's batch run as kernels on the chip) and
// prints the metrics; --out gets summary.json (a `serve` section), trace.json (a track per request
// and the scheduler's steps above the chip's tracks), stats.h5 and requests.csv (one row per
// request). Timing mode re-uses identical kernels' times (--reuse-timing, default auto) unless
// --exact.

#include <cstdio>
#include <filesystem>

#include "cli/command.h"
#include "cli/installation.h"
#include "cli/reuse_option.h"
#include "cli/run_report.h"
#include "cli/session.h"
#include "runtime/serve/serve_run.h"
#include "sim/error.h"
#include "traces/atomic_file.h"

namespace sfumato::cli {

namespace {

namespace fs = std::filesystem;

void print_ms(const char* what, const nlohmann::json& p) {
    std::printf("  %-5s ms: mean %.3f  p50 %.3f  p90 %.3f  p99 %.3f  max %.3f\n", what, p["mean"].get<double>(),
                p["p50"].get<double>(), p["p90"].get<double>(), p["p99"].get<double>(), p["max"].get<double>());
}

void print_serve(const serve::ServeRun& run, const nlohmann::json& j, const std::string& arch, const std::string& mode) {
    const nlohmann::json& m = j["metrics"];
    const nlohmann::json& u = j["setup"];
    const nlohmann::json& t = j["timer"];
    std::printf("serve %s on %s, %s mode: %zu requests (%s %s), policy %s\n", run.engine().config().name.c_str(),
                arch.c_str(), mode.c_str(), run.trace().requests.size(), run.trace().format.c_str(),
                run.trace().source.c_str(), u["policy"].get<std::string>().c_str());
    for (const std::string& note : run.trace().notes) std::printf("  note: %s\n", note.c_str());
    const llm::MemoryPlan& mp = run.engine().memory();
    const double gib = 1 << 30;
    std::printf("  memory plan: weights %.2f GiB + KV cache %.2f GiB (%lld blocks of %lld tokens: %lld for requests, 1 "
                "scratch) + activations %.2f + free %.2f\n",
                static_cast<double>(mp.weights) / gib, static_cast<double>(mp.kv) / gib,
                static_cast<long long>(mp.kv_blocks), static_cast<long long>(u["block_size"].get<int64_t>()),
                static_cast<long long>(u["kv_blocks"].get<int64_t>()), static_cast<double>(mp.activations) / gib,
                static_cast<double>(mp.free) / gib);
    std::printf("  served %zu, rejected %zu in %.3f s simulated; %zu steps (mean batch %.2f), %lld preemptions\n",
                m["served"].get<size_t>(), m["rejected"].get<size_t>(), m["duration_s"].get<double>(),
                m["steps"].get<size_t>(), m["mean_batch"].get<double>(),
                static_cast<long long>(m["preemptions"].get<int64_t>()));
    int shown = 0;
    for (const serve::RequestResult& r : run.result().requests)
        if (!r.rejected.empty() && shown++ < 10) std::printf("  rejected %s: %s\n", r.id.c_str(), r.rejected.c_str());
    print_ms("TTFT", m["ttft_ms"]);
    print_ms("TPOT", m["tpot_ms"]);
    print_ms("ITL", m["itl_ms"]);
    print_ms("E2E", m["e2e_ms"]);
    std::printf("  throughput: %.3f requests/s, %.1f output tokens/s; goodput %.3f requests/s (%zu met TTFT <= %g ms, "
                "TPOT <= %g ms; 0: no bound)\n",
                m["requests_per_s"].get<double>(), m["output_tokens_per_s"].get<double>(),
                m["goodput_per_s"].get<double>(), m["met_slo"].get<size_t>(), m["slo_ttft_ms"].get<double>(),
                m["slo_tpot_ms"].get<double>());
    std::printf("  KV utilisation: mean %.1f %%, peak %.1f %% of %lld blocks\n",
                100 * j["kv"]["mean_utilisation"].get<double>(), 100 * j["kv"]["peak_utilisation"].get<double>(),
                static_cast<long long>(j["kv"]["pool_blocks"].get<int64_t>()));
    const double tok = t["tokens"].get<double>(), pad = t["padded_tokens"].get<double>();
    std::printf("  step shapes: %zu plans compiled (%zu again for a larger workspace, %.2f s); padding %.1f %% of the "
                "tokens, %lld padding sequences%s\n",
                t["plans_compiled"].get<size_t>(), t["plans_recompiled"].get<size_t>(), t["compile_seconds"].get<double>(),
                tok > 0 ? 100 * pad / (tok + pad) : 0.0, static_cast<long long>(t["padded_sequences"].get<int64_t>()),
                u["pad_shapes"].get<bool>() ? "" : " (pad_shapes off)");
}

int cmd_serve(const std::vector<std::string>& args) {
    CommonOptions common;
    common.mode = "timing";  // serving runs in timing mode (a trace carries token counts, not tokens)
    std::string model_arg, requests, generate, policy, reuse_arg = "auto";
    double slo_ttft_ms = 0, slo_tpot_ms = 0;
    bool exact = false;
    uint64_t seed = 1;
    po::options_description d("sfumato serve");
    add_run_options(d, common);
    add_reuse_option(d, reuse_arg);
    d.add_options()("model", po::value<std::string>(&model_arg), "config.json, or a shipped model name (configs/llm)")(
        "requests", po::value<std::string>(&requests), "request trace: CSV, JSONL or the Azure LLM trace CSV (docs/serve.md)")(
        "generate", po::value<std::string>(&generate),
        "generated requests: n=..,rate=..,arrival=poisson|gamma,prompt=..,output=..,seed=.. (docs/serve.md)")(
        "policy", po::value<std::string>(&policy), "continuous | static | dynamic (the same as --set serve.policy=P)")(
        "slo-ttft-ms", po::value<double>(&slo_ttft_ms)->default_value(0), "goodput: TTFT bound (0: none)")(
        "slo-tpot-ms", po::value<double>(&slo_tpot_ms)->default_value(0), "goodput: TPOT bound (0: none)")(
        "seed", po::value<uint64_t>(&seed)->default_value(1), "seed of the model's timing-mode token draws")(
        "exact", po::bool_switch(&exact), "simulate every kernel (--reuse-timing off)");
    po::positional_options_description pos;
    pos.add("model", 1);
    po::variables_map vm;
    if (!parse_command(args, "sfumato serve MODEL --config F (--requests TRACE | --generate SPEC) [options]", d, vm, &pos))
        return kExitOk;
    if (model_arg.empty()) throw InputError("serve: give a model (config.json or a shipped name)");
    if (requests.empty() == generate.empty()) throw InputError("serve: give one of --requests TRACE and --generate SPEC");
    if (!(slo_ttft_ms >= 0) || !(slo_tpot_ms >= 0)) throw InputError("--slo-ttft-ms and --slo-tpot-ms must not be negative");
    if (!policy.empty()) {
        serve::parse_policy(policy);  // names the known ones
        common.sets.push_back("serve.policy=" + policy);
    }
    const llm::ModelConfig cfg = llm::load_model_config(model_arg, {preset_dir() + "/llm"});
    serve::RequestTrace trace =
        requests.empty() ? serve::generate_requests(serve::parse_gen_spec(generate)) : serve::load_requests(requests);
    std::string cmdline = "sfumato serve";
    for (const auto& a : args) cmdline += " " + a;
    Session s(common, cmdline);
    if (s.functional())
        throw InputError("serve: runs in timing mode only (a trace carries token counts, not tokens): --mode timing");
    if (fs::is_regular_file(model_arg)) s.add_input("model", model_arg);
    if (!requests.empty()) s.add_input("requests", requests);
    const serve::ServeParams params(ParamScope(s.config(), "serve"));
    s.elaborate();
    serve::ServeSetup setup = params.setup();
    setup.seed = seed;
    reuse::ReuseOptions ropt = reuse_options(exact ? "off" : reuse_arg, s.functional(), false, s.chip_params());
    ropt.traffic = s.chip().memory_system();
    serve::ServeRun run(cfg, std::move(trace), setup, s.chip().info());
    std::unique_ptr<reuse::TimingReuse> reuser;
    s.run([&](rt::Runtime& rt) {
        reuser = std::make_unique<reuse::TimingReuse>(rt.context(), rt.device_info(), ropt);
        run.run(rt);
        reuser->settle();
    });
    const reuse::ReuseCounters rc = reuser ? reuser->counters() : reuse::ReuseCounters{};
    nlohmann::json summary = s.base_summary();
    summary["serve"] = run.summary(slo_ttft_ms / 1e3, slo_tpot_ms / 1e3);
    summary["reuse_timing"] = reuse_json(ropt, rc);
    print_serve(run, summary["serve"], s.chip().info().arch, common.mode);
    print_reuse(ropt, rc);
    s.write_outputs(summary);
    if (!common.out.empty()) {
        write_text_atomically((fs::path(common.out) / "requests.csv").string(), run.requests_csv());
        std::printf("  wrote %s/{summary.json,trace.json,stats.h5,requests.csv}\n", common.out.c_str());
    }
    return kExitOk;
}

}  // namespace

SFUMATO_COMMAND("serve", "LLM serving: a request trace under a batching policy, each step's kernels on the chip", cmd_serve);

}  // namespace sfumato::cli
