// The multi-chip commands whose ranks run one plan on identical chips (train-step, llm --tp/--pp)
// take the same cycles in functional mode, in timing mode by default and (train-step) in timing
// mode with every rank simulated (`--simulate all`): the default never takes the one-rank
// shortcut (`--simulate one`, an approximation: runtime/system/simulate.h), on several systems
// (a full mesh, a ring, two servers over the NICs) and models (an MLP in two buckets, a small
// ResNet, the tiny LLM).
#include "tests/cli_summary.h"

using namespace sfumato;
using namespace sfumato::test;

namespace {

const std::string kMlp = "\"zoo:mlp?in=16&hidden=32&layers=2&classes=8\"";
const std::string kResNet = "\"zoo:resnet18?image=64&width=8&classes=10\"";

nlohmann::json train(const std::string& model, const std::string& args, const std::string& name) {
    return summary_of("train-step " + model + " " + tiny_system() + args, name);
}

}  // namespace

TEST_CASE("train-step: functional, timing (default) and timing --simulate all take the same cycles", "[train]") {
    struct Case {
        std::string model, args;
        uint32_t ranks;
    };
    const Case cases[] = {
        // 2 chips, full mesh (the reproduction); two buckets, the first reduced while the
        // backward still computes.
        {kMlp, "--set system.chips_per_server=2 --batch 2 --bucket-mb 0.001", 2},
        // 4 chips on a ring (ring or halving-doubling all-reduces), fp32.
        {kMlp, "--set system.topology=ring --batch 2 --precision fp32 --bucket-mb 0.001", 4},
        // 2 servers of 2 chips: the all-reduce crosses the NICs and the switch.
        {kMlp, "--set system.chips_per_server=2 --set system.servers=2 --batch 2", 4},
        // convolutions, pooling, BatchNorm, residuals; several buckets.
        {kResNet, "--set system.chips_per_server=2 --batch 2 --bucket-mb 0.1", 2},
    };
    int i = 0;
    for (const Case& c : cases) {
        const std::string n = "sim_exact" + std::to_string(i++);
        const nlohmann::json f = train(c.model, c.args + " --mode functional", n + "f");
        const nlohmann::json t = train(c.model, c.args + " --mode timing", n + "t");
        const nlohmann::json a = train(c.model, c.args + " --mode timing --simulate all", n + "a");
        INFO(c.model << " " << c.args);
        CHECK(f["check"]["passed"] == true);
        CHECK(t["simulate"] == "all");
        CHECK(t["ranks_simulated"] == c.ranks);
        CHECK(f["step_cycles"].get<uint64_t>() > 0);
        CHECK(t["step_cycles"] == f["step_cycles"]);
        CHECK(a["step_cycles"] == f["step_cycles"]);
        for (const char* k : {"step_us", "compute_us", "comm_us", "overlap_us", "exposed_comm_us"}) {
            INFO(k);
            CHECK(t.at(k) == f.at(k));
            CHECK(a.at(k) == f.at(k));
        }
    }
}

TEST_CASE("train-step: --simulate one stays available as a reported approximation", "[train]") {
    const std::string out = temp_dir("sim_one");
    const CliResult r = run_cli("train-step " + kMlp + " " + tiny_system() +
                                "--set system.chips_per_server=2 --batch 2 --mode timing --simulate one --out " + out);
    INFO(r.output);
    REQUIRE(r.code == 0);
    CHECK(r.output.find("APPROXIMATION --simulate one") != std::string::npos);
    const nlohmann::json s = read_json(out + "/summary.json");
    CHECK(s["simulate"] == "one");
    CHECK(s["ranks_simulated"] == 1);
}

TEST_CASE("llm --tp and --pp --tp: timing mode by default takes functional mode's cycles", "[llm]") {
    for (const std::string plan : {"--tp 2", "--pp 2 --tp 2"}) {
        const std::string req = "llm tiny " + tiny_system() + plan + " --prefill 16 --decode 4 --batch 2 --seed 7";
        const nlohmann::json f = summary_of(req + " --mode functional", "sim_llm_f");
        // --exact: kernel timing re-use (on by default in timing mode, an approximation of its own) off.
        const nlohmann::json t = summary_of(req + " --mode timing --exact", "sim_llm_t");
        INFO(plan);
        CHECK(t["llm"]["parallel"]["simulate"] == "all");
        CHECK(f["total_cycles"].get<uint64_t>() > 0);
        CHECK(t["total_cycles"] == f["total_cycles"]);
        CHECK(t["llm"]["ttft_ms"] == f["llm"]["ttft_ms"]);
        CHECK(t["llm"]["tpot_ms"] == f["llm"]["tpot_ms"]);
    }
}
