// One collective on a system of chips as a library (runtime/system/system_collective.h), driven
// from C++ the way a user's program would: build a two-chip system (models/link), hand it to
// sys::SystemRun, run an all_reduce with sys::run_collective, and get the sections `sfumato
// collective --system F` writes for the same call (collective, algo, time, bandwidths, links, the
// functional check) and its total cycles; bad arguments are refused naming them.
#include <catch2/catch.hpp>

#include "runtime/system/system_collective.h"
#include "tests/component/system_fixture.h"
#include "tests/support.h"

using namespace sfumato;
using namespace sfumato::test;

TEST_CASE("collective library: an all_reduce driven from C++ gives the CLI's summary sections and cycles",
          "[collective][system]") {
    const std::string dir = temp_dir("collective_lib");
    const std::string two_chips = "system.chips_per_server=2";
    const uint64_t bytes = 64 * 1024;
    const uint32_t iters = 2;
    const CliResult cli = run_cli("collective all_reduce --bytes " + std::to_string(bytes) + " --dtype fp32 --redop max --iters " +
                                  std::to_string(iters) + " --system " + config("system-tiny") + " --set " + two_chips +
                                  " --mode functional --trace off --out " + dir + "/cli");
    INFO(cli.output);
    REQUIRE(cli.code == 0);
    const nlohmann::json s = read_json(dir + "/cli/summary.json");
    REQUIRE(s["chips"] == 2);

    TinySystem rig(two_chips);
    sys::SystemRun& run = rig.run;
    const comm::CommParams& cm = rig.cm;

    sys::CollectiveSpec spec;
    spec.call.op = comm::Op::AllReduce;
    spec.call.dtype = isa::DType::FP32;
    spec.call.redop = comm::RedOp::Max;
    spec.bytes = bytes;
    spec.iters = iters;
    sys::CollectiveSpec bad = spec;
    bad.ranks = 3;
    CHECK_THROWS_WITH(sys::resolve_collective(run, bad), Catch::Contains("--ranks 3: the system has 2 chips"));
    bad = spec;
    bad.bytes = 6;
    CHECK_THROWS_WITH(sys::resolve_collective(run, bad), Catch::Contains("--bytes 6 must be a positive multiple of 4"));
    bad = spec;
    bad.call.op = comm::Op::Broadcast;
    bad.call.root = 2;
    CHECK_THROWS_WITH(sys::resolve_collective(run, bad), Catch::Contains("--root 2 is not a rank"));

    const sys::CollectiveRun r = sys::run_collective(run, spec, cm, true);
    CHECK(r.spec.ranks == 2);
    CHECK(r.spec.call.count == bytes / 4);
    CHECK(r.passed);
    CHECK(r.check["compared"].get<uint64_t>() == 2 * bytes / 4);  // every element of both ranks' outputs
    CHECK(r.busbw_gbps == Approx(r.algbw_gbps * 2 * (2 - 1) / 2.0));
    CHECK(run.total_cycles() == s["total_cycles"].get<uint64_t>());
    const nlohmann::json lib = sys::collective_json(run, r);
    for (const auto& [key, value] : lib.items()) {
        INFO(key);
        CHECK(value == s[key]);
    }
}
