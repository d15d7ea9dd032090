// The shared pieces of the several-chip `sfumato llm` forms (see llm_common.h).
#include "cli/llm_common.h"

#include <cstdio>

#include "cli/reuse_option.h"
#include "models/power/energy_report.h"
#include "runtime/llm/system_parallel.h"
#include "runtime/system/simulate.h"
#include "sim/error.h"

namespace sfumato::cli {

bool simulate_one(const std::string& simulate, bool functional) { return sys::mirror_ranks(simulate, functional); }

void print_figures(const llm::Figures& f, int64_t batch, bool prefill_steps) {
    if (prefill_steps)
        std::printf("  TTFT (prefill, no queueing): %.3f ms (%zu prefill step%s)\n", f.ttft_ms, f.prefill_steps,
                    f.prefill_steps == 1 ? "" : "s");
    else
        std::printf("  TTFT (prefill, no queueing): %.3f ms\n", f.ttft_ms);
    if (f.step_ms.empty()) return;
    std::printf("  decode steps (ms):");
    for (size_t i = 0; i < f.step_ms.size(); ++i)
        if (i < 8 || i + 4 >= f.step_ms.size())
            std::printf(" %.3f", f.step_ms[i]);
        else if (i == 8)
            std::printf(" ...");
    std::printf("\n  TPOT (mean decode step): %.3f ms; decode throughput %.1f tokens/s (batch %lld)\n", f.tpot_ms,
                f.tokens_per_s, static_cast<long long>(batch));
}

namespace {
// Energy per generated token over the chips and the links between them: the kernels' and links'
// dynamic energy and the static power over prefill and decode, per token
// (models/power/energy_report.h).
void print_energy_per_token(nlohmann::json& summary, const std::vector<llm::StepRecord>& steps) {
    if (!summary.contains("energy") || !summary["llm"].contains("request")) return;
    const nlohmann::json& r = summary["llm"]["request"];
    const double gen = r.value("batch", 0.0) * (1 + r.value("decode", 0.0));
    const llm::PhaseTotals t = llm::run_totals(steps, false).eager;
    double ps = static_cast<double>(t.prefill_ps);
    for (uint64_t d : t.decode_ps) ps += static_cast<double>(d);
    nlohmann::json& e = summary["energy"];
    e["per_token_j"] = power::energy_per_unit(e, gen, ps * 1e-12);
    std::printf("  energy: %.4g J per generated token over %zu simulated chips and their links; run %.4g J (links "
                "%.4g J), average power %.1f W\n",
                e["per_token_j"].get<double>(), e["chips"].size(), e["total_j"].get<double>(),
                e.contains("fabric") ? e["fabric"]["total_j"].get<double>() : 0.0, e["average_power_w"].get<double>());
}
}  // namespace

void finish_llm_run(SystemSession& s, nlohmann::json& summary, const std::vector<llm::StepRecord>& steps,
                    const reuse::ReuseOptions& ropt, const reuse::ReuseCounters& rc, double wall_s,
                    const std::string& out_dir, const llm::PathBound* path) {
    print_reuse(ropt, rc);
    nlohmann::json rj = reuse_json(ropt, rc);
    if (path && ropt.mode != reuse::ReuseMode::Off) {
        const llm::PathFractions pf = llm::path_fractions(steps, *path);
        const double ttft = pf.ttft, tpot = pf.tpot;
        if (pf.known) {
            std::printf("  estimated error bound along the critical path across the chips: "
                        "TTFT %.3g %%, TPOT %.3g %%\n",
                        100 * ttft, 100 * tpot);
            rj["ttft_error_bound_fraction"] = ttft;
            rj["tpot_error_bound_fraction"] = tpot;
        } else {
            rj["ttft_error_bound_fraction"] = nullptr;
            rj["tpot_error_bound_fraction"] = nullptr;
        }
    }
    print_energy_per_token(summary, steps);
    std::printf("  wall %.1f s\n", wall_s);
    nlohmann::json& j = summary["llm"];
    j["wall_s"] = wall_s;
    summary["reuse_timing"] = rj;
    j["reuse_timing"] = summary["reuse_timing"];
    if (!steps.empty())
        summary["links"] = s.links_json(steps.front().begin_ps, steps.back().begin_ps + steps.back().ps);
    s.write_outputs(summary);
    if (!out_dir.empty()) std::printf("  wrote %s/{summary.json,trace.json,stats.h5}\n", out_dir.c_str());
}

}  // namespace sfumato::cli
