// Recording a run as a workload file and replaying it: the same task stream comes back.
#include <catch2/catch.hpp>

#include "tests/support.h"

using namespace sfumato::test;

TEST_CASE("record: a kernel run recorded with --record replays with the same tasks and cycles") {
    const std::string d = temp_dir("record");
    // On the skeleton memory, whose timing depends on neither addresses nor cache contents: the
    // replayed kernel places and uploads its operands itself (elsewhere, at another time), so
    // under the detailed memory its L2 and HBM see other addresses and a cycle or two differ.
    const CliResult r = run_cli("kernel add --n 10000 --block-dim 3 --dtype fp32 --config " + config("tiny-simple-mem") +
                                " --out " + d + "/run --record " + d + "/w.json");
    INFO(r.output);
    REQUIRE(r.code == 0);
    const auto w = read_json(d + "/w.json");
    CHECK(w["format"] == "sfumato-workload");
    const auto run = read_json(d + "/run/summary.json");
    REQUIRE(w["tasks"].size() == run["tasks"].size());
    const auto& k = w["tasks"][2];
    CHECK(k["kind"] == "kernel");
    CHECK(k["op"] == "add");
    CHECK(k["block_dim"] == 3);
    CHECK(k["args"]["n"] == "10000");
    CHECK(k["args"]["dtype"] == "fp32");

    const CliResult p = run_cli("replay " + d + "/w.json --config " + config("tiny-simple-mem") + " --out " + d + "/replay");
    INFO(p.output);
    REQUIRE(p.code == 0);
    const auto rep = read_json(d + "/replay/summary.json");
    REQUIRE(rep["tasks"].size() == run["tasks"].size());
    // The same device work: every task takes the same cycles from its start to its end, and the
    // kernel the same execution span (the host program around them may differ in its own time).
    auto dur = [](const nlohmann::json& t) { return t["end_cycle"].get<uint64_t>() - t["start_cycle"].get<uint64_t>(); };
    for (size_t i = 0; i < rep["tasks"].size(); ++i) {
        INFO("task " << i);
        CHECK(rep["tasks"][i]["kind"] == run["tasks"][i]["kind"]);
        CHECK(dur(rep["tasks"][i]) == dur(run["tasks"][i]));
    }
    REQUIRE(rep["ops"].size() == 1);
    CHECK(rep["ops"][0]["block_dim"] == 3);
    CHECK(rep["ops"][0]["cycles"] == run["ops"][0]["cycles"]);
}
