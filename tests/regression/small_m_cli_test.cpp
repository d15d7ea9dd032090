// Small-M (decode) matmuls on the 910B-like preset against the HBM (issue 28's acceptance: M =
// 16-160 fp16 shapes with N K >= 32 Mi stream B at >= 0.70 of the HBM peak, cold L2), and the
// balanced split-K work split (MatmulTiling::unit_begin) end to end: the result passes the check
// and timing mode takes the functional mode's cycles.
#include <catch2/catch.hpp>

#include "models/chip/chip_params.h"
#include "tests/support.h"

using namespace sfumato;
using namespace sfumato::test;

namespace {

nlohmann::json run_ok(const std::string& args, const std::string& tag) {
    const std::string out = temp_dir("smallm_" + tag);
    const CliResult r = run_cli("kernel matmul " + args + " --config " + config("ascend910b-like") +
                                " --trace off --out " + out);
    INFO(r.output);
    REQUIRE(r.code == 0);
    return read_json(out + "/summary.json");
}

double hbm_bytes_per_cycle() {
    Config c;
    c.load_ini(config("ascend910b-like"));
    ChipParams p(c);
    return mem::hbm_peak_gbps(p.mem.hbm) / p.clock().freq_ghz();
}

}  // namespace

TEST_CASE("small M: M = 160 with a row-major B streams at >= 0.70 of the HBM peak, never above it") {
    // The two shapes the round-robin split left at 0.665: every block had the same items, while
    // the scheduler starts MIX blocks one after another, so the first blocks ended early and the
    // last ran alone at their cube's rate with the HBM idle.
    const double peak = hbm_bytes_per_cycle();
    for (const char* nk : {"--n 4096 --k 8192", "--n 8192 --k 4096"}) {
        INFO(nk);
        const auto op = run_ok(std::string("--m 160 ") + nk + " --dtype fp16 --out-dtype fp16 --mode timing",
                               nk[4] == '4' ? "160_4k8k" : "160_8k4k")["ops"][0];
        const double bytes = op["bytes"].get<double>(), cycles = op["cycles"].get<double>();
        CHECK(bytes >= 4096.0 * 8192 * 2);  // B, read once
        INFO("GM bytes / cycle " << bytes / cycles << ", HBM peak " << peak);
        CHECK(bytes / cycles >= 0.70 * peak);
        CHECK(bytes / cycles <= peak);
    }
}

TEST_CASE("small M: the balanced split-K work split passes the check, timing mode takes the same cycles") {
    // 128 x 1024 x 8192: 8 tiles split over the 24 blocks in k-chunk ranges that cut tiles and
    // parts (segments), each adding its partial sum into C; against round robin of whole items.
    const std::string args = "--m 128 --n 1024 --k 8192 --dtype fp16 --out-dtype fp16";
    const auto bal = run_ok(args + " --check", "bal"),
               rr = run_ok(args + " --check --split-k-balance off", "rr");
    const auto tim = run_ok(args + " --mode timing", "bal_t");
    CHECK(bal["ops"][0]["name"].get<std::string>().find("[split-K") != std::string::npos);
    CHECK(bal["check"]["passed"] == true);
    CHECK(rr["check"]["passed"] == true);
    CHECK(tim["ops"][0]["cycles"] == bal["ops"][0]["cycles"]);
    CHECK(bal["ops"][0]["cycles"].get<double>() < rr["ops"][0]["cycles"].get<double>());
}
