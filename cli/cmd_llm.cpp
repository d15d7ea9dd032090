// `sfumato llm MODEL --config F [--prefill N] [--decode N] [--batch B] [--mode M] [--out DIR]`:
// LLM inference on the simulated chip. MODEL is a Hugging Face config.json or a shipped name
// (configs/llm/NAME.json). The command parses its options, builds the chip, hands the request
// to runtime/llm's LlmRun (model, step graphs, paged KV cache, the prefill and decode steps)
// and prints what it measured: the memory plan, TTFT, each decode step and their mean (TPOT),
// tokens/s, the per-phase per-op table (layer op, shape, cycles, share, bound, roofline
// fraction), HBM bytes per generated token (the kernels' compulsory traffic); summary.json gains
// an `llm` section, trace.json phase / layer / op tracks above the task and pipe tracks.
// Timing mode re-uses the time of identical kernel launches (the runtime's timing re-use service,
// runtime/reuse; --reuse-timing, default auto) unless --exact. --quant w8a8 runs the projections
// in int8 (runtime/llm/quant.h).

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>

#include "cli/command.h"
#include "models/power/energy_report.h"
#include "cli/installation.h"
#include "cli/llm_ep.h"
#include "cli/llm_common.h"
#include "cli/llm_pp.h"
#include "cli/llm_tp.h"
#include "cli/system_session.h"
#include "cli/reuse_option.h"
#include "cli/run_report.h"
#include "cli/session.h"
#include "runtime/llm/engine.h"
#include "runtime/llm/summary.h"
#include "sim/error.h"

namespace sfumato::cli {

namespace {

namespace fs = std::filesystem;

struct OpRow {
    std::string role, op_type, shape;
    uint64_t cycles = 0;
    double roofline_cycles = 0;
    uint64_t bytes = 0;
    size_t count = 0;
    std::map<std::string, int> bound;
};

std::string shape_str(const std::vector<int64_t>& s) {
    std::string r;
    for (size_t i = 0; i < s.size(); ++i) r += (i ? "x" : "") + std::to_string(s[i]);
    return r;
}

// Per layer op (summed over layers and steps of the phase), in first-appearance order.
std::vector<OpRow> op_rows(const Session& s, const std::vector<llm::StepRecord>& steps, bool prefill, bool captured) {
    std::vector<OpRow> rows;
    std::map<std::string, size_t> at;
    for (const auto& st : steps) {
        if (st.prefill != prefill || st.captured != captured) continue;
        for (const auto& op : st.ops) {
            const std::string role = llm::node_role(op.name);
            auto it = at.find(role);
            if (it == at.end()) {
                it = at.emplace(role, rows.size()).first;
                OpRow r;
                r.role = role;
                r.op_type = op.op_type;
                r.shape = shape_str(op.shape);
                rows.push_back(std::move(r));
            }
            OpRow& r = rows[it->second];
            for (const auto& t : op.tasks) {
                if (!t->done) continue;
                const nlohmann::json j = s.op_json(*t);
                r.cycles += t->cycles;
                r.roofline_cycles += j["roofline_cycles"].get<double>();
                r.bytes += t->kernel.bytes;
                ++r.count;
                ++r.bound[j["bound"].get<std::string>()];
            }
        }
    }
    return rows;
}

nlohmann::json print_phase(const Session& s, const std::vector<llm::StepRecord>& steps, bool prefill, size_t nsteps,
                           bool captured) {
    const std::vector<OpRow> rows = op_rows(s, steps, prefill, captured);
    uint64_t total = 0;
    for (const auto& r : rows) total += r.cycles;
    std::printf("\n  %s: per-op table (%s; cycles summed over layers%s)\n", prefill ? "prefill" : "decode",
                prefill ? "all prefill steps" : "mean per step", prefill ? "" : ", per step");
    std::printf("  %-22s %-15s %-16s %12s %7s %8s %9s\n", "layer op", "op", "shape", "cycles", "share", "bound",
                "roofline");
    nlohmann::json out = nlohmann::json::array();
    const double per = static_cast<double>(std::max<size_t>(1, nsteps));
    for (const auto& r : rows) {
        const std::string bound =
            r.bound.empty() ? "-" : std::max_element(r.bound.begin(), r.bound.end(), [](auto& a, auto& b) { return a.second < b.second; })->first;
        const double frac = r.cycles ? r.roofline_cycles / static_cast<double>(r.cycles) : 0;
        const double share = total ? static_cast<double>(r.cycles) / static_cast<double>(total) : 0;
        std::printf("  %-22s %-15s %-16s %12.0f %6.1f%% %8s %9.2f\n", r.role.c_str(), r.op_type.c_str(), r.shape.c_str(),
                    static_cast<double>(r.cycles) / per, 100 * share, bound.c_str(), frac);
        out.push_back({{"op", r.role}, {"type", r.op_type}, {"shape", r.shape}, {"cycles_per_step", static_cast<double>(r.cycles) / per},
                       {"share", share}, {"bound", bound}, {"roofline_fraction", frac}, {"kernels", r.count},
                       {"bytes_per_step", static_cast<double>(r.bytes) / per}});
    }
    return out;
}

int print_llm(Session& s, const llm::LlmRun& run, const CommonOptions& common, const reuse::ReuseOptions& ropt,
              const reuse::ReuseCounters& rc) {
    const llm::ModelConfig& c = run.config();
    const llm::RunOptions& o = run.options();
    const llm::MemoryPlan& m = run.memory();
    const auto& steps = run.steps();
    std::printf("llm %s (%s, %.2f B parameters, %s%s) on %s, %s mode\n", c.name.c_str(), llm::arch_name(c.arch),
                static_cast<double>(c.params()) / 1e9, c.torch_dtype.c_str(),
                o.quant == llm::Quant::W8A8 ? ", W8A8 projections" : "", s.chip_params().name.get().c_str(), common.mode.c_str());
    std::printf("  request: batch %lld, prefill %lld tokens, %lld decode steps; %zu step plans compiled (%.2f s)\n",
                static_cast<long long>(o.batch), static_cast<long long>(o.prefill), static_cast<long long>(o.decode),
                run.plans_compiled(), run.compile_seconds());
    std::printf("  memory plan: capacity %.2f GiB = weights %.2f + KV cache %.2f (%lld blocks of %lld tokens, %lld needed) + "
                "activations %.2f + free %.2f\n",
                gib(m.capacity), gib(m.weights), gib(m.kv), static_cast<long long>(m.kv_blocks),
                static_cast<long long>(o.block_size), static_cast<long long>(m.kv_blocks_needed), gib(m.activations), gib(m.free));
    // With --graph-mode both, the figures are the first (eager) pass; the captured pass follows.
    const bool both = o.graph_mode == llm::RunOptions::GraphMode::Both;
    const bool first_captured = o.graph_mode == llm::RunOptions::GraphMode::Captured;
    const llm::RunTotals totals = llm::run_totals(steps, both);
    const llm::Figures f = llm::figures(totals.eager, o.batch);
    const uint64_t pre_ps = totals.eager.prefill_ps, captured_pre = totals.captured.prefill_ps;
    const uint64_t decode_bytes = totals.eager.decode_bytes;
    const size_t prefill_steps = f.prefill_steps;
    const std::vector<double>& step_ms = f.step_ms;
    const double tpot = f.tpot_ms;
    std::vector<double> captured_ms;
    for (uint64_t ps : totals.captured.decode_ps) captured_ms.push_back(ms(ps));
    std::printf("  TTFT (prefill, no queueing): %.3f ms (%zu prefill step%s of at most %lld tokens)\n", ms(pre_ps),
                prefill_steps, prefill_steps == 1 ? "" : "s", static_cast<long long>(o.max_prefill_tokens));
    if (!step_ms.empty()) {
        std::printf("  decode steps (ms):");
        for (size_t i = 0; i < step_ms.size(); ++i)
            if (i < 8 || i + 4 >= step_ms.size()) std::printf(" %.3f", step_ms[i]);
            else if (i == 8) std::printf(" ...");
        std::printf("\n  TPOT (mean decode step): %.3f ms; decode throughput %.1f tokens/s (batch %lld)\n", tpot,
                    f.tokens_per_s, static_cast<long long>(o.batch));
        std::printf("  HBM bytes per generated token (kernels' compulsory traffic, decode): %.3f GB\n",
                    static_cast<double>(decode_bytes) / static_cast<double>(step_ms.size() * static_cast<size_t>(o.batch)) / 1e9);
    }
    std::printf("  graph mode: %s\n", both ? "both (figures above: eager)" : first_captured ? "on (captured steps)" : "off (eager launches)");
    nlohmann::json gm = {{"mode", both ? "both" : first_captured ? "on" : "off"}};
    if (both && !captured_ms.empty()) {
        double sum = 0;
        for (double v : captured_ms) sum += v;
        const double cap_tpot = sum / static_cast<double>(captured_ms.size());
        std::printf("  graph mode both: TTFT eager %.3f / captured %.3f ms; TPOT eager %.3f / captured %.3f ms "
                    "(host launch cost saved per decode step: %.3f ms)\n",
                    ms(pre_ps), ms(captured_pre), tpot, cap_tpot, tpot - cap_tpot);
        std::printf("  decode steps eager - captured (ms):");
        for (size_t i = 0; i < captured_ms.size() && i < step_ms.size(); ++i)
            if (i < 8 || i + 4 >= captured_ms.size()) std::printf(" %.3f", step_ms[i] - captured_ms[i]);
            else if (i == 8) std::printf(" ...");
        std::printf("\n");
        gm["captured"] = {{"ttft_ms", ms(captured_pre)}, {"decode_step_ms", captured_ms}, {"tpot_ms", cap_tpot}};
        gm["eager"] = {{"ttft_ms", ms(pre_ps)}, {"decode_step_ms", step_ms}, {"tpot_ms", tpot}};
    }
    uint64_t decode_ps = 0;
    for (uint64_t ps : totals.eager.decode_ps) decode_ps += ps;
    const double total_s = ms(pre_ps + decode_ps) / 1e3;
    const double gen = static_cast<double>(o.batch * (1 + o.decode));
    std::printf("  end to end: %.3f ms for %.0f generated tokens (%.1f tokens/s)\n", total_s * 1e3, gen, gen / total_s);
    nlohmann::json summary = s.base_summary();
    // Energy per generated token: the kernels' dynamic energy and the static power over prefill
    // and decode, per token (models/power/energy_report.h).
    summary["energy"]["per_token_j"] = power::energy_per_unit(summary["energy"], gen, total_s);
    std::printf("  energy: %.4g J per generated token; run %.4g J, average power %.1f W, peak %.1f W\n",
                summary["energy"]["per_token_j"].get<double>(), summary["energy"]["total_j"].get<double>(),
                summary["energy"]["average_power_w"].get<double>(), summary["energy"]["peak_power_w"].get<double>());
    nlohmann::json& j = summary["llm"];
    j["model"] = llm::model_json(c, o.quant);
    j["request"] = llm::request_json(o, prefill_steps);
    j["memory"] = llm::memory_json(m, -1, "");
    llm::add_figures(j, f);
    j["hbm_bytes_per_token"] = step_ms.empty() ? 0 : static_cast<double>(decode_bytes) / static_cast<double>(step_ms.size() * static_cast<size_t>(o.batch));
    j["plans_compiled"] = run.plans_compiled();
    j["graph_mode"] = gm;
    j["device_sampling"] = run.device_sampling();
    j["tokens"] = run.tokens();
    j["prefill_ops"] = print_phase(s, steps, true, 1, first_captured);
    if (!step_ms.empty()) j["decode_ops"] = print_phase(s, steps, false, step_ms.size(), first_captured);
    summary["reuse_timing"] = reuse_json(ropt, rc);
    j["reuse_timing"] = summary["reuse_timing"];
    s.write_outputs(summary);
    print_reuse(ropt, rc);
    if (!common.out.empty()) std::printf("  wrote %s/{summary.json,trace.json,stats.h5}\n", common.out.c_str());
    return kExitOk;
}

int cmd_llm(const std::vector<std::string>& args) {
    CommonOptions common;
    common.mode = "timing";  // the default: a 7B model's functional run needs its weights in host memory
    std::string model_arg, weights_path, graph_mode = "off", reuse_arg = "auto", quant = "none";
    bool exact = false;
    std::string system_file, simulate = "auto";
    uint32_t tp = 1, pp = 1, ep = 0;
    int64_t microbatches = 0;
    llm::RunOptions ro;
    po::options_description d("sfumato llm");
    add_run_options(d, common);
    add_reuse_option(d, reuse_arg);
    add_system_option(d, system_file);
    d.add_options()("tp", po::value<uint32_t>(&tp)->default_value(1),
                    "tensor parallel over chips 0..N-1 of the --system (heads, KV heads and the MLP split; an "
                    "all-reduce after o_proj and down_proj)")(
        "ep", po::value<uint32_t>(&ep)->default_value(0),
        "expert parallel over chips 0..E-1 of the --system (MoE models: experts sharded, attention data "
        "parallel over the batch, all-to-all dispatch and combine; docs/llm.md)")(
        "pp", po::value<uint32_t>(&pp)->default_value(1),
        "pipeline parallel: the layers in M stages on chips 0..M-1 of the --system (with --tp T: M groups of T "
        "chips), activations sent stage to stage")(
        "microbatches", po::value<int64_t>(&microbatches)->default_value(0),
        "with --pp: micro-batches the batch splits into (0: as many as stages, at most the batch)")(
        "simulate", po::value<std::string>(&simulate)->default_value("auto"),
        "with --system: all: every chip's kernels | one: chip 0's kernels only, the other chips follow it (timing "
        "mode; an approximation: they meet chip 0 a notify's latency late) and run their part of every all-reduce | "
        "auto: all")("model", po::value<std::string>(&model_arg), "config.json, or a shipped model name (configs/llm)")(
        "prefill", po::value<int64_t>(&ro.prefill)->default_value(128), "prompt tokens per sequence")(
        "decode", po::value<int64_t>(&ro.decode)->default_value(16), "decode steps (one token per sequence each)")(
        "batch", po::value<int64_t>(&ro.batch)->default_value(1), "sequences")(
        "block-size", po::value<int64_t>(&ro.block_size)->default_value(128), "KV cache block size (tokens)")(
        "kv-blocks", po::value<int64_t>(&ro.kv_blocks)->default_value(0), "KV cache blocks (0: --kv-mem-fraction)")(
        "max-prefill-tokens", po::value<int64_t>(&ro.max_prefill_tokens)->default_value(ro.max_prefill_tokens),
        "new tokens a prefill step takes at most: prompts prefill in groups, a longer one in chunks")(
        "kv-mem-fraction", po::value<double>(&ro.kv_mem_fraction)->default_value(0.9),
        "share of the memory left after weights and activations for the KV cache")(
        "seed", po::value<uint64_t>(&ro.seed)->default_value(1), "seed of the random weights and prompts")(
        "weights", po::value<std::string>(&weights_path), "FILE.safetensors: real weights (functional runs)")(
        "exact", po::bool_switch(&exact), "simulate every kernel (--reuse-timing off)")(
        "quant", po::value<std::string>(&quant)->default_value("none"),
        "none | w8a8: int8 QKV, output, gate/up and down projections with per-channel scales, per-token "
        "dynamic activation quant, dequant in the matmul epilogue")(
        "graph-mode", po::value<std::string>(&graph_mode)->default_value("off"),
        "off: eager launches (each pays the host launch cost) | on: each step captured and launched as one "
        "model | both: the request eagerly, then captured, each step reported both ways");
    po::positional_options_description pos;
    pos.add("model", 1);
    po::variables_map vm;
    if (!parse_command(args, "sfumato llm MODEL --config F | --system F [--tp N] [options]", d, vm, &pos)) return kExitOk;
    if (model_arg.empty()) throw InputError("llm: give a model (config.json or a shipped name)");
    using GM = llm::RunOptions::GraphMode;
    if (graph_mode == "off")
        ro.graph_mode = GM::Eager;
    else if (graph_mode == "on")
        ro.graph_mode = GM::Captured;
    else if (graph_mode == "both")
        ro.graph_mode = GM::Both;
    else
        throw InputError("--graph-mode must be on, off or both, not '" + graph_mode + "'");
    ro.quant = llm::parse_quant(quant);
    const llm::ModelConfig cfg = llm::load_model_config(model_arg, {preset_dir() + "/llm"});
    if (tp != 1 && system_file.empty()) throw InputError("--tp " + std::to_string(tp) + " needs --system F (a system of chips)");
    if (ep != 0) {
        if (system_file.empty())
            throw InputError("--ep " + std::to_string(ep) + " needs --system F (a system of chips)");
        if (tp != 1) throw InputError("--ep with --tp (attention TP inside EP) is not modelled: give one of them");
        if (pp != 1 || microbatches != 0) throw InputError("--ep with --pp is not modelled: give one of them");
        if (!common.record.empty()) throw InputError("--record is not supported with --system");
        const std::string reuse = exact ? "off" : reuse_arg;
        return run_llm_ep({args, common, system_file, ep, cfg, ro, weights_path, reuse, simulate});
    }
    if ((pp != 1 || microbatches != 0) && system_file.empty())
        throw InputError("--pp " + std::to_string(pp) + " needs --system F (a system of chips)");
    if (!system_file.empty()) {
        if (!common.record.empty()) throw InputError("--record is not supported with --system");
        if (pp != 1 || microbatches != 0)
            return run_llm_pp({args, common, system_file, pp, tp, microbatches, cfg, ro, weights_path,
                               exact ? "off" : reuse_arg, simulate});
        return run_llm_tp({args, common, system_file, tp, cfg, ro, weights_path, exact ? "off" : reuse_arg, simulate});
    }
    std::string cmdline = "sfumato llm";
    for (const auto& a : args) cmdline += " " + a;
    Session s(common, cmdline);
    if (fs::is_regular_file(model_arg)) s.add_input("model", model_arg);
    s.elaborate();
    if (s.functional() && !weights_path.empty()) s.add_input("weights", weights_path);
    const llm::ModelWeights weights = llm::host_weights(cfg, ro.seed, s.functional(), weights_path);
    if (s.functional()) ro.weights = &weights;
    reuse::ReuseOptions ropt =
        reuse_options(exact ? "off" : reuse_arg, s.functional(),
                      !common.record.empty() && common.record_level == "instructions", s.chip_params());
    ropt.traffic = s.chip().memory_system();  // stand-ins leave the L2 as their kernels would
    std::unique_ptr<reuse::TimingReuse> reuser;
    llm::LlmRun run(cfg, ro, s.chip().info());
    Progress progress(run.kernels_expected());
    s.run(
        [&](rt::Runtime& rt) {
            reuser = std::make_unique<reuse::TimingReuse>(rt.context(), rt.device_info(), ropt);
            run.run(rt);
            reuser->settle();  // the last stand-ins' traffic, before the stats are read
            progress.finish();
        },
        [&] { progress.update(s); });
    return print_llm(s, run, common, ropt, reuser ? reuser->counters() : reuse::ReuseCounters{});
}

}  // namespace

SFUMATO_COMMAND("llm", "LLM inference (prefill + decode) of a Hugging Face decoder model", cmd_llm);

}  // namespace sfumato::cli
