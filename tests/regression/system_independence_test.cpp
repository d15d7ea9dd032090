// Chips of a system that share nothing (no collective, no peer copy) time their work as if each
// ran alone: `sfumato replay --system` of work on all four chips of system-tiny gives every task
// the cycles it takes when its chip is the only one with work, and chip 0 alone the cycles of the
// single-chip replay. Before sim/submit_order.h, SystemC's open order among processes woken at one
// instant (which follows every chip's pending events) decided which core's request reached the
// memory first, so identical kernels on chips 0 and 2 ended at different cycles, and neither at
// the cycle of the chip alone.
#include <array>
#include <catch2/catch.hpp>
#include <fstream>
#include <string>
#include <vector>

#include "tests/support.h"

using namespace sfumato;
using namespace sfumato::test;

namespace {

// Work for one device (`device`: the field naming it, or empty in a single-chip file); `v` varies
// the sizes (chips with different work run side by side).
std::string device_tasks(const std::string& device, uint32_t v) {
    const std::string d = device.empty() ? "" : device + ", ";
    return R"({"kind": "memcpy", )" + d + R"("stream": 0, "dir": "h2d", "bytes": )" +
           std::to_string(65536 * (1 + v)) +
           R"(, "pinned": true},
      {"kind": "kernel", )" +
           d + R"("stream": 0, "op": "matmul", "args": {"m": 256, "n": 256, "k": )" +
           std::to_string(128 + 64 * v) + R"(, "dtype": "fp16", "out_dtype": "fp32"}},
      {"kind": "kernel", )" +
           d + R"("stream": 1, "op": "add", "args": {"n": )" + std::to_string(32768 * (1 + v)) +
           R"(, "dtype": "fp16"}, "block_dim": 12},
      {"kind": "kernel", )" +
           d + R"("stream": 0, "op": "add", "args": {"n": 65536, "dtype": "fp16"}},
      {"kind": "memcpy", )" +
           d + R"("stream": 1, "dir": "d2d", "bytes": 300000},
      {"kind": "memcpy", )" +
           d + R"("stream": 0, "dir": "d2h", "bytes": 8192, "pinned": true},
      {"kind": "sync")" +
           (device.empty() ? "" : ", " + device) + "}";
}

std::string workload_file(const std::string& path, const std::vector<uint32_t>& devices, bool system = true) {
    std::string tasks;
    for (uint32_t dev : devices) {
        if (!tasks.empty()) tasks += ",\n";
        tasks += device_tasks(system ? R"("device": )" + std::to_string(dev) : "", dev % 2);
    }
    std::ofstream(path)
        << R"({"format": "sfumato-workload", "version": 2, "streams": [{"id": 0}, {"id": 1}], "tasks": [
)" << tasks
        << "]}";
    return path;
}

// Per task: issue, start and end cycle.
std::vector<std::array<uint64_t, 3>> cycles(const nlohmann::json& s) {
    std::vector<std::array<uint64_t, 3>> c;
    for (const auto& t : s["tasks"])
        c.push_back({t["issue_cycle"].get<uint64_t>(), t["start_cycle"].get<uint64_t>(),
                     t["end_cycle"].get<uint64_t>()});
    return c;
}

}  // namespace

TEST_CASE("replay --system: independent chips take the cycles each takes alone", "[workload][system]") {
    const std::string dir = temp_dir("sys_indep");
    auto run = [&](const std::string& file, const std::string& out, const std::string& target) {
        const CliResult r =
            run_cli("replay " + file + " " + target + " --mode timing --trace off --out " + dir + "/" + out);
        INFO(r.output);
        REQUIRE(r.code == 0);
        return read_json(dir + "/" + out + "/summary.json");
    };
    const std::string sys = "--system " + config("system-tiny");
    const auto all = cycles(run(workload_file(dir + "/all.json", {0, 1, 2, 3}), "all", sys));
    constexpr size_t kPerDevice = 7;
    REQUIRE(all.size() == 4 * kPerDevice);
    for (uint32_t d = 0; d < 4; ++d) {
        const auto alone = cycles(run(workload_file(dir + "/d.json", {d}), "d" + std::to_string(d), sys));
        REQUIRE(alone.size() == kPerDevice);
        for (size_t i = 0; i < kPerDevice; ++i) {
            INFO("device " << d << ", task " << i);
            CHECK(all[d * kPerDevice + i] == alone[i]);
        }
    }
    // Chips 0 and 2 (and 1 and 3) run the same work: the same cycles, whatever their index.
    for (size_t i = 0; i < 2 * kPerDevice; ++i) {
        INFO("task " << i);
        CHECK(all[i] == all[2 * kPerDevice + i]);
    }
    // The chip alone in a system is the chip of a single-chip run (system-tiny's chips are tiny).
    const auto single =
        cycles(run(workload_file(dir + "/one.json", {0}, false), "one", "--config " + config("tiny")));
    REQUIRE(single.size() == kPerDevice);
    for (size_t i = 0; i < kPerDevice; ++i) {
        INFO("task " << i);
        CHECK(all[i] == single[i]);
    }
}
