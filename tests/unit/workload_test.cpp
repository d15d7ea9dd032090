#include <catch2/catch.hpp>

#include "sim/error.h"
#include "traces/workload.h"

using namespace sfumato;
namespace wl = sfumato::workload;

namespace {

std::string ops_check(const std::string& op, const std::map<std::string, std::string>& args) {
    if (op != "add") return "unknown op '" + op + "'";
    for (const auto& [k, v] : args) {
        if (k != "n" && k != "dtype") return "unknown argument '" + k + "' of op 'add'";
    }
    return {};
}

const char* kExample = R"({"format": "sfumato-workload", "version": 1,
 "streams": [{"id": 0, "priority": 0}, {"id": 1, "priority": 1}],
 "tasks": [
  {"kind": "memcpy", "stream": 0, "dir": "h2d", "bytes": 268435456, "pinned": true},
  {"kind": "kernel", "stream": 0, "op": "add", "args": {"n": 1048576, "dtype": "fp16"}, "block_dim": 8},
  {"kind": "record", "stream": 0, "event": "e0"},
  {"kind": "wait", "stream": 1, "event": "e0"},
  {"kind": "host_delay", "us": 5},
  {"kind": "sync", "stream": 1}]})";

std::string with_task(const std::string& task) {
    return R"({"format": "sfumato-workload", "version": 1, "streams": [{"id": 0, "priority": 0}],
 "tasks": [{"kind": "record", "stream": 0, "event": "ok"}, )" + task + "]}";
}

// The error message of parsing text, or "" if it parsed.
std::string error_of(const std::string& text) {
    try {
        wl::parse(text, ops_check, "w.json");
    } catch (const InputError& e) {
        CHECK(e.code() == kExitBadInput);
        return e.what();
    }
    return {};
}

}  // namespace

TEST_CASE("workload: the issue's example parses into typed tasks") {
    auto w = wl::parse(kExample, ops_check);
    REQUIRE(w.streams.size() == 2);
    CHECK(w.streams[1].priority == 1);
    REQUIRE(w.tasks.size() == 6);
    CHECK(w.tasks[0].kind == wl::Kind::Memcpy);
    CHECK(w.tasks[0].bytes == 268435456ull);
    CHECK(w.tasks[0].dir == CopyDir::H2D);
    CHECK(w.tasks[0].pinned);
    CHECK(w.tasks[1].op == "add");
    CHECK(w.tasks[1].args.at("n") == "1048576");
    CHECK(w.tasks[1].args.at("dtype") == "fp16");
    CHECK(w.tasks[1].block_dim == 8);
    CHECK(w.tasks[3].kind == wl::Kind::Wait);
    CHECK(w.tasks[3].event == "e0");
    CHECK(w.tasks[4].us == 5.0);
    CHECK(w.tasks[4].stream == -1);
    CHECK(w.tasks[5].stream == 1);
}

TEST_CASE("workload: to_json round-trips") {
    auto w = wl::parse(kExample, ops_check);
    auto w2 = wl::parse(wl::to_json(w), ops_check);
    REQUIRE(w2.tasks.size() == w.tasks.size());
    for (size_t i = 0; i < w.tasks.size(); ++i) {
        CHECK(w2.tasks[i].kind == w.tasks[i].kind);
        CHECK(w2.tasks[i].stream == w.tasks[i].stream);
        CHECK(w2.tasks[i].bytes == w.tasks[i].bytes);
        CHECK(w2.tasks[i].args == w.tasks[i].args);
        CHECK(w2.tasks[i].event == w.tasks[i].event);
        CHECK(w2.tasks[i].us == w.tasks[i].us);
    }
    CHECK(wl::to_json(w2) == wl::to_json(w));
}

TEST_CASE("workload: malformed files name the task and field") {
    CHECK_THAT(error_of("{not json"), Catch::Contains("not valid JSON"));
    CHECK_THAT(error_of(R"({"format": "x", "version": 1, "streams": [], "tasks": []})"),
               Catch::Contains("format"));
    CHECK_THAT(error_of(R"({"format": "sfumato-workload", "version": 4, "streams": [], "tasks": []})"),
               Catch::Contains("version"));
    CHECK_THAT(error_of(R"({"format": "sfumato-workload", "version": 1, "streams": [], "tasks": [], "x": 1})"),
               Catch::Contains("unknown top-level field 'x'"));
    CHECK_THAT(error_of(R"({"format": "sfumato-workload", "version": 1, "streams": [{"id": 0}, {"id": 0}], "tasks": []})"),
               Catch::Contains("declared twice"));

    CHECK_THAT(error_of(with_task(R"({"kind": "launch", "stream": 0})")),
               Catch::Contains("task 1") && Catch::Contains("unknown kind 'launch'"));
    CHECK_THAT(error_of(with_task(R"({"stream": 0})")), Catch::Contains("task 1: field 'kind': is missing"));
    CHECK_THAT(error_of(with_task(R"({"kind": "record", "stream": 0, "event": "e", "colour": 1})")),
               Catch::Contains("task 1 (record): field 'colour': unknown field"));
    CHECK_THAT(error_of(with_task(R"({"kind": "memcpy", "stream": 3, "dir": "h2d", "bytes": 1})")),
               Catch::Contains("task 1 (memcpy): field 'stream'") && Catch::Contains("not declared"));
    CHECK_THAT(error_of(with_task(R"({"kind": "memcpy", "dir": "h2d", "bytes": 1})")),
               Catch::Contains("task 1 (memcpy): field 'stream': is missing"));
    CHECK_THAT(error_of(with_task(R"({"kind": "memcpy", "stream": 0, "dir": "up", "bytes": 1})")),
               Catch::Contains("field 'dir'"));
    CHECK_THAT(error_of(with_task(R"({"kind": "memcpy", "stream": 0, "dir": "h2d", "bytes": -4})")),
               Catch::Contains("field 'bytes'"));
    CHECK_THAT(error_of(with_task(R"({"kind": "memcpy", "stream": 0, "dir": "h2d", "bytes": 0})")),
               Catch::Contains("field 'bytes': must be at least 1"));
    CHECK_THAT(error_of(with_task(R"({"kind": "kernel", "stream": 0, "op": "conv9"})")),
               Catch::Contains("task 1 (kernel): field 'op': unknown op 'conv9'"));
    CHECK_THAT(error_of(with_task(R"({"kind": "kernel", "stream": 0, "op": "add", "args": {"m": 1}})")),
               Catch::Contains("unknown argument 'm'"));
    CHECK_THAT(error_of(with_task(R"({"kind": "kernel", "stream": 0, "op": "add", "block_dim": 0})")),
               Catch::Contains("field 'block_dim': must be at least 1"));
    CHECK_THAT(error_of(with_task(R"({"kind": "wait", "stream": 0, "event": "never"})")),
               Catch::Contains("task 1 (wait): field 'event'") && Catch::Contains("never recorded"));
    CHECK_THAT(error_of(with_task(R"({"kind": "host_delay", "us": -1})")), Catch::Contains("field 'us'"));
    CHECK_THAT(error_of(with_task(R"(7)")), Catch::Contains("task 1: must be an object"));
    CHECK(error_of(with_task(R"({"kind": "sync"})")).empty());  // device-wide sync
}

TEST_CASE("workload: a wait before its record is an error, after it is fine") {
    const char* late = R"({"format": "sfumato-workload", "version": 1, "streams": [{"id": 0}, {"id": 1}],
      "tasks": [{"kind": "wait", "stream": 1, "event": "e"}, {"kind": "record", "stream": 0, "event": "e"}]})";
    CHECK_THAT(error_of(late), Catch::Contains("task 0 (wait)"));
    const char* ok = R"({"format": "sfumato-workload", "version": 1, "streams": [{"id": 0}, {"id": 1}],
      "tasks": [{"kind": "record", "stream": 0, "event": "e"}, {"kind": "wait", "stream": 1, "event": "e"}]})";
    CHECK(error_of(ok).empty());
}

TEST_CASE("workload: a missing file is an input error") {
    CHECK_THROWS_AS(wl::load("/nonexistent/w.json", ops_check), InputError);
}

TEST_CASE("workload: ids, priorities, block_dim and host delays out of their ranges are errors") {
    // Values that used to be truncated (or overflow in the replay's conversion to time).
    CHECK(error_of(R"({"format": "sfumato-workload", "version": 1, "streams": [{"id": 4294967296}], "tasks": []})")
              .find("'id'") != std::string::npos);
    CHECK(error_of(R"({"format": "sfumato-workload", "version": 1, "streams": [{"id": 0, "priority": 2147483648}], "tasks": []})")
              .find("'priority'") != std::string::npos);
    CHECK(error_of(R"({"format": "sfumato-workload", "version": 1, "streams": [{"id": 0, "priority": -2147483649}], "tasks": []})")
              .find("'priority'") != std::string::npos);
    CHECK(error_of(R"({"format": "sfumato-workload", "version": 1, "streams": [{"id": 4294967295, "priority": -2147483648}], "tasks": []})")
              .empty());
    CHECK(error_of(with_task(R"({"kind": "kernel", "stream": 0, "op": "add", "block_dim": 4294967297})")).find("block_dim") !=
          std::string::npos);
    CHECK(error_of(with_task(R"({"kind": "kernel", "stream": 0, "op": "add", "block_dim": 65535})")).empty());
    CHECK(error_of(with_task(R"({"kind": "host_delay", "us": 1e300})")).find("'us'") != std::string::npos);
    CHECK(error_of(with_task(R"({"kind": "host_delay", "us": 1000000000})")).empty());
}

TEST_CASE("workload: a number too large for JSON's double is an input error, not an internal one") {
    // Found by the workload fuzz target: nlohmann::json throws out_of_range, not parse_error.
    CHECK(error_of(with_task(R"({"kind": "host_delay", "us": 1e3081048576})")).find("not valid JSON") != std::string::npos);
}

TEST_CASE("workload: named buffers are allocated before use and freed once") {
    auto with = [](const std::string& tasks) {
        return R"({"format": "sfumato-workload", "version": 2, "streams": [{"id": 0}], "tasks": [)" + tasks + "]}";
    };
    const std::string alloc = R"({"kind": "alloc", "buffer": "x", "bytes": 4096, "addr": 1048576})";
    const std::string ok = with(alloc + R"(, {"kind": "memcpy", "stream": 0, "dir": "h2d", "bytes": 1024, "dst": "x", "dst_offset": 3072, "async": false},
      {"kind": "kernel", "stream": 0, "node": {"op_type": "Relu", "inputs": [{"shape": [2048], "dtype": "fp16", "buffer": "x"}]}},
      {"kind": "free", "buffer": "x", "gap_ns": 5})");
    CHECK(error_of(ok).empty());
    const auto w = wl::parse(ok, ops_check);
    CHECK(w.tasks[0].kind == wl::Kind::Alloc);
    CHECK(w.tasks[0].addr == 1048576);
    CHECK(w.tasks[1].dst == "x");
    CHECK(!w.tasks[1].async);
    CHECK(w.tasks[2].node["op_type"] == "Relu");
    CHECK(w.tasks[3].gap_ns == 5);
    CHECK(wl::to_json(wl::parse(wl::to_json(w), ops_check)) == wl::to_json(w));

    CHECK_THAT(error_of(with(R"({"kind": "memcpy", "stream": 0, "dir": "h2d", "bytes": 8, "dst": "y"})")),
               Catch::Contains("task 0 (memcpy): field 'dst'") && Catch::Contains("not allocated"));
    CHECK_THAT(error_of(with(alloc + R"(, {"kind": "memcpy", "stream": 0, "dir": "h2d", "bytes": 1025, "dst": "x", "dst_offset": 3072})")),
               Catch::Contains("do not fit buffer 'x'"));
    CHECK_THAT(error_of(with(alloc + "," + alloc)), Catch::Contains("task 1 (alloc)") && Catch::Contains("already allocated"));
    CHECK_THAT(error_of(with(alloc + R"(, {"kind": "free", "buffer": "x"}, {"kind": "free", "buffer": "x"})")),
               Catch::Contains("task 2 (free)"));
    CHECK_THAT(error_of(with(R"({"kind": "kernel", "stream": 0, "node": {"op_type": "Relu", "inputs": [{"shape": [4], "buffer": "q"}]}})")),
               Catch::Contains("node.inputs[0].buffer") && Catch::Contains("'q'"));
    CHECK_THAT(error_of(with(R"({"kind": "kernel", "stream": 0})")), Catch::Contains("names an operator"));
    CHECK_THAT(error_of(with(R"({"kind": "kernel", "stream": 0, "node": {"inputs": []}})")), Catch::Contains("op_type"));
}

TEST_CASE("workload: devices and collectives parse, round-trip, and old files stay on device 0") {
    const wl::Workload old = wl::parse(kExample, ops_check);
    CHECK_FALSE(old.multi_device());
    CHECK(old.devices() == 1);
    for (const auto& t : old.tasks) CHECK(t.device == 0);
    const std::string text = R"({"format": "sfumato-workload", "version": 2, "streams": [{"id": 0}],
 "tasks": [
  {"kind": "alloc", "device": 0, "buffer": "g", "bytes": 64},
  {"kind": "alloc", "device": 3, "buffer": "g", "bytes": 64},
  {"kind": "collective", "stream": 0, "op": "reduce", "count": 32, "dtype": "bf16", "redop": "max", "root": 1,
   "algo": "ring", "ranks": [3, 0], "send": "g", "recv": "g"},
  {"kind": "memcpy", "device": 3, "stream": 0, "dir": "d2h", "bytes": 64, "src": "g", "save": "g3.bin"}]})";
    const wl::Workload w = wl::parse(text, ops_check);
    CHECK(w.multi_device());
    CHECK(w.devices() == 4);
    const wl::Task& c = w.tasks[2];
    CHECK(c.kind == wl::Kind::Collective);
    CHECK(c.coll_op == "reduce");
    CHECK(c.ranks == std::vector<uint32_t>{3, 0});
    CHECK(c.rank_of(0) == 1);
    CHECK(c.on_device(3));
    CHECK_FALSE(c.on_device(1));
    CHECK(w.tasks[3].save == "g3.bin");
    CHECK(wl::to_json(wl::parse(wl::to_json(w), ops_check)) == wl::to_json(w));
    // A buffer too small for the collective on one rank names that rank's device.
    const std::string small = R"({"format": "sfumato-workload", "version": 2, "streams": [{"id": 0}],
 "tasks": [{"kind": "alloc", "buffer": "g", "bytes": 64}, {"kind": "alloc", "device": 1, "buffer": "g", "bytes": 8},
  {"kind": "collective", "stream": 0, "op": "all_reduce", "count": 32, "ranks": [0, 1], "send": "g"}]})";
    const std::string e = error_of(small);
    CHECK(e.find("task 2 (collective): field 'send'") != std::string::npos);
    CHECK(e.find("on device 1") != std::string::npos);
    CHECK(error_of(R"({"format": "sfumato-workload", "version": 2, "streams": [{"id": 0}],
 "tasks": [{"kind": "memcpy", "stream": 0, "dir": "h2d", "bytes": 4, "save": "x"}]})")
              .find("field 'save'") != std::string::npos);
}

TEST_CASE("workload: recorded launches carry their start-up fields, older files default them to 0") {
    const std::string launch = R"({"kind": "kernel", "stream": 0, "launches": [{"name": "k", "type": "t", "kind": "mix",
        "block_dim": 4, "instr": "k0", "args_bytes": 48, "code_bytes": 8192}]})";
    auto w = wl::parse(with_task(launch), ops_check);
    REQUIRE(w.tasks[1].launches.size() == 1);
    const wl::Launch& l = w.tasks[1].launches[0];
    CHECK(l.kind == KernelKind::Mix);
    CHECK(l.type == "t");
    CHECK(l.args_bytes == 48);
    CHECK(l.code_bytes == 8192);
    auto w2 = wl::parse(wl::to_json(w), ops_check);
    CHECK(w2.tasks[1].launches[0].args_bytes == 48);
    CHECK(w2.tasks[1].launches[0].code_bytes == 8192);
    CHECK(wl::to_json(w2) == wl::to_json(w));
    // A version-1 file without them: no argument block, the estimated code size.
    auto old = wl::parse(with_task(R"({"kind": "kernel", "stream": 0, "launches": [{"name": "k", "block_dim": 1}]})"), ops_check);
    CHECK(old.tasks[1].launches[0].args_bytes == 0);
    CHECK(old.tasks[1].launches[0].code_bytes == 0);
    CHECK_THAT(error_of(with_task(R"({"kind": "kernel", "stream": 0, "launches": [{"block_dim": 1, "args_bytes": -1}]})")),
               Catch::Contains("launches[0].args_bytes"));
    CHECK_THAT(error_of(with_task(R"({"kind": "kernel", "stream": 0, "launches": [{"block_dim": 1, "code_bytes": 1e12}]})")),
               Catch::Contains("launches[0].code_bytes"));
}

TEST_CASE("workload: a flush task is device-wide and takes no other field") {
    auto w = wl::parse(with_task(R"({"kind": "flush", "gap_ns": 5})"), ops_check);
    CHECK(w.tasks[1].kind == wl::Kind::Flush);
    CHECK(w.tasks[1].stream == -1);
    CHECK(wl::parse(wl::to_json(w), ops_check).tasks[1].kind == wl::Kind::Flush);
    CHECK_THAT(error_of(with_task(R"({"kind": "flush", "stream": 0})")), Catch::Contains("field 'stream'"));
}
