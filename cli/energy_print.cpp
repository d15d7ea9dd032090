#include "cli/energy_print.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "models/power/energy_report.h"

namespace sfumato::cli {

void print_system_energy(const nlohmann::json& e, double time_us) {
    if (!e.is_object() || !e.contains("total_j")) return;
    const double total = e["total_j"].get<double>();
    double links = 0, chip_link = 0, nic = 0, sw = 0, sw_static = 0;
    if (e.contains("fabric")) {
        const nlohmann::json& f = e["fabric"];
        links = f["total_j"].get<double>();
        chip_link = f["by_kind_j"]["chip_link"].get<double>();
        nic = f["by_kind_j"]["nic"].get<double>();
        sw = f["by_kind_j"]["switch"].get<double>();
        sw_static = f["static_j"].get<double>();
    }
    const size_t chips = e.contains("chips") ? e["chips"].size() : 0;
    std::printf("  energy over the run (%.3f us): %.4g J, average power %.1f W; %zu chips %.4g J, links %.4g J "
                "(chip-to-chip %.4g J, NICs %.4g J, switch %.4g J + ports %.4g J)\n",
                time_us, total, e["average_power_w"].get<double>(), chips, total - links, links, chip_link, nic, sw,
                sw_static);
    if (chips < 2) return;
    double lo = 1e300, hi = 0;
    for (const nlohmann::json& c : e["chips"]) {
        const double j = c.value("total_with_links_j", c["total_j"].get<double>());
        lo = std::min(lo, j);
        hi = std::max(hi, j);
    }
    std::printf("  energy per chip with the links it drives: %.4g to %.4g J (summary.json energy.chips[])\n", lo, hi);
}

void add_serve_energy(nlohmann::json& summary) {
    if (!summary.contains("energy") || !summary.contains("serve") || !summary["serve"].contains("metrics")) return;
    const nlohmann::json& m = summary["serve"]["metrics"];
    const double seconds = m.value("duration_s", 0.0);
    const double tokens = std::round(m.value("output_tokens_per_s", 0.0) * seconds);
    nlohmann::json& e = summary["energy"];
    e["per_output_token_j"] = power::energy_per_unit(e, tokens, seconds);
    std::printf("  energy: %.4g J per output token (%.0f tokens in %.3f ms); run %.4g J, average power %.1f W\n",
                e["per_output_token_j"].get<double>(), tokens, seconds * 1e3, e["total_j"].get<double>(),
                e["average_power_w"].get<double>());
}

}  // namespace sfumato::cli
