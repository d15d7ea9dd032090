// Serving on a system of chips as a library (runtime/serve/serve_system.h), driven from C++ the
// way a user's program would: build a two-chip system (models/link) in timing mode, hand it to
// sys::SystemRun, serve a generated trace with one tensor-parallel instance over both chips, and
// get the `serve` section, the links and the total cycles `sfumato serve --system F --tp 2` writes
// for the same trace.
#include <catch2/catch.hpp>

#include "runtime/llm/model_config.h"
#include "runtime/serve/serve_system.h"
#include "tests/component/system_fixture.h"
#include "tests/support.h"

using namespace sfumato;
using namespace sfumato::test;

namespace {

// Host wall-clock figures (the run's, the plans' compile time) differ run to run: out of the
// comparison.
void erase_wall(nlohmann::json& j) {
    if (j.is_object()) {
        j.erase("compile_seconds");
        j.erase("wall_seconds");
        for (auto& [k, v] : j.items()) erase_wall(v);
    } else if (j.is_array()) {
        for (auto& v : j) erase_wall(v);
    }
}

}  // namespace

TEST_CASE("serve system library: a TP=2 instance driven from C++ gives the CLI's serve section and cycles",
          "[serve][system]") {
    const std::string dir = temp_dir("serve_system_lib");
    const std::string two_chips = "system.chips_per_server=2";
    const std::string gen = "n=6,rate=20000,prompt=uniform:16:48,output=uniform:4:8,seed=5";
    const CliResult cli = run_cli("serve tiny --system " + config("system-tiny") + " --set " + two_chips +
                                  " --tp 2 --set serve.block_size=64 --exact --trace off --generate " + gen +
                                  " --out " + dir + "/cli");
    INFO(cli.output);
    REQUIRE(cli.code == 0);
    nlohmann::json s = read_json(dir + "/cli/summary.json");
    REQUIRE(s["chips"] == 2);

    TinySystem rig(two_chips, false);  // serving runs in timing mode
    const llm::ModelConfig model = llm::load_model_config("tiny", {source_dir() + "/configs/llm"});
    Config serve_cfg;  // serve.* at their defaults, then the command's two settings
    serve::ServeSetup setup = serve::ServeParams(ParamScope(serve_cfg, "serve")).setup();
    setup.tp = 2;
    setup.sched.block_size = 64;
    serve::SystemServe run(rig.run, model, serve::generate_requests(serve::parse_gen_spec(gen)), setup, rig.cm,
                           reuse::ReuseOptions{});  // --exact: every kernel simulated
    run.run();

    CHECK(rig.run.total_cycles() == s["total_cycles"].get<uint64_t>());
    nlohmann::json lib = run.summary(0, 0);
    CHECK(lib["metrics"]["served"] == 6);
    CHECK(lib["instances"][0]["chips"] == nlohmann::json::array({0, 1}));
    CHECK(lib["parallel"]["simulate"] == "all");  // the library's default: every rank's kernels
    nlohmann::json cli_serve = s["serve"];
    erase_wall(lib);
    erase_wall(cli_serve);
    CHECK(lib == cli_serve);
    CHECK(run.links_json() == s["links"]);
    CHECK(run.cluster().requests_csv() == read_text(dir + "/cli/requests.csv"));
}
