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
#include <set>

#include "cli/command.h"
#include "cli/energy_print.h"
#include "cli/installation.h"
#include "cli/llm_common.h"
#include "cli/reuse_option.h"
#include "cli/run_report.h"
#include "cli/session.h"
#include "cli/system_session.h"
#include "runtime/serve/cluster.h"
#include "runtime/serve/serve_run.h"
#include "runtime/serve/serve_system.h"
#include "sim/error.h"
#include "sim/sc_time_util.h"
#include "traces/atomic_file.h"

namespace sfumato::cli {

namespace {

namespace fs = std::filesystem;

void print_ms(const char* what, const nlohmann::json& p) {
    std::printf("  %-5s ms: mean %.3f  p50 %.3f  p90 %.3f  p99 %.3f  max %.3f\n", what, p["mean"].get<double>(),
                p["p50"].get<double>(), p["p90"].get<double>(), p["p99"].get<double>(), p["max"].get<double>());
}

void print_head(const serve::ServeRun& run, const nlohmann::json& j, const std::string& where, const std::string& mode) {
    std::printf("serve %s on %s, %s mode: %zu requests (%s %s), policy %s\n", run.model().name.c_str(),
                where.c_str(), mode.c_str(), run.trace().requests.size(), run.trace().format.c_str(),
                run.trace().source.c_str(), j["setup"]["policy"].get<std::string>().c_str());
    for (const std::string& note : run.trace().notes) std::printf("  note: %s\n", note.c_str());
    std::set<int64_t> classes;
    for (const serve::Request& r : run.trace().requests) classes.insert(r.priority);
    if (classes.size() > 1 && j["setup"]["scheduling"] == "fcfs")
        std::printf("  note: the trace has %zu priority classes; serve.scheduling=fcfs serves them in "
                    "arrival order (serve.scheduling=priority honours them)\n",
                    classes.size());
}

void print_latencies(const nlohmann::json& m) {
    print_ms("TTFT", m["ttft_ms"]);
    print_ms("TPOT", m["tpot_ms"]);
    print_ms("ITL", m["itl_ms"]);
    print_ms("E2E", m["e2e_ms"]);
    std::printf("  throughput: %.3f requests/s, %.1f output tokens/s; goodput %.3f requests/s (%zu met TTFT <= %g ms, "
                "TPOT <= %g ms; 0: no bound)\n",
                m["requests_per_s"].get<double>(), m["output_tokens_per_s"].get<double>(),
                m["goodput_per_s"].get<double>(), m["met_slo"].get<size_t>(), m["slo_ttft_ms"].get<double>(),
                m["slo_tpot_ms"].get<double>());
    for (const nlohmann::json& c : m["by_priority"])
        std::printf("  priority %lld: %zu served, %zu rejected; TTFT ms p50 %.3f p99 %.3f; TPOT ms p50 %.3f "
                    "p99 %.3f; E2E ms p50 %.3f p99 %.3f; %lld preemptions\n",
                    static_cast<long long>(c["priority"].get<int64_t>()), c["served"].get<size_t>(),
                    c["rejected"].get<size_t>(), c["ttft_ms"]["p50"].get<double>(),
                    c["ttft_ms"]["p99"].get<double>(),
                    c["tpot_ms"]["p50"].get<double>(), c["tpot_ms"]["p99"].get<double>(),
                    c["e2e_ms"]["p50"].get<double>(), c["e2e_ms"]["p99"].get<double>(),
                    static_cast<long long>(c["preemptions"].get<int64_t>()));
}

void print_served(const nlohmann::json& m, const serve::ServeResult& res) {
    std::printf("  served %zu, rejected %zu in %.3f s simulated; %zu steps (mean batch %.2f), %lld "
                "preemptions (%lld for a more urgent request)\n",
                m["served"].get<size_t>(), m["rejected"].get<size_t>(), m["duration_s"].get<double>(),
                m["steps"].get<size_t>(), m["mean_batch"].get<double>(),
                static_cast<long long>(m["preemptions"].get<int64_t>()),
                static_cast<long long>(m["priority_preemptions"].get<int64_t>()));
    if (res.swapped_out > 0 || res.swapped_in > 0)
        std::printf("  swap: %lld tokens' KV to host memory, %lld back, %.3f ms of copies over the host link\n",
                    static_cast<long long>(res.swapped_out), static_cast<long long>(res.swapped_in), res.swap_s * 1e3);
    int shown = 0;
    for (const serve::RequestResult& r : res.requests)
        if (!r.rejected.empty() && shown++ < 10) std::printf("  rejected %s: %s\n", r.id.c_str(), r.rejected.c_str());
}

void print_step_reuse(const nlohmann::json& r) {
    if (!r["on"].get<bool>()) return;
    const size_t reused = r["reused"].get<size_t>(), sim = r["simulated"].get<size_t>();
    std::printf("  APPROXIMATION serve.step_reuse: %zu of %zu steps took their time from simulated steps of the same "
                "shape (%zu exact, %zu interpolated, %zu extrapolated over the decodes' summed contexts, span %lld "
                "tokens; %zu from the nearest point and the slope pooled over the shapes, %.3f us per context "
                "token from %zu baselines); %zu steps simulated (%zu shapes), %zu of them checks of a re-use: "
                "deviation max %.2f %%, "
                "mean %+.2f %%; ",
                reused, reused + sim, r["exact"].get<size_t>(), r["interpolated"].get<size_t>(),
                r["extrapolated"].get<size_t>(), static_cast<long long>(r["span_tokens"].get<int64_t>()),
                r["pooled"].get<size_t>(), r["pooled_slope_us_per_token"].get<double>(),
                r["pooled_baselines"].get<size_t>(), sim,
                r["shapes"].get<size_t>(), r["checks"].get<size_t>(), 100 * r["check_max_deviation"].get<double>(),
                100 * r["check_mean_deviation"].get<double>());
    if (r["error_bound_known"].get<bool>())
        std::printf("estimated error bound %.3f %% of the step time\n", 100 * r["error_bound_fraction"].get<double>());
    else
        std::printf("error bound unknown (no check ran)\n");
}

void print_serve(const serve::ServeRun& run, const nlohmann::json& j, const std::string& chip, const std::string& mode) {
    const nlohmann::json& m = j["metrics"];
    const nlohmann::json& u = j["setup"];
    const nlohmann::json& t = j["timer"];
    print_head(run, j, chip, mode);
    const llm::MemoryPlan& mp = run.engine().memory();
    const double gib = 1 << 30;
    std::printf("  memory plan: weights %.2f GiB + KV cache %.2f GiB (%lld blocks of %lld tokens: %lld for requests, 1 "
                "scratch) + activations %.2f + free %.2f\n",
                static_cast<double>(mp.weights) / gib, static_cast<double>(mp.kv) / gib,
                static_cast<long long>(mp.kv_blocks), static_cast<long long>(u["block_size"].get<int64_t>()),
                static_cast<long long>(u["kv_blocks"].get<int64_t>()), static_cast<double>(mp.activations) / gib,
                static_cast<double>(mp.free) / gib);
    print_served(m, run.result());
    print_latencies(m);
    std::printf("  KV utilisation: mean %.1f %%, peak %.1f %% of %lld blocks\n",
                100 * j["kv"]["mean_utilisation"].get<double>(), 100 * j["kv"]["peak_utilisation"].get<double>(),
                static_cast<long long>(j["kv"]["pool_blocks"].get<int64_t>()));
    const double tok = t["tokens"].get<double>(), pad = t["padded_tokens"].get<double>();
    std::printf("  step shapes: %zu plans compiled (%zu again for a larger workspace, %.2f s); padding %.1f %% of the "
                "tokens, %lld padding sequences%s\n",
                t["plans_compiled"].get<size_t>(), t["plans_recompiled"].get<size_t>(), t["compile_seconds"].get<double>(),
                tok > 0 ? 100 * pad / (tok + pad) : 0.0, static_cast<long long>(t["padded_sequences"].get<int64_t>()),
                u["pad_shapes"].get<bool>() ? "" : " (pad_shapes off)");
    print_step_reuse(t["step_reuse"]);
}

// An instance of pipeline stages: a line per chip (its stage, layers, memory, kernels, sends).
void print_pipeline(const nlohmann::json& in) {
    const double mib = 1 << 20;
    const nlohmann::json& pl = in["pipeline"];
    const int64_t k = pl["batches_in_flight"].get<int64_t>();
    std::printf(
        "      %lld pipeline stages x %lld TP chips, %lld batch%s in flight (memory plan per chip; a "
        "step runs stage after stage; the stages' kernels overlapped %.3f ms):\n",
        static_cast<long long>(pl["pp"].get<int64_t>()), static_cast<long long>(pl["tp"].get<int64_t>()),
        static_cast<long long>(k), k == 1 ? "" : "es", pl["stages_overlap_ms"].get<double>());
    for (const nlohmann::json& c : pl["chips"]) {
        const size_t k = c["chip"].get<size_t>();
        std::printf(
            "        chip %u: stage %lld, layers %lld..%lld%s%s; weights %.2f MiB + KV %.2f MiB (%lld "
            "blocks) + activations %.2f MiB; kernels %.3f ms; sent %zu times, %.2f MB, %.3f ms of copies\n",
            in["chips"][k].get<uint32_t>(), static_cast<long long>(c["stage"].get<int64_t>()),
            static_cast<long long>(c["first_layer"].get<int64_t>()),
            static_cast<long long>(c["end_layer"].get<int64_t>() - 1),
            c["embedding"].get<bool>() ? " + embedding" : "",
            c["head"].get<bool>() ? " + final norm, LM head" : "", c["weights"].get<double>() / mib,
            c["kv"].get<double>() / mib, static_cast<long long>(c["kv_blocks"].get<int64_t>()),
            c["activations"].get<double>() / mib, c["kernel_ms"].get<double>(),
            c["sends"].get<size_t>(), c["sent_bytes"].get<double>() / 1e6,
            c["send_ms"].get<double>());
    }
}

void print_cluster(const serve::ServeCluster& cl, const nlohmann::json& j, const std::string& system,
                   const std::string& mode) {
    const double mib = 1 << 20;  // the tiny model's weights are a fraction of one GiB
    print_head(cl.instance(0), j, system, mode);
    std::printf("  %zu instance%s, router %s\n", cl.instances(), cl.instances() == 1 ? "" : "s",
                j["setup"]["router"].get<std::string>().c_str());
    for (const nlohmann::json& in : j["instances"]) {
        const nlohmann::json& mp = in["memory"];
        std::printf("    instance %zu (%s) on chip %u: %zu requests, %zu steps; weights %.2f MiB %s + KV cache %.2f MiB (%lld "
                    "blocks) + activations %.2f MiB, mean KV use %.1f %%\n",
                    in["instance"].get<size_t>(), in["role"].get<std::string>().c_str(), in["chip"].get<uint32_t>(), in["requests"].get<size_t>(),
                    in["steps"].get<size_t>(), mp["weights"].get<double>() / mib,
                    mp["weights_imported"].get<bool>() ? "(mapped: shared with the chip's first instance)" : "(held)",
                    mp["kv"].get<double>() / mib, static_cast<long long>(mp["kv_blocks"].get<int64_t>()),
                    mp["activations"].get<double>() / mib, 100 * in["kv"]["mean_utilisation"].get<double>());
        if (in.contains("pipeline")) print_pipeline(in);
        if (!in.contains("communication")) continue;
        std::printf("      tensor parallel over chips");
        for (const nlohmann::json& c : in["chips"]) std::printf(" %u", c.get<uint32_t>());
        std::printf(" (memory plan per chip); all-reduces per chip (time they run / step time):");
        for (const nlohmann::json& c : in["communication"])
            std::printf(" %zu, %.2f MB, %.3f of %.3f ms (%.1f %%);", c["all_reduces"].get<size_t>(),
                        c["bytes"].get<double>() / 1e6, c["comm_ms"].get<double>(),
                        c["steps_ms"].get<double>(), 100 * c["share"].get<double>());
        std::printf("\n");
    }
    for (const nlohmann::json& c : j["chips"])
        std::printf("    chip %u: %zu instance(s), %zu copy of the weights (%.2f MiB held, %.2f MiB mapped), %.2f MiB "
                    "placed\n",
                    c["chip"].get<uint32_t>(), c["instances"].get<size_t>(), c["weight_copies"].get<size_t>(),
                    c["weights_bytes"].get<double>() / mib, c["weights_mapped_bytes"].get<double>() / mib,
                    c["physical_bytes_placed"].get<double>() / mib);
    if (j.contains("disaggregation")) {
        const nlohmann::json& x = j["disaggregation"];
        const nlohmann::json& t = x["kv_transfer_ms"];
        std::printf("  disaggregated: %lld prefill + %zu decode instances; %zu KV transfers over the links (%.2f MiB in "
                    "%zu copies), %.3f ms in total; per request ms: mean %.3f  p50 %.3f  p99 %.3f  max %.3f\n",
                    static_cast<long long>(x["prefill_instances"].get<int64_t>()), x["decode_instances"].get<size_t>(),
                    x["transfers"].get<size_t>(), x["kv_bytes"].get<double>() / (1 << 20), x["copies"].get<size_t>(),
                    x["kv_transfer_total_ms"].get<double>(), t["mean"].get<double>(), t["p50"].get<double>(),
                    t["p99"].get<double>(), t["max"].get<double>());
        const nlohmann::json& c = x["kv_copy_ms"];
        std::printf(
            "    sent layer by layer during the prefill steps: %zu batched copy calls (one per layer, TP "
            "rank and decode chip a step), %zu of %zu transfers began before their prompt's last step "
            "ended; copies per request first to last ms: mean %.3f  p50 %.3f  p99 %.3f  max %.3f\n",
            x["copy_calls"].get<size_t>(), x["overlapped_transfers"].get<size_t>(),
            x["transfers"].get<size_t>(), c["mean"].get<double>(), c["p50"].get<double>(),
            c["p99"].get<double>(), c["max"].get<double>());
    }
    print_served(j["metrics"], cl.result());
    print_latencies(j["metrics"]);
}

// --system F: the instances on the system's chips behind the router (runtime/serve/serve_system.h).
int serve_system(const std::vector<std::string>& args, const CommonOptions& common,
                 const std::string& system_file, const llm::ModelConfig& cfg,
                 const serve::RequestTrace& trace, uint64_t seed, const std::string& reuse_arg,
                 double slo_ttft_ms, double slo_tpot_ms, const std::string& profile_dir,
                 const std::string& simulate) {
    std::string cmdline = "sfumato serve";
    for (const auto& a : args) cmdline += " " + a;
    SystemSession s(common, system_file, cmdline);
    if (s.functional())
        throw InputError("serve: runs in timing mode only (a trace carries token counts, not tokens): --mode timing");
    const serve::ServeParams params(ParamScope(s.config(), "serve"));
    s.elaborate();
    serve::ServeSetup setup = params.setup();
    setup.seed = seed;
    setup.export_profile = !profile_dir.empty();
    setup.tp_mirror = simulate_one(simulate, false);
    serve::SystemServe run(s.host(), cfg, trace, setup, s.comm_params(),
                           reuse_options(reuse_arg, false, false, s.chip_params()));
    run.run();
    const serve::ServeCluster& cluster = run.cluster();
    const reuse::ReuseOptions& ropt = run.reuse_options();
    const reuse::ReuseCounters rc = run.reuse_counters();
    nlohmann::json summary = s.base_summary();
    summary["serve"] = run.summary(slo_ttft_ms / 1e3, slo_tpot_ms / 1e3);
    summary["reuse_timing"] = reuse_json(ropt, rc);
    summary["links"] = run.links_json();
    print_cluster(cluster, summary["serve"], s.system_params().name.get(), s.mode());
    print_reuse(ropt, rc);
    add_serve_energy(summary);
    s.write_outputs(summary);
    if (!profile_dir.empty()) {
        cluster.export_profile(profile_dir, static_cast<int64_t>(s.system_params().chips_per_server.get()));
        std::printf("  wrote %s/{mlp,attention,send_recv,all_reduce}.csv (Vidur's profiling layouts)\n",
                    profile_dir.c_str());
    }
    if (!common.out.empty()) {
        write_text_atomically((fs::path(common.out) / "requests.csv").string(), cluster.requests_csv());
        write_text_atomically((fs::path(common.out) / "steps.csv").string(), cluster.steps_csv());
        std::printf("  wrote %s/{summary.json,trace.json,stats.h5,requests.csv,steps.csv}\n",
                    common.out.c_str());
    }
    return kExitOk;
}

int cmd_serve(const std::vector<std::string>& args) {
    CommonOptions common;
    common.mode = "timing";  // serving runs in timing mode (a trace carries token counts, not tokens)
    std::string model_arg, requests, generate, policy, reuse_arg = "auto", system_file, router, profile_dir;
    std::string simulate = "auto";
    int64_t instances = 0, tp = 0, pp = 0;
    double slo_ttft_ms = 0, slo_tpot_ms = 0;
    bool exact = false;
    uint64_t seed = 1;
    po::options_description d("sfumato serve");
    add_run_options(d, common);
    add_reuse_option(d, reuse_arg);
    add_system_option(d, system_file);
    d.add_options()("model", po::value<std::string>(&model_arg),
                    "config.json, or a shipped model name (configs/llm)")(
        "requests", po::value<std::string>(&requests),
        "request trace: CSV, JSONL or the Azure LLM trace CSV (docs/serve.md)")(
        "generate", po::value<std::string>(&generate),
        "generated requests: n=..,rate=..,arrival=poisson|gamma,prompt=..,output=..,seed=.. (docs/serve.md)")(
        "policy", po::value<std::string>(&policy),
        "continuous | static | dynamic (the same as --set serve.policy=P)")(
        "instances", po::value<int64_t>(&instances),
        "serving instances on the --system's chips (the same as --set serve.instances=N)")(
        "tp", po::value<int64_t>(&tp),
        "tensor-parallel chips per instance of the --system (the same as --set serve.tp=N)")(
        "pp", po::value<int64_t>(&pp),
        "pipeline stages per instance on the --system's chips (the same as --set serve.pp=N)")(
        "simulate", po::value<std::string>(&simulate)->default_value("auto"),
        "with --tp: all|auto: every chip's kernels | one: only each instance's first chip simulates kernels, the "
        "others follow it to every all-reduce (an approximation: a notify's latency late)")(
        "router", po::value<std::string>(&router),
        "round_robin | least_tokens: how requests spread over the instances (--set serve.router=R)")(
        "slo-ttft-ms", po::value<double>(&slo_ttft_ms)->default_value(0), "goodput: TTFT bound (0: none)")(
        "slo-tpot-ms", po::value<double>(&slo_tpot_ms)->default_value(0), "goodput: TPOT bound (0: none)")(
        "seed", po::value<uint64_t>(&seed)->default_value(1), "seed of the model's timing-mode token draws")(
        "exact", po::bool_switch(&exact), "simulate every kernel (--reuse-timing off)")(
        "export-profile", po::value<std::string>(&profile_dir),
        "write the measured per-op times in Vidur's profiling CSV layouts (mlp, attention, send_recv, "
        "all_reduce) to "
        "DIR");
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
    if (!router.empty()) {
        serve::parse_router(router);  // names the known ones
        common.sets.push_back("serve.router=" + router);
    }
    if (vm.count("instances")) {
        if (instances < 1) throw InputError("--instances " + std::to_string(instances) + ": at least 1");
        common.sets.push_back("serve.instances=" + std::to_string(instances));
    }
    if (vm.count("tp")) {
        if (tp < 1) throw InputError("--tp " + std::to_string(tp) + ": at least 1");
        common.sets.push_back("serve.tp=" + std::to_string(tp));
    }
    if (vm.count("pp")) {
        if (pp < 1) throw InputError("--pp " + std::to_string(pp) + ": at least 1");
        common.sets.push_back("serve.pp=" + std::to_string(pp));
    }
    const llm::ModelConfig cfg = llm::load_model_config(model_arg, {preset_dir() + "/llm"});
    serve::RequestTrace trace =
        requests.empty() ? serve::generate_requests(serve::parse_gen_spec(generate)) : serve::load_requests(requests);
    if (!system_file.empty())
        return serve_system(args, common, system_file, cfg, trace, seed, exact ? "off" : reuse_arg,
                            slo_ttft_ms, slo_tpot_ms, profile_dir, simulate);
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
    setup.export_profile = !profile_dir.empty();
    if (setup.instances > 1 || !setup.placement.empty())
        throw InputError("serve.instances " + std::to_string(setup.instances) +
                         " / serve.placement: several instances need --system F (a system of chips)");
    if (setup.pp > 1)
        throw InputError(
            "serve.pp " + std::to_string(setup.pp) +
            ": a pipeline-parallel instance spans several chips: give --system F (a system of chips), "
            "not a single chip's --config");
    if (setup.tp > 1)
        throw InputError(
            "serve.tp " + std::to_string(setup.tp) +
            ": a tensor-parallel instance spans several chips: give --system F (a system of chips), "
            "not a single chip's --config");
    reuse::ReuseOptions ropt = reuse_options(exact ? "off" : reuse_arg, s.functional(), false, s.chip_params());
    ropt.traffic = s.chip().memory_system();
    // Step re-use builds on the kernels' re-use: --exact (or --reuse-timing off) simulates every step.
    if (ropt.mode == reuse::ReuseMode::Off) setup.step_reuse.on = false;
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
    print_serve(run, summary["serve"], s.chip_params().name.get(), common.mode);
    print_reuse(ropt, rc);
    add_serve_energy(summary);
    s.write_outputs(summary);
    if (!profile_dir.empty()) {
        run.profile()->write(profile_dir);
        std::printf("  wrote %s/{mlp,attention,send_recv,all_reduce}.csv (Vidur's profiling layouts)\n",
                    profile_dir.c_str());
    }
    if (!common.out.empty()) {
        write_text_atomically((fs::path(common.out) / "requests.csv").string(), run.requests_csv());
        write_text_atomically((fs::path(common.out) / "steps.csv").string(), run.steps_csv());
        std::printf("  wrote %s/{summary.json,trace.json,stats.h5,requests.csv,steps.csv}\n",
                    common.out.c_str());
    }
    return kExitOk;
}

}  // namespace

SFUMATO_COMMAND("serve", "LLM serving: a request trace under a batching policy, each step's kernels on the chip", cmd_serve);

}  // namespace sfumato::cli
