// Workload replay through the runtime on cores with fixed block times.
#include <catch2/catch.hpp>

#include "tests/component/ts_fixture.h"
#include "sim/error.h"
#include "traces/workload_replay.h"

using namespace sfumato;
using namespace sfumato::test;

namespace {

// Operator "fixed": blocks of args.cycles cycles.
std::string fixed_ops(const std::string& op, const std::map<std::string, std::string>& args) {
    if (op != "fixed") return "unknown op '" + op + "'";
    for (const auto& [k, v] : args) {
        if (k != "cycles") return "unknown argument '" + k + "'";
    }
    return {};
}

std::vector<KernelDesc> fixed_factory(rt::Context&, const workload::Task& t, const workload::Placer&) {
    return {fixed_kernel(t.op, t.block_dim ? t.block_dim : 1, std::stoull(t.args.at("cycles")))};
}

}  // namespace

TEST_CASE("workload replay: the issue's example runs and reports every task") {
    const char* text = R"({"format": "sfumato-workload", "version": 1,
     "streams": [{"id": 0, "priority": 0}, {"id": 1, "priority": 1}],
     "tasks": [
      {"kind": "memcpy", "stream": 0, "dir": "h2d", "bytes": 268435456, "pinned": true},
      {"kind": "kernel", "stream": 0, "op": "fixed", "args": {"cycles": 20000}, "block_dim": 2},
      {"kind": "record", "stream": 0, "event": "e0"},
      {"kind": "wait", "stream": 1, "event": "e0"},
      {"kind": "kernel", "stream": 1, "op": "fixed", "args": {"cycles": 100}, "name": "after"},
      {"kind": "host_delay", "us": 5},
      {"kind": "sync", "stream": 1}]})";
    init_time_resolution();
    Config cfg;
    TestDevice dev(cfg);
    rt::Device rtdev(dev, dev.host_params());
    rt::Context& ctx = rtdev.open_context();
    const auto w = workload::parse(text, fixed_ops);
    workload::Replayer rep(ctx, w, fixed_factory);
    Host host("host", [&] { rep.run(); });
    sc_core::sc_start();
    REQUIRE(host.finished);
    REQUIRE(rep.pending().empty());
    const auto times = rep.times(tiny_info().clock);
    REQUIRE(times.size() == 7);
    for (const auto& t : times) {
        CHECK(t.done);
        CHECK(t.issue_cycle <= t.start_cycle);
        CHECK(t.start_cycle <= t.end_cycle);
    }
    CHECK(times[1].kind == "kernel");
    CHECK(times[4].name == "after");
    CHECK(times[4].start_cycle >= times[2].end_cycle);  // waits for e0's record
    CHECK(times[1].start_cycle >= times[0].end_cycle);  // stream order
    CHECK(times[5].end_cycle - times[5].start_cycle == 5000);  // 5 us at 1 GHz
    const auto j = workload::tasks_json(times);
    CHECK(j[5]["stream"].is_null());
    CHECK(j[3]["kind"] == "wait");
    // The kernel's block_dim comes from the file.
    CHECK(ctx.tasks()[1].task->kernel.block_dim == 2);
}

TEST_CASE("workload replay: saved bytes in timing mode are a clear error, not a read of a token address") {
    // A d2h copy that saves its bytes; the test device runs in timing mode (no data moves, a host
    // buffer is a token address).
    const char* text = R"({"format": "sfumato-workload", "version": 1, "streams": [{"id": 0, "priority": 0}],
     "tasks": [
      {"kind": "memcpy", "stream": 0, "dir": "d2h", "bytes": 4096, "save": "out.bin"},
      {"kind": "sync", "stream": 0}]})";
    init_time_resolution();
    Config cfg;
    TestDevice dev(cfg);
    REQUIRE_FALSE(dev.info().functional);
    rt::Device rtdev(dev, dev.host_params());
    rt::Context& ctx = rtdev.open_context();
    const auto w = workload::parse(text, fixed_ops);
    workload::Replayer rep(ctx, w, fixed_factory);
    Host host("host", [&] { rep.run(); });
    sc_core::sc_start();
    REQUIRE(host.finished);
    try {
        (void)rep.saved();
        FAIL("saved() in timing mode returned");
    } catch (const InputError& e) {
        const std::string m = e.what();
        CHECK(m.find("task 0") != std::string::npos);
        CHECK(m.find("out.bin") != std::string::npos);
        CHECK(m.find("functional mode only") != std::string::npos);
    }
}
