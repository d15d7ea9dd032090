// The benchmark loop (`sfumato kernel OP ... --repeat N`, runtime/ops/bench_loop.h) through the
// CLI: N launches of the same op back to back, the first launch and the steady state reported
// apart, and in steady state no memory-bound op beats the HBM roofline of its own traffic (a
// single cold launch can: it ends with up to an L2 of its output still dirty in L2, written back
// by the next launch, which the loop charges).
#include <catch2/catch.hpp>

#include "models/chip/chip_params.h"
#include "tests/support.h"

using namespace sfumato;
using namespace sfumato::test;

namespace {

ChipParams preset(const std::string& name) {
    Config c;
    c.load_ini(config(name));
    return ChipParams(c);
}

}  // namespace

TEST_CASE("bench loop: a large fp32 exp in steady state stays under the HBM roofline of its traffic") {
    // 4 MiB in and 4 MiB out on tiny (1 MiB L2): the output overflows the L2, so each launch
    // writes back what the previous one left dirty.
    const std::string out = temp_dir("loop_exp");
    const CliResult r = run_cli("kernel exp --n 1048576 --dtype fp32 --config " + config("tiny") +
                                " --mode timing --trace off --repeat 3 --out " + out);
    INFO(r.output);
    REQUIRE(r.code == 0);
    CHECK(r.output.find("steady state (mean of launches 2..3)") != std::string::npos);
    const auto s = read_json(out + "/summary.json");
    REQUIRE(s["ops"].size() == 3);  // one kernel per launch
    const auto& loop = s["repeat"];
    CHECK(loop["launches"] == 3);
    const double bytes = 2.0 * 1048576 * 4;  // compulsory: read x once, write y once
    CHECK(s["ops"][0]["bytes"].get<double>() == bytes);
    const ChipParams p = preset("tiny");
    const double hbm_bytes_per_cycle = chip_peaks(p).gm_gbps * 1e3 / static_cast<double>(p.clock_mhz);
    const double steady = loop["steady_cycles"].get<double>();
    CHECK(steady >= bytes / hbm_bytes_per_cycle);
    CHECK(loop["steady_roofline_fraction"].get<double>() <= 1.0);
    // The steady launches are the 2nd and 3rd; their mean is what is reported.
    const auto& per = loop["launch_cycles"];
    CHECK(steady == Approx((per[1].get<double>() + per[2].get<double>()) / 2));
    CHECK(loop["first_cycles"] == per[0]);
    CHECK(per[0] == s["ops"][0]["cycles"]);
}

TEST_CASE("bench loop: functional results are checked after the loop, and a bad count exits 2") {
    const CliResult r = run_cli("kernel add --shape-a 4096 --dtype fp32 --config " + config("tiny") + " --repeat 2");
    INFO(r.output);
    CHECK(r.code == 0);
    CHECK(r.output.find("check: passed") != std::string::npos);
    const CliResult bad = run_cli("kernel add --shape-a 4096 --config " + config("tiny") + " --repeat 0");
    CHECK(bad.code == 2);
    CHECK(bad.output.find("--repeat") != std::string::npos);
}
