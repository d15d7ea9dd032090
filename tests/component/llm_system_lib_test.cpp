// The LLM's several-chip host programs as a library (runtime/llm/system_parallel.h), driven from
// C++ the way a user's program would: build a two-chip system (models/link), hand it to
// sys::SystemRun, run the tiny model tensor parallel over both chips with llm::run_tp, and get the
// `llm` section, the tokens and the total cycles `sfumato llm --system F --tp 2` writes for the
// same request.
#include <catch2/catch.hpp>

#include "runtime/llm/model_config.h"
#include "runtime/llm/system_parallel.h"
#include "tests/component/system_fixture.h"
#include "tests/support.h"

using namespace sfumato;
using namespace sfumato::test;

TEST_CASE("llm system library: TP=2 driven from C++ gives the CLI's llm section, tokens and cycles", "[llm][system]") {
    const std::string dir = temp_dir("llm_system_lib");
    const std::string two_chips = "system.chips_per_server=2";
    const int64_t prefill = 12, decode = 5, batch = 2;
    const uint64_t seed = 7;
    const CliResult cli = run_cli("llm tiny --system " + config("system-tiny") + " --set " + two_chips +
                                  " --tp 2 --mode functional --trace off --prefill " + std::to_string(prefill) +
                                  " --decode " + std::to_string(decode) + " --batch " + std::to_string(batch) +
                                  " --seed " + std::to_string(seed) + " --out " + dir + "/cli");
    INFO(cli.output);
    REQUIRE(cli.code == 0);
    nlohmann::json s = read_json(dir + "/cli/summary.json");
    REQUIRE(s["chips"] == 2);

    TinySystem rig(two_chips);
    sys::SystemRun& run = rig.run;
    const comm::CommParams& cm = rig.cm;

    const llm::ModelConfig model = llm::load_model_config("tiny", {source_dir() + "/configs/llm"});
    llm::RunOptions ro;
    ro.prefill = prefill;
    ro.decode = decode;
    ro.batch = batch;
    ro.seed = seed;
    const llm::ModelWeights weights = llm::host_weights(model, ro.seed, true, "");
    ro.weights = &weights;
    llm::TpOptions t;
    t.tp = 2;
    t.comm_buffer_bytes = cm.buffer_bytes;
    CHECK_THROWS_WITH(llm::check_tp(run, 3), Catch::Contains("the system has 2 chips"));
    const std::unique_ptr<llm::TpRun> tp = llm::run_tp(run, model, ro, t, cm);

    CHECK(tp->ranks_agree());
    CHECK(run.total_cycles() == s["total_cycles"].get<uint64_t>());
    const llm::Figures f = llm::figures(llm::run_totals(tp->steps(), false).eager, ro.batch);
    CHECK(f.ttft_ms > 0);
    REQUIRE(f.step_ms.size() == static_cast<size_t>(decode));
    // The CLI adds its wall time and the re-use counters (off here: functional mode) to the section.
    nlohmann::json cli_llm = s["llm"];
    cli_llm.erase("wall_s");
    cli_llm.erase("reuse_timing");
    const nlohmann::json lib_llm = llm::tp_json(*tp, ro, f, true);
    CHECK(lib_llm["tokens"].size() == static_cast<size_t>(batch));
    CHECK(lib_llm == cli_llm);
}
