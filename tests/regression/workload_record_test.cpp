// Recording runs as workload files and replaying them: the same runtime calls come back at the
// same host times, so a replay on the chip the recording was made on takes exactly the same
// cycles, at the ops level (operators planned again) and at the instructions level (recorded
// streams); on another chip the same recording takes other, plausible times; instruction
// streams a chip cannot hold are refused with the reason.
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>

#include "tests/support.h"

using namespace sfumato::test;

namespace {

uint64_t total(const std::string& out) { return read_json(out + "/summary.json")["total_cycles"].get<uint64_t>(); }

// Records `cmd` (a sfumato command line without --out/--record) at the instructions level, then
// replays the recording at both levels on the same config; returns the three totals.
struct Trip {
    uint64_t run = 0, ops = 0, instr = 0;
};
Trip round_trip(const std::string& dir, const std::string& cmd, const std::string& cfg) {
    const CliResult r = run_cli(cmd + " --config " + config(cfg) + " --out " + dir + "/run --record " + dir +
                                "/w.json --record-level instructions");
    INFO(r.output);
    REQUIRE(r.code == 0);
    Trip t;
    t.run = total(dir + "/run");
    for (const char* level : {"ops", "instructions"}) {
        const CliResult p = run_cli("replay " + dir + "/w.json --level " + level + " --config " + config(cfg) +
                                    " --mode timing --out " + dir + "/" + level);
        INFO(p.output);
        REQUIRE(p.code == 0);
    }
    t.ops = total(dir + "/ops");
    t.instr = total(dir + "/instructions");
    return t;
}

}  // namespace

TEST_CASE("record: a kernel run recorded with --record replays with the same tasks and kernel cycles") {
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
    CHECK(w["recorded_on"]["chip"] == "tiny-simple-mem");
    // Every device allocation, copy and launch, as the program made them.
    size_t allocs = 0, copies = 0, kernels = 0;
    nlohmann::json k;
    for (const auto& t : w["tasks"]) {
        allocs += t["kind"] == "alloc";
        copies += t["kind"] == "memcpy";
        if (t["kind"] == "kernel") ++kernels, k = t;
    }
    CHECK(allocs == 3);  // x, y, z
    CHECK(copies == 3);  // x and y up, z down
    REQUIRE(kernels == 1);
    CHECK(k["op"] == "add");
    CHECK(k["block_dim"] == 3);
    CHECK(k["args"]["n"] == "10000");
    CHECK(k["args"]["dtype"] == "fp32");

    // An operator-library kernel that is not a graph node is planned again on operands of its
    // own at the ops level (placed at no cost, so under the detailed memory not in L2 as the
    // recorded uploads left them): same tasks; on the skeleton memory the same kernel cycles.
    const CliResult p = run_cli("replay " + d + "/w.json --config " + config("tiny-simple-mem") + " --out " + d + "/replay");
    INFO(p.output);
    REQUIRE(p.code == 0);
    const auto rep = read_json(d + "/replay/summary.json");
    const auto run = read_json(d + "/run/summary.json");
    REQUIRE(rep["ops"].size() == 1);
    CHECK(rep["ops"][0]["block_dim"] == 3);
    CHECK(rep["ops"][0]["cycles"] == run["ops"][0]["cycles"]);
    REQUIRE(rep["tasks"].size() == w["tasks"].size());
    for (size_t i = 0; i < w["tasks"].size(); ++i) CHECK(rep["tasks"][i]["kind"] == w["tasks"][i]["kind"]);
    const double a = run["total_cycles"].get<double>(), b = rep["total_cycles"].get<double>();
    CHECK(std::abs(b - a) < 0.2 * a);
}

TEST_CASE("record: an operator-library kernel replays its instructions with identical total cycles") {
    const std::string d = temp_dir("record_add_instr");
    const Trip t = round_trip(d, "kernel add --n 10000 --block-dim 3 --dtype fp32", "tiny");
    CHECK(t.instr == t.run);
    // The recording carries what the kernel's start-up depends on, and the cold-L2 flush the
    // kernel command made after the upload (a flush task after the device-wide sync).
    const auto w = read_json(d + "/w.json");
    bool flush = false;
    for (const auto& x : w["tasks"]) {
        flush = flush || x["kind"] == "flush";
        if (x["kind"] != "kernel") continue;
        CHECK(flush);  // before the launch
        CHECK(x["launches"][0]["args_bytes"].get<uint32_t>() > 0);
    }
    CHECK(flush);
}

TEST_CASE("record: a warm kernel run has no flush task and replays identically") {
    const std::string d = temp_dir("record_add_warm");
    const Trip t = round_trip(d, "kernel add --n 10000 --block-dim 3 --dtype fp32 --l2 warm", "tiny");
    CHECK(t.instr == t.run);
    const auto w = read_json(d + "/w.json");  // named: a range-for keeps only its last temporary
    for (const auto& x : w["tasks"]) CHECK(x["kind"] != "flush");
}

TEST_CASE("record: a graph-node kernel replays with identical total cycles at both levels") {
    const std::string d = temp_dir("record_node");
    const Trip t = round_trip(d, "kernel softmax --rows 64 --cols 256 --mode timing", "tiny");
    CHECK(t.ops == t.run);
    CHECK(t.instr == t.run);
    const auto w = read_json(d + "/w.json");
    bool node = false;
    for (const auto& x : w["tasks"]) {
        if (x["kind"] != "kernel") continue;
        node = x.contains("node") && x["node"]["op_type"] == "Softmax";
        // Operands live in the buffers the alloc tasks name.
        for (const auto& in : x["node"]["inputs"]) CHECK(in.contains("buffer"));
        CHECK(!x["launches"][0]["instr"].get<std::string>().empty());
    }
    CHECK(node);
}

TEST_CASE("record: a zoo model run replays with identical total cycles at both levels") {
    const std::string d = temp_dir("record_zoo");
    const Trip t = round_trip(d, "run zoo:mlp --mode timing", "tiny");
    CHECK(t.ops == t.run);
    CHECK(t.instr == t.run);
}

TEST_CASE("record: a multi-stream workload replayed and recorded again replays identically") {
    const std::string d = temp_dir("record_workload");
    std::ofstream(d + "/w0.json") << R"({"format": "sfumato-workload", "version": 2,
      "streams": [{"id": 0}, {"id": 1}],
      "tasks": [
        {"kind": "alloc", "buffer": "x", "bytes": 1048576},
        {"kind": "memcpy", "stream": 0, "dir": "h2d", "bytes": 1048576, "dst": "x"},
        {"kind": "kernel", "stream": 0, "node": {"op_type": "Relu", "inputs": [{"shape": [512, 1024], "dtype": "fp16", "buffer": "x"}]}},
        {"kind": "record", "stream": 0, "event": "e"},
        {"kind": "wait", "stream": 1, "event": "e"},
        {"kind": "kernel", "stream": 1, "op": "add", "args": {"n": 65536, "dtype": "fp16"}},
        {"kind": "host_delay", "us": 3},
        {"kind": "sync"}]})";
    const Trip t = round_trip(d, "replay " + d + "/w0.json --mode timing", "tiny");
    CHECK(t.ops == t.run);
    CHECK(t.instr == t.run);
}

TEST_CASE("record: one recording replays on ascend910-like and ascend910b-like at different times") {
    const std::string d = temp_dir("record_chips");
    const CliResult r = run_cli("kernel gemm --m 1024 --n 1024 --k 1024 --mode timing --config " +
                                config("ascend910b-like") + " --out " + d + "/run --record " + d + "/w.json --record-level instructions");
    INFO(r.output);
    REQUIRE(r.code == 0);
    uint64_t kernel[2] = {}, tot[2] = {};
    const char* chips[] = {"ascend910-like", "ascend910b-like"};
    for (int i = 0; i < 2; ++i) {
        const CliResult p = run_cli("replay " + d + "/w.json --mode timing --config " + config(chips[i]) + " --out " + d + "/" + chips[i]);
        INFO(p.output);
        REQUIRE(p.code == 0);
        const auto s = read_json(d + "/" + chips[i] + "/summary.json");
        REQUIRE(s["ops"].size() >= 1);
        for (const auto& o : s["ops"]) kernel[i] += o["cycles"].get<uint64_t>();
        tot[i] = s["total_cycles"].get<uint64_t>();
    }
    CHECK(kernel[0] != kernel[1]);
    CHECK(tot[1] == total(d + "/run"));
    // Plausible: each a kernel of at least the chip's cube bound, and the whole run longer still.
    for (int i = 0; i < 2; ++i) CHECK(tot[i] > kernel[i]);
    // Its instruction streams ran on the 910B-like's split cores: refused on the coupled 910-like.
    const CliResult bad = run_cli("replay " + d + "/w.json --level instructions --mode timing --config " + config("ascend910-like"));
    CHECK(bad.code == 2);
    CHECK(bad.output.find("coupled") != std::string::npos);
}
