// `--trace off|op|task|instr|mem` through the CLI: each level keeps what the one below writes
// and adds its own detail (op: the runtime API track; task: the stream tracks and queue-depth
// counters; instr: one track per pipe with instruction slices; mem: HBM bandwidth and L2 hit-rate
// counters); off writes an empty, valid trace.
#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "tests/support.h"

using namespace sfumato::test;

namespace {

struct Seen {
    size_t events = 0, slices = 0, counters = 0;
    std::set<std::string> tracks, counter_names;
};

Seen read_trace(const std::string& path) {
    const auto t = read_json(path);
    Seen s;
    for (const auto& e : t["traceEvents"]) {
        ++s.events;
        const std::string ph = e.value("ph", "");
        if (ph == "X") ++s.slices;
        if (ph == "C") ++s.counters, s.counter_names.insert(e.value("name", ""));
        if (ph == "M" && e.value("name", "") == "thread_name") s.tracks.insert(e["args"]["name"].get<std::string>());
    }
    return s;
}

bool any_with(const std::set<std::string>& s, const std::string& part) {
    for (const auto& x : s)
        if (x.find(part) != std::string::npos) return true;
    return false;
}

}  // namespace

TEST_CASE("trace levels: each level adds its detail to the one below") {
    const std::string d = temp_dir("trace_levels");
    std::map<std::string, Seen> at;
    for (const std::string level : {"off", "op", "task", "instr", "mem"}) {
        const CliResult r = run_cli("kernel add --n 65536 --config " + config("tiny") + " --mode timing --trace " + level +
                                    " --out " + d + "/" + level);
        INFO(level << ": " << r.output);
        REQUIRE(r.code == 0);
        at[level] = read_trace(d + "/" + level + "/trace.json");
    }
    CHECK(at["off"].events == 0);
    CHECK(at["op"].events > 0);
    CHECK(at["op"].events < at["task"].events);
    CHECK(at["task"].events < at["instr"].events);
    CHECK(at["instr"].events < at["mem"].events);
    // op: the runtime API on the host, no streams or pipes yet.
    CHECK(any_with(at["op"].tracks, "API"));
    CHECK_FALSE(any_with(at["op"].tracks, "stream"));
    CHECK_FALSE(any_with(at["op"].tracks, "MTE2"));
    // task: the stream the kernel ran on, with its queue depth.
    CHECK(any_with(at["task"].tracks, "stream"));
    CHECK(any_with(at["task"].counter_names, "queue"));
    CHECK_FALSE(any_with(at["task"].tracks, "MTE2"));
    // instr: the pipes of the cores; the instruction slices outnumber the task level's slices.
    CHECK(any_with(at["instr"].tracks, "MTE2"));
    CHECK(any_with(at["instr"].tracks, "MTE3"));
    CHECK(at["instr"].slices > at["task"].slices);
    CHECK_FALSE(any_with(at["instr"].counter_names, "hbm"));
    // mem: the same slices, plus memory counters.
    CHECK(at["mem"].slices == at["instr"].slices);
    CHECK(any_with(at["mem"].counter_names, "hbm"));
    CHECK(any_with(at["mem"].counter_names, "l2 hit rate"));
}
