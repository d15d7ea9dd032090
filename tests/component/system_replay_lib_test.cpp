// The multi-chip host programs as a library (runtime/system), driven from C++ the way a user's
// program would: build the system of chips (models/link), hand it to sys::SystemRun through
// sim/system_if.h, replay a two-device workload with sys::replay_system, and get the same task
// times, total cycles and saved bytes as `sfumato replay --system` prints for the same files.
#include <catch2/catch.hpp>
#include <cstring>
#include <fstream>
#include <memory>

#include "isa/dtype.h"
#include "models/link/system.h"
#include "runtime/comm/communicator.h"
#include "runtime/replay/replay_kernels.h"
#include "runtime/system/system_replay.h"
#include "sim/config.h"
#include "sim/sc_time_util.h"
#include "tests/support.h"

using namespace sfumato;
using namespace sfumato::test;

namespace {

constexpr uint64_t kCount = 777;  // elements of the all_reduce (not a multiple of the ranks)

float value(uint32_t dev, uint64_t i) { return static_cast<float>(static_cast<int>((i * 5 + dev * 3) % 13) - 6); }

void write_file(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// Two devices: each loads x, an add kernel on device 1, an all_reduce of x over both into y, y saved.
std::string write_workload(const std::string& dir) {
    std::string tasks;
    auto add = [&](const std::string& t) { tasks += (tasks.empty() ? "" : ",\n") + t; };
    for (uint32_t d = 0; d < 2; ++d) {
        std::string b(kCount * 2, '\0');
        for (uint64_t i = 0; i < kCount; ++i)
            isa::store_from_f32(isa::DType::FP16, reinterpret_cast<uint8_t*>(b.data()) + 2 * i, value(d, i));
        write_file(dir + "/x" + std::to_string(d) + ".bin", b);
        const std::string dev = std::to_string(d);
        add(R"({"kind": "alloc", "device": )" + dev + R"(, "buffer": "x", "bytes": )" + std::to_string(2 * kCount) +
            R"(, "init": "x)" + dev + R"(.bin"})");
        add(R"({"kind": "alloc", "device": )" + dev + R"(, "buffer": "y", "bytes": )" + std::to_string(2 * kCount) + "}");
    }
    add(R"({"kind": "kernel", "device": 1, "stream": 0, "op": "add", "args": {"n": 16384, "dtype": "fp16"}})");
    add(R"({"kind": "collective", "name": "ar", "stream": 0, "op": "all_reduce", "count": )" + std::to_string(kCount) +
        R"(, "dtype": "fp16", "ranks": [0, 1], "send": "x", "recv": "y"})");
    for (uint32_t d = 0; d < 2; ++d) {
        const std::string dev = std::to_string(d);
        add(R"({"kind": "memcpy", "device": )" + dev + R"(, "stream": 0, "dir": "d2h", "bytes": )" +
            std::to_string(2 * kCount) + R"(, "src": "y", "save": "y)" + dev + R"(.bin"})");
    }
    const std::string file = dir + "/w.json";
    write_file(file, R"({"format": "sfumato-workload", "version": 2, "streams": [{"id": 0, "priority": 0}], "tasks": [
)" + tasks + "]}");
    return file;
}

// A user's program's system: parameters (the chip preset the system file names, then the system
// file and the override), the system of chips, the library's run over it.
struct TwoChips {
    Config c;
    std::unique_ptr<SystemParams> sp;
    std::unique_ptr<ChipParams> cp;
    std::unique_ptr<rt::RuntimeParams> host;
    std::unique_ptr<comm::CommParams> cm;
    TraceHub trace;
    StatGroup root{nullptr, ""};
    std::unique_ptr<System> system;
    std::unique_ptr<sys::SystemRun> run;
    explicit TwoChips(bool functional) {
        c.load_ini(config("tiny"));
        c.load_ini(config("system-tiny"));
        c.apply_override("system.chips_per_server=2");
        sp = std::make_unique<SystemParams>(c);
        cp = std::make_unique<ChipParams>(c);
        host = std::make_unique<rt::RuntimeParams>(ParamScope(c, "host"));
        cm = std::make_unique<comm::CommParams>(ParamScope(c, "comm"));
        c.check_unused();
        init_time_resolution();
        system = std::make_unique<System>("system", *sp, *cp, functional, trace, root);
        run = std::make_unique<sys::SystemRun>(*system, *host, &trace, root);
    }
};

}  // namespace

TEST_CASE("system library: a two-chip replay driven from C++ gives the CLI's task times and bytes", "[system][workload]") {
    const std::string dir = temp_dir("system_lib");
    const std::string file = write_workload(dir);
    const std::string two_chips = "system.chips_per_server=2";

    // The CLI's run of the same files.
    const CliResult cli = run_cli("replay " + file + " --system " + config("system-tiny") + " --set " + two_chips +
                                  " --trace off --out " + dir + "/cli");
    INFO(cli.output);
    REQUIRE(cli.code == 0);
    const nlohmann::json s = read_json(dir + "/cli/summary.json");
    REQUIRE(s["chips"] == 2);

    // The same run as a user's program.
    TwoChips t(true);
    sys::SystemRun& run = *t.run;
    REQUIRE(run.size() == 2);
    const workload::Workload w = workload::load(file, replay::validate_op);
    const sys::SystemReplay r = sys::replay_system(run, w, *t.cm, {file, "ops", {}, t.cp->name.get()});

    CHECK(r.devices == 2);
    CHECK(run.waiting_hosts().empty());
    CHECK(run.total_cycles() > 0);
    CHECK(run.total_cycles() == s["total_cycles"].get<uint64_t>());
    // Task by task (device, issue, start, end), as summary.json lists them.
    CHECK(workload::tasks_json(r.times, true) == s["tasks"]);
    // Both devices' copies of y hold the sum, exactly (small integers in fp16), as the CLI saved.
    REQUIRE(r.saved.size() == 2);
    for (const auto& [name, bytes] : r.saved) {
        INFO(name);
        REQUIRE(bytes.size() == 2 * kCount);
        for (uint64_t i = 0; i < kCount; ++i)
            REQUIRE(isa::load_as_f32(isa::DType::FP16, bytes.data() + 2 * i) == value(0, i) + value(1, i));
        CHECK(read_text(dir + "/cli/" + name) == std::string(bytes.begin(), bytes.end()));
    }
    // The links carried the all_reduce: each chip must receive all n = 2 * kCount bytes' worth of
    // the other's data (half of it raw, half reduced, or all of it), so at least 2n in all.
    const nlohmann::json links = run.links_json(0, run.end_tick());
    uint64_t moved = 0;
    for (const auto& l : links) {
        CHECK(l["bytes"].get<uint64_t>() <= l["wire_bytes"].get<uint64_t>());
        moved += l["bytes"].get<uint64_t>();
    }
    CHECK(moved >= 2 * (2 * kCount));
}

TEST_CASE("system library: the two-chip replay in timing mode takes the CLI's functional cycles and saves nothing",
          "[system][workload]") {
    const std::string dir = temp_dir("system_lib_timing");
    const std::string file = write_workload(dir);
    const CliResult cli = run_cli("replay " + file + " --system " + config("system-tiny") +
                                  " --set system.chips_per_server=2 --trace off --out " + dir + "/cli");
    INFO(cli.output);
    REQUIRE(cli.code == 0);
    const nlohmann::json s = read_json(dir + "/cli/summary.json");
    TwoChips t(false);
    const workload::Workload w = workload::load(file, replay::validate_op);
    const sys::SystemReplay r = sys::replay_system(*t.run, w, *t.cm, {file, "ops", {}, t.cp->name.get()});
    CHECK(t.run->total_cycles() == s["total_cycles"].get<uint64_t>());
    CHECK(workload::tasks_json(r.times, true) == s["tasks"]);
    CHECK(r.saved.empty());  // timing mode moves no data
}
