// The LLM operators' `sfumato kernel` forms
// (runtime/ops/llm/standalone_llm.cpp) end to end: on the tiny (split),
// 910B-like (split) and 910-like (coupled) presets the functional run matches
// the host reference and timing mode takes exactly the same cycles; on both
// large presets each op's time, L2 cold, is at least the bytes it must read
// over the HBM peak and at least all its compulsory bytes over the fastest
// on-chip data path (both from the preset's parameters, not from the op's own
// roofline fields); bad arguments exit 2 naming them.
#include <catch2/catch.hpp>
#include <random>
#include <set>

#include "models/chip/chip_params.h"
#include "tests/support.h"

using namespace sfumato;
using namespace sfumato::test;

namespace {

nlohmann::json run_form(const std::string& form, const std::string& preset, const std::string& mode,
                        const std::string& out) {
    const CliResult r = run_cli("kernel " + form + " --config " + config(preset) +
                                " --trace off --l2 cold --mode " + mode + " --out " + out);
    INFO(form << " on " << preset << " (" << mode << "): " << r.output);
    REQUIRE(r.code == 0);
    return read_json(out + "/summary.json");
}

}  // namespace

TEST_CASE(
    "llm ops: functional check passes and timing mode gives identical cycles on split and coupled parts",
    "[llm]") {
    const std::string dir = temp_dir("llm_ops");
    struct Case {
        const char* preset;
        const char* form;
    };
    const Case cases[] = {
        {"tiny", "rmsnorm --rows 37 --cols 300 --residual 1 --dtype fp16"},
        {"tiny", "rmsnorm --rows 5 --cols 64 --dtype bf16"},
        {"tiny", "rope --tokens 21 --heads 3 --head-dim 64 --positions 100 --style half"},
        {"tiny",
         "rope --tokens 9 --heads 2 --head-dim 128 --rotary-dim 64 --positions 50 --style interleaved "
         "--dtype bf16"},
        {"tiny", "swiglu --rows 13 --inter 300"},
        {"tiny", "embedding --vocab 3000 --hidden 256 --tokens 40"},
        {"ascend910b-like", "rmsnorm --rows 64 --cols 4096 --residual 1"},
        {"ascend910b-like", "rope --tokens 32 --heads 8 --head-dim 128 --positions 2048"},
        {"ascend910-like", "rmsnorm --rows 40 --cols 5120 --residual 1 --dtype bf16"},
        {"ascend910-like", "swiglu --rows 16 --inter 2000"},
        {"ascend910-like", "embedding --vocab 1000 --hidden 512 --tokens 24"},
        {"tiny", "sample --rows 5 --vocab 3000 --top-k 8 --temperature 0.9 --seed 2"},
        {"ascend910b-like", "sample --rows 4 --vocab 32000 --top-k 40 --dtype bf16"},
        {"ascend910-like", "sample --rows 3 --vocab 32000"},
    };
    int i = 0;
    for (const Case& c : cases) {
        INFO(c.preset << ": " << c.form);
        const nlohmann::json f = run_form(c.form, c.preset, "functional", dir + "/f" + std::to_string(i));
        CHECK(f["check"]["checked"] == true);
        CHECK(f["check"]["passed"] == true);
        const nlohmann::json t = run_form(c.form, c.preset, "timing", dir + "/t" + std::to_string(i));
        CHECK(f["total_cycles"] == t["total_cycles"]);
        ++i;
    }
}

TEST_CASE("llm ops: time is bounded below by the HBM peak (cold reads) and the fastest on-chip path",
          "[llm]") {
    const std::string dir = temp_dir("llm_ops_limit");
    struct Case {
        std::string form;
        double hbm_read,
            chip;  // bytes that must come from HBM (cold L2); all bytes moved
    };
    const double T = 2048, H = 4096, I = 11008, N = 32, D = 128;
    // The embedding form draws its ids with mt19937(77) uniformly over the
    // vocabulary (as the form does): only distinct rows must come from HBM.
    std::mt19937 rng(77);
    std::uniform_int_distribution<int64_t> draw(0, 31999);
    std::set<int64_t> rows;
    for (int t = 0; t < 2048; ++t) rows.insert(draw(rng));
    const double distinct = static_cast<double>(rows.size());
    const std::vector<Case> cases = {
        {"rmsnorm --rows 2048 --cols 4096 --residual 1", 2 * T * H * 2 + H * 2, 4 * T * H * 2 + H * 2},
        {"swiglu --rows 2048 --inter 11008", T * 2 * I * 2, T * 3 * I * 2},
        // Positions repeat (2048 draws over 4096 rows): the cos_sin rows count on
        // chip only.
        {"rope --tokens 2048 --heads 32 --head-dim 128 --positions 4096", T * N * D * 2 + T * 4,
         2 * T * N * D * 2 + T * 4 + T * D * 2},
        {"embedding --vocab 32000 --hidden 4096 --tokens 2048", distinct * H * 2 + T * 4,
         2 * T * H * 2 + T * 4},
        {"sample --rows 16 --vocab 152064", 16.0 * 152064 * 2, 16.0 * 152064 * 2 + 16 * 4},
    };
    for (const char* preset : {"ascend910b-like", "ascend910-like"}) {
        Config cfg;
        cfg.load_ini(config(preset));
        const DeviceInfo d = device_info(ChipParams(cfg), false);
        for (const Case& c : cases) {
            INFO(preset << ": " << c.form);
            const nlohmann::json s = run_form(c.form, preset, "timing", dir + "/" + preset);
            const double cycles = s["ops"][0]["cycles"].get<double>();
            const double hbm = c.hbm_read / d.gm_bytes_per_cycle, chip = c.chip / d.mem_max_bytes_per_cycle;
            INFO("cycles " << cycles << ", HBM bound " << hbm << ", on-chip bound " << chip);
            CHECK(cycles >= hbm);
            CHECK(cycles >= chip);
        }
    }
}

TEST_CASE("llm ops: bad arguments exit 2 naming the argument", "[llm]") {
    const std::vector<std::pair<std::string, std::string>> bad = {
        {"rmsnorm --rows 4 --cols 8 --dtype int8", "'dtype'"},
        {"rope --tokens 4 --heads 2 --head-dim 72", "multiples of 16"},
        {"rope --tokens 4 --heads 2 --head-dim 64 --style neox", "'style'"},
        {"rmsnorm --rows 4 --cols 100000", "does not fit in UB"},
        {"swiglu --rows 0 --inter 8", "'rows'"},
    };
    for (const auto& [args, name] : bad) {
        INFO(args);
        const CliResult r = run_cli("kernel " + args + " --config " + config("tiny"));
        CHECK(r.code == 2);
        CHECK(r.output.find(name) != std::string::npos);
    }
}
