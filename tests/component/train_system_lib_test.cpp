// The training step on a system of chips as a library (runtime/train/train_system.h), driven from
// C++ the way a user's program would: build a two-chip system (models/link), hand it to
// sys::SystemRun, compile a tiny MLP's step, run it on both chips with graph::run_train_step, and
// get the sections `sfumato train-step --system F` writes for the same step (train, memory plan,
// the step's figures, links, the functional check) and the total cycles.
#include <catch2/catch.hpp>

#include "runtime/graph/zoo.h"
#include "runtime/train/train_system.h"
#include "tests/component/system_fixture.h"
#include "tests/support.h"

using namespace sfumato;
using namespace sfumato::test;

TEST_CASE("train system library: a 2-chip step driven from C++ gives the CLI's summary sections and cycles",
          "[train][system]") {
    const std::string dir = temp_dir("train_system_lib");
    const std::string two_chips = "system.chips_per_server=2";
    const std::string model = "zoo:mlp?in=16&hidden=32&layers=2&classes=8";
    const int64_t batch = 2;
    const double lr = 0.01;
    const CliResult cli = run_cli("train-step \"" + model + "\" --system " + config("system-tiny") + " --set " +
                                  two_chips + " --mode functional --trace off --batch " + std::to_string(batch) +
                                  " --out " + dir + "/cli");
    INFO(cli.output);
    REQUIRE(cli.code == 0);
    const nlohmann::json s = read_json(dir + "/cli/summary.json");
    REQUIRE(s["chips"] == 2);

    TinySystem rig(two_chips);
    sys::SystemRun& run = rig.run;
    const comm::CommParams& cm = rig.cm;

    CHECK_THROWS_WITH(graph::train_ranks(run, 3), Catch::Contains("the system has 2 chips"));
    const uint32_t ranks = graph::train_ranks(run, 0);
    REQUIRE(ranks == 2);
    // The CLI's defaults: fp16, overlap on, SGD, 25 MiB buckets, the mean over the global batch,
    // --layout on (a TrainSetup itself starts all ND).
    graph::TrainSetup ts;
    ts.layout = true;
    REQUIRE(graph::parse_precision("fp16", ts.copt.precision));
    ts.overlap = true;
    ts.opt.lr = lr;
    ts.opt.loss_scale = 1.0 / static_cast<double>(batch * ranks);
    ts.opt.bucket_bytes = 25ull << 20;
    ts.comm_buffer_bytes = cm.buffer_bytes;
    ts.compile(graph::zoo_graph(model.substr(4)), batch, run.system().device(0).info());
    ts.make_data(ranks, true);
    const graph::TrainStepRun r = graph::run_train_step(run, ts, ranks, cm, true);

    CHECK(r.passed);
    CHECK(r.check["compared"].get<uint64_t>() > 0);
    CHECK(run.total_cycles() == s["total_cycles"].get<uint64_t>());
    CHECK(graph::train_json(ts, ranks, batch, "fp16", lr) == s["train"]);
    const nlohmann::json lib = graph::train_step_json(run, ts, r, ranks, batch);
    for (const auto& [key, value] : lib.items()) {
        INFO(key);
        CHECK(value == s[key]);
    }
    const graph::TrainStepFigures f = graph::train_step_figures(ts, r, batch);
    CHECK(f.step_us > 0);
    CHECK(f.step_us >= f.compute_us);
    CHECK(f.exposed_us == Approx(s["exposed_comm_us"].get<double>()));
}
