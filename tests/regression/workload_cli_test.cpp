// `sfumato replay` through the CLI: the issue's example, kernels sharing or serialising on the
// chip, summary tasks, traces, and malformed workload files (exit 2 naming the task).
#include <catch2/catch.hpp>
#include <fstream>

#include "models/chip/chip_params.h"
#include "tests/support.h"

using namespace sfumato;
using namespace sfumato::test;

namespace {

std::string write_workload(const std::string& dir, const std::string& name, const std::string& text) {
    const std::string path = dir + "/" + name;
    std::ofstream(path) << text;
    return path;
}

std::string header(const std::string& streams) {
    return R"({"format": "sfumato-workload", "version": 1, "streams": )" + streams + R"(, "tasks": )";
}

CliResult replay(const std::string& file, const std::string& out, const std::string& extra = "") {
    return run_cli("replay " + file + " --config " + config("tiny") + " --mode timing --out " + out + " " + extra);
}

// Two add kernels of block_dim bd, one per stream; returns (kernel0, kernel1) task entries.
std::pair<nlohmann::json, nlohmann::json> two_kernels(const std::string& dir, int bd) {
    const std::string k = R"({"kind": "kernel", "op": "add", "args": {"n": 262144, "dtype": "fp16"}, "block_dim": )" +
                          std::to_string(bd);
    const std::string text = header(R"([{"id": 0, "priority": 0}, {"id": 1, "priority": 0}])") + "[" + k +
                             R"(, "stream": 0}, )" + k + R"(, "stream": 1}]})";
    const auto r = replay(write_workload(dir, "w.json", text), dir + "/out");
    REQUIRE(r.code == 0);
    const auto s = read_json(dir + "/out/summary.json");
    REQUIRE(s["tasks"].size() == 2);
    return {s["tasks"][0], s["tasks"][1]};
}

uint64_t dur(const nlohmann::json& t) { return t["end_cycle"].get<uint64_t>() - t["start_cycle"].get<uint64_t>(); }

}  // namespace

TEST_CASE("replay: the issue's example runs and summary.json lists every task") {
    const std::string dir = temp_dir("replay_example");
    const std::string text = header(R"([{"id": 0, "priority": 0}, {"id": 1, "priority": 1}])") + R"([
      {"kind": "memcpy", "stream": 0, "dir": "h2d", "bytes": 67108864, "pinned": true},
      {"kind": "kernel", "stream": 0, "op": "add", "args": {"n": 1048576, "dtype": "fp16"}, "block_dim": 8},
      {"kind": "record", "stream": 0, "event": "e0"},
      {"kind": "wait", "stream": 1, "event": "e0"},
      {"kind": "host_delay", "us": 5},
      {"kind": "sync", "stream": 1}]})";
    const auto r = replay(write_workload(dir, "w.json", text), dir + "/out");
    INFO(r.output);
    REQUIRE(r.code == 0);
    const auto s = read_json(dir + "/out/summary.json");
    const auto& t = s["tasks"];
    REQUIRE(t.size() == 6);
    for (const auto& x : t) {
        for (const char* f : {"index", "kind", "stream", "name", "issue_cycle", "start_cycle", "end_cycle"}) CHECK(x.contains(f));
        CHECK(x["issue_cycle"].get<uint64_t>() <= x["start_cycle"].get<uint64_t>());
        CHECK(x["start_cycle"].get<uint64_t>() <= x["end_cycle"].get<uint64_t>());
    }
    CHECK(t[1]["kind"] == "kernel");
    CHECK(t[1]["start_cycle"].get<uint64_t>() >= t[0]["end_cycle"].get<uint64_t>());
    CHECK(t[3]["end_cycle"].get<uint64_t>() >= t[2]["end_cycle"].get<uint64_t>());
    CHECK(s["ops"].size() == 1);
    // The trace has stream tracks, launch flows and queue depth counters.
    const auto tr = read_json(dir + "/out/trace.json");
    bool flow = false, depth = false, stream_track = false;
    for (const auto& e : tr["traceEvents"]) {
        const std::string ph = e.value("ph", "");
        if (ph == "s") flow = true;
        if (ph == "C" && e.value("name", "").find("depth") != std::string::npos) depth = true;
        if (ph == "M" && e.contains("args") && e["args"].value("name", "").find("stream 1") != std::string::npos) stream_track = true;
    }
    CHECK(flow);
    CHECK(depth);
    CHECK(stream_track);
}

TEST_CASE("replay: two half-chip kernels on two streams overlap and two full-chip kernels serialise") {
    const std::string dir = temp_dir("replay_overlap");
    Config c;
    c.load_ini(config("tiny"));
    ChipParams p(c);
    const int aiv = static_cast<int>(p.vector_cores());
    const uint64_t completion = p.ts.completion_cycles;
    {
        auto [a, b] = two_kernels(dir, aiv / 2);
        const uint64_t e2e = std::max(a["end_cycle"].get<uint64_t>(), b["end_cycle"].get<uint64_t>()) -
                             std::min(a["start_cycle"].get<uint64_t>(), b["start_cycle"].get<uint64_t>());
        CHECK(static_cast<double>(e2e) < 0.7 * static_cast<double>(dur(a) + dur(b)));
    }
    {
        auto [a, b] = two_kernels(dir, aiv);
        const uint64_t e2e = std::max(a["end_cycle"].get<uint64_t>(), b["end_cycle"].get<uint64_t>()) -
                             std::min(a["start_cycle"].get<uint64_t>(), b["start_cycle"].get<uint64_t>());
        // b's blocks start only once a's have ended (a's end minus its completion latency).
        CHECK(b["start_cycle"].get<uint64_t>() >= a["end_cycle"].get<uint64_t>() - completion);
        CHECK(e2e >= dur(a) + dur(b) - completion);
    }
}

TEST_CASE("replay: malformed workload files exit 2 naming the task") {
    const std::string dir = temp_dir("replay_bad");
    const std::string s1 = header(R"([{"id": 0}])");
    struct Case {
        const char* name;
        std::string text;
        std::vector<std::string> expect;
    };
    const std::vector<Case> cases = {
        {"bad_json", "{\"format\": ", {"not valid JSON"}},
        {"unknown_kind", s1 + R"([{"kind": "launch", "stream": 0}]})", {"task 0", "unknown kind 'launch'"}},
        {"unknown_field", s1 + R"([{"kind": "record", "stream": 0, "event": "e", "when": 3}]})", {"task 0", "'when'"}},
        {"missing_stream", s1 + R"([{"kind": "record", "stream": 0, "event": "e"}, {"kind": "memcpy", "stream": 4, "dir": "h2d", "bytes": 64}]})",
         {"task 1", "stream 4 is not declared"}},
        {"unknown_op", s1 + R"([{"kind": "kernel", "stream": 0, "op": "conv77"}]})", {"task 0", "unknown op 'conv77'"}},
        {"unknown_arg", s1 + R"([{"kind": "kernel", "stream": 0, "op": "add", "args": {"n": 64, "colour": 1}}]})",
         {"task 0", "no argument 'colour'"}},
        {"never_recorded", s1 + R"([{"kind": "wait", "stream": 0, "event": "e9"}]})", {"task 0", "never recorded"}},
    };
    for (const auto& c : cases) {
        INFO(c.name);
        const auto r = replay(write_workload(dir, std::string(c.name) + ".json", c.text), dir + "/out");
        INFO(r.output);
        CHECK(r.code == 2);
        for (const auto& e : c.expect) CHECK_THAT(r.output, Catch::Contains(e));
    }
}
