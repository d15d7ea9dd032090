// `sfumato replay` through the CLI: the issue's example, kernels sharing or serialising on the
// chip, summary tasks, traces, and malformed workload files (exit 2 naming the task).
#include <catch2/catch.hpp>
#include <fstream>

#include "models/chip/chip_params.h"
#include "runtime/rt/runtime.h"
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

CliResult replay(const std::string& file, const std::string& out, const std::string& extra = "",
                 const std::string& cfg = config("tiny")) {
    return run_cli("replay " + file + " --config " + cfg + " --mode timing --out " + out + " " + extra);
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
    rt::RuntimeParams host(ParamScope(c, "host"));
    const int aiv = static_cast<int>(p.vector_cores());
    const uint64_t completion = p.ts.completion_cycles;
    {
        auto [a, b] = two_kernels(dir, aiv / 2);
        const uint64_t e2e = std::max(a["end_cycle"].get<uint64_t>(), b["end_cycle"].get<uint64_t>()) -
                             std::min(a["start_cycle"].get<uint64_t>(), b["start_cycle"].get<uint64_t>());
        // Overlapped, b runs one launch overhead behind a; serialised they would take the sum.
        const uint64_t launch = host.launch_overhead_ns * 1000 * p.clock().period_den() / p.clock().period_num_ps();
        REQUIRE(launch < std::min(dur(a), dur(b)));
        CHECK(e2e <= std::max(dur(a), dur(b)) + launch + 1);  // + 1: the offset's rounding to cycle edges
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

TEST_CASE("replay: a 256 MiB h2d copy takes what the link parameters imply, pageable slower") {
    // The skeleton DMA (chip.mem.model = simple) on the host link (chip.host_link.*).
    const std::string dir = temp_dir("replay_memcpy");
    Config c;
    c.load_ini(config("tiny-simple-mem"));
    ChipParams p(c);
    const uint64_t bytes = 256ull << 20;
    const std::string text = header(R"([{"id": 0, "priority": 0}])") +
                             R"([{"kind": "memcpy", "stream": 0, "dir": "h2d", "bytes": 268435456, "pinned": true},
                                 {"kind": "memcpy", "stream": 0, "dir": "h2d", "bytes": 268435456, "pinned": false}]})";
    const auto r = replay(write_workload(dir, "w.json", text), dir + "/out", "--trace off", config("tiny-simple-mem"));
    INFO(r.output);
    REQUIRE(r.code == 0);
    const auto t = read_json(dir + "/out/summary.json")["tasks"];
    const double cycle_ps = 1000.0 / p.clock().freq_ghz();
    const double pinned_ps = static_cast<double>(bytes) * 1000.0 / p.host_link.gbps + p.host_link.latency_ns * 1000.0;
    const double pageable_ps = static_cast<double>(bytes) * 1000.0 / p.host_link.pageable_gbps + p.host_link.latency_ns * 1000.0;
    // A copy task spans the scheduler's dispatch and completion latencies around the transfer.
    const double fixed_ps = static_cast<double>(p.ts.dispatch_cycles + p.ts.completion_cycles) * cycle_ps;
    CHECK(static_cast<double>(dur(t[0])) * cycle_ps == Approx(pinned_ps + fixed_ps).margin(cycle_ps));
    CHECK(static_cast<double>(dur(t[1])) * cycle_ps == Approx(pageable_ps + fixed_ps).margin(cycle_ps));
    CHECK(dur(t[1]) > dur(t[0]));
}

TEST_CASE("replay: 1000 back-to-back tiny kernels take at least 1000 launch overheads") {
    const std::string dir = temp_dir("replay_tiny_kernels");
    Config c;
    c.load_ini(config("tiny"));
    ChipParams p(c);
    rt::RuntimeParams host(ParamScope(c, "host"));
    std::string tasks = "[";
    for (int i = 0; i < 1000; ++i) {
        tasks += std::string(i ? ", " : "") + R"({"kind": "kernel", "stream": 0, "op": "add", "args": {"n": 64}})";
    }
    const auto r = replay(write_workload(dir, "w.json", header(R"([{"id": 0}])") + tasks + "]}"), dir + "/out", "--trace off");
    INFO(r.output.substr(0, 2000));
    REQUIRE(r.code == 0);
    const auto t = read_json(dir + "/out/summary.json")["tasks"];
    REQUIRE(t.size() == 1000);
    const uint64_t span_cycles = t[999]["end_cycle"].get<uint64_t>() - t[0]["issue_cycle"].get<uint64_t>();
    const uint64_t launch_cycles = p.clock().cycles_in(host.launch_overhead_ns * 1000);
    CHECK(span_cycles >= 999 * launch_cycles);  // from the first issue: 999 more launches
    CHECK(t[999]["issue_cycle"].get<uint64_t>() - t[0]["issue_cycle"].get<uint64_t>() >= 999 * launch_cycles);
}

TEST_CASE("summary tasks: sfumato kernel lists its runtime tasks too") {
    const std::string dir = temp_dir("kernel_tasks");
    const auto r = run_cli("kernel add --n 4096 --config " + config("tiny") + " --mode timing --out " + dir);
    INFO(r.output);
    REQUIRE(r.code == 0);
    const auto t = read_json(dir + "/summary.json")["tasks"];
    REQUIRE(t.size() >= 3);  // input copies, the kernel, the result copy
    bool kernel = false;
    for (const auto& x : t) {
        kernel = kernel || x["kind"] == "kernel";
        CHECK(x["issue_cycle"].get<uint64_t>() <= x["start_cycle"].get<uint64_t>());
        CHECK(x["start_cycle"].get<uint64_t>() <= x["end_cycle"].get<uint64_t>());
    }
    CHECK(kernel);
}
