// `sfumato llm` with a mixture-of-experts model (MixtralForCausalLM): Mixtral-8x7B's weights do
// not fit one 910B-like chip, which exits 2 with the shortfall before anything is compiled or
// simulated; the tiny MoE model runs in timing mode with the seeded routing, prints the MoE
// operators in its per-op tables and takes bit-identical cycles when run again.
#include <catch2/catch.hpp>

#include "tests/support.h"

using namespace sfumato;
using namespace sfumato::test;

TEST_CASE("llm moe cli: Mixtral-8x7B on one 64 GiB chip exits 2 with the shortfall") {
    const CliResult r = run_cli("llm mixtral-8x7b --config " + config("ascend910b-like") +
                                " --prefill 1024 --decode 16 --batch 1 --mode timing --trace off");
    INFO(r.output);
    CHECK(r.code == 2);
    CHECK_THAT(r.output, Catch::Contains("mixtral-8x7b does not fit the device"));
    // 46.7 B parameters at 2 bytes: 86.99 GiB, over the chip's allocatable memory.
    CHECK_THAT(r.output, Catch::Contains("weights take 86.99"));
    CHECK_THAT(r.output, Catch::Contains(" by "));
}

TEST_CASE("llm moe cli: the tiny MoE model in timing mode shows its MoE operators, same cycles twice") {
    const std::string args = "llm tiny-moe --config " + config("tiny") +
                             " --prefill 24 --decode 4 --mode timing --trace off --out ";
    std::string ttft[2], tpot[2];
    for (int pass = 0; pass < 2; ++pass) {
        const std::string out = temp_dir("llm_moe_timing" + std::to_string(pass));
        const CliResult r = run_cli(args + out);
        INFO(r.output);
        REQUIRE(r.code == 0);
        for (const char* op :
             {"moe_route", "moe_permute", "experts_gate_up", "experts_swiglu", "experts_down", "moe_combine"})
            CHECK_THAT(r.output, Catch::Contains(op));
        const nlohmann::json s = read_json(out + "/summary.json");
        ttft[pass] = s["llm"]["ttft_ms"].dump();
        tpot[pass] = s["llm"]["decode_step_ms"].dump();
    }
    CHECK(ttft[0] == ttft[1]);
    CHECK(tpot[0] == tpot[1]);
}
