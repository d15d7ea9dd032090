// The MoE and W8A8 `sfumato kernel` forms (runtime/ops/llm/standalone_moe.cpp) end to end: on
// the tiny (split), 910B-like (split) and 910-like (coupled) presets the functional run matches
// the host reference and timing mode takes exactly the same cycles (the routing is host-known);
// a decode-sized grouped matmul on the 910B-like preset, L2 cold, takes at least the bytes of the
// experts that have rows over the HBM peak (from the preset's parameters); bad arguments exit 2
// naming them.
#include <catch2/catch.hpp>
#include <random>

#include "models/chip/chip_params.h"
#include "tests/support.h"

using namespace sfumato;
using namespace sfumato::test;

namespace {

nlohmann::json run_form(const std::string& form, const std::string& preset, const std::string& mode,
                        const std::string& out) {
    const CliResult r = run_cli("kernel " + form + " --config " + config(preset) + " --trace off --l2 cold --mode " +
                                mode + " --out " + out);
    INFO(form << " on " << preset << " (" << mode << "): " << r.output);
    REQUIRE(r.code == 0);
    return read_json(out + "/summary.json");
}

}  // namespace

TEST_CASE("moe / w8a8 forms: functional check passes and timing mode gives identical cycles", "[llm][moe]") {
    const std::string dir = temp_dir("llm_moe");
    const std::pair<const char*, const char*> cases[] = {
        {"tiny", "moe --tokens 24 --hidden 128 --inter 64 --experts 8 --top-k 2"},
        {"tiny", "moe --tokens 9 --hidden 64 --inter 32 --experts 4 --top-k 1 --dtype bf16"},
        {"tiny", "grouped_matmul --rows 70 --k 128 --n 96 --experts 6"},
        {"tiny", "moe_router --tokens 21 --experts 70 --top-k 3"},
        {"tiny", "dynamic_quant --rows 11 --cols 300 --dtype bf16"},
        {"tiny", "matmul_w8a8 --m 7 --k 256 --n 96"},
        {"ascend910b-like", "moe --tokens 32 --hidden 256 --inter 128 --experts 8 --top-k 2"},
        {"ascend910b-like", "matmul_w8a8 --m 4 --k 1024 --n 512 --output-dtype bf16"},
        {"ascend910-like", "moe --tokens 16 --hidden 128 --inter 64 --experts 8 --top-k 2"},
        {"ascend910-like", "matmul_w8a8 --m 9 --k 512 --n 128"},
    };
    int i = 0;
    for (const auto& [preset, form] : cases) {
        INFO(preset << ": " << form);
        const nlohmann::json f = run_form(form, preset, "functional", dir + "/f" + std::to_string(i));
        CHECK(f["check"]["checked"] == true);
        CHECK(f["check"]["passed"] == true);
        const nlohmann::json t = run_form(form, preset, "timing", dir + "/t" + std::to_string(i));
        CHECK(f["total_cycles"] == t["total_cycles"]);
        ++i;
    }
}

TEST_CASE("grouped matmul at decode size is bounded below by the active experts' weights over the HBM peak",
          "[llm][moe]") {
    // The form's group sizes: rows drawn with mt19937(41) as E * u * u (as the form does).
    const int64_t R = 16, K = 2048, N = 1024, E = 8;
    std::mt19937 rng(41);
    std::uniform_real_distribution<double> u(0, 1);
    std::vector<int64_t> sizes(E, 0);
    for (int64_t r = 0; r < R; ++r) ++sizes[static_cast<size_t>(std::min<int64_t>(E - 1, static_cast<int64_t>(E * u(rng) * u(rng))))];
    double active = 0;
    for (int64_t s : sizes) active += s > 0;
    Config cfg;
    cfg.load_ini(config("ascend910b-like"));
    const DeviceInfo d = device_info(ChipParams(cfg), false);
    const nlohmann::json s = run_form("grouped_matmul --rows 16 --k 2048 --n 1024 --experts 8", "ascend910b-like", "timing",
                                      temp_dir("llm_moe_limit"));
    const double cycles = s["ops"][0]["cycles"].get<double>(), bound = active * K * N * 2 / d.gm_bytes_per_cycle;
    INFO("cycles " << cycles << ", active experts " << active << ", HBM bound " << bound);
    CHECK(active < E);  // a ragged load: some experts have no rows and cost no weight traffic
    CHECK(cycles >= bound);
}

TEST_CASE("moe / w8a8 forms: bad arguments exit 2 naming the argument", "[llm][moe]") {
    const std::vector<std::pair<std::string, std::string>> bad = {
        {"moe --tokens 4 --hidden 64 --inter 32 --experts 4 --top-k 5", "'top_k'"},
        {"moe_router --tokens 4 --experts 8 --top-k 9", "'top_k'"},
        {"moe --tokens 4 --hidden 64 --inter 32 --experts 4 --dtype int8", "'dtype'"},
        {"matmul_w8a8 --m 4 --k 64 --n 32 --output-dtype fp32", "'output_dtype'"},
        {"grouped_matmul --rows 0 --k 64 --n 32 --experts 4", "'rows'"},
    };
    for (const auto& [args, name] : bad) {
        INFO(args);
        const CliResult r = run_cli("kernel " + args + " --config " + config("tiny"));
        CHECK(r.code == 2);
        CHECK(r.output.find(name) != std::string::npos);
    }
}
