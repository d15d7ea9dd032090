// Multi-device workloads through `sfumato replay --system F`: tasks on their devices, collective
// tasks on the communicator of their ranks with exact values in functional mode (the bytes a d2h
// copy saves), the same cycles in timing mode, and files that name devices or collectives the
// run cannot have (exit 2 naming the task and field).
#include <catch2/catch.hpp>
#include <cstring>
#include <fstream>

#include "isa/dtype.h"
#include "tests/support.h"

using namespace sfumato;
using namespace sfumato::test;

namespace {

std::string write_file(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
    return path;
}

// fp16 values v(device, i) = small integers, so every sum is exact in fp16.
float value(uint32_t dev, uint64_t i) { return static_cast<float>(static_cast<int>((i * 7 + dev * 3) % 17) - 8); }

std::string fp16_bytes(uint32_t dev, uint64_t n) {
    std::string b(n * 2, '\0');
    for (uint64_t i = 0; i < n; ++i) isa::store_from_f32(isa::DType::FP16, reinterpret_cast<uint8_t*>(b.data()) + 2 * i, value(dev, i));
    return b;
}

std::vector<float> read_fp16(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::string b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<float> v(b.size() / 2);
    for (size_t i = 0; i < v.size(); ++i) v[i] = isa::load_as_f32(isa::DType::FP16, reinterpret_cast<const uint8_t*>(b.data()) + 2 * i);
    return v;
}

constexpr uint64_t kCount = 1001;  // odd, and not a multiple of the ranks

// Three devices: an all_reduce over devices 0..2 and an all_gather over devices 2 and 0 (rank
// order differs from device order), an add kernel on device 1 on a second stream, results saved.
std::string workload(const std::string& dir) {
    std::string tasks;
    auto add = [&](const std::string& t) { tasks += (tasks.empty() ? "" : ",\n") + t; };
    for (uint32_t d = 0; d < 3; ++d) {
        write_file(dir + "/x" + std::to_string(d) + ".bin", fp16_bytes(d, kCount));
        const std::string dev = std::to_string(d);
        add(R"({"kind": "alloc", "device": )" + dev + R"(, "buffer": "x", "bytes": )" + std::to_string(2 * kCount) +
            R"(, "init": "x)" + dev + R"(.bin"})");
        add(R"({"kind": "alloc", "device": )" + dev + R"(, "buffer": "y", "bytes": )" + std::to_string(2 * kCount) + "}");
        add(R"({"kind": "alloc", "device": )" + dev + R"(, "buffer": "g", "bytes": )" + std::to_string(4 * kCount) + "}");
    }
    add(R"({"kind": "kernel", "device": 1, "stream": 1, "op": "add", "args": {"n": 65536, "dtype": "fp16"}})");
    add(R"({"kind": "collective", "name": "ar", "stream": 0, "op": "all_reduce", "count": )" + std::to_string(kCount) +
        R"(, "dtype": "fp16", "ranks": [0, 1, 2], "send": "x", "recv": "y"})");
    add(R"({"kind": "collective", "name": "ag", "stream": 0, "op": "all_gather", "count": )" + std::to_string(kCount) +
        R"(, "dtype": "fp16", "algo": "ring", "ranks": [2, 0], "send": "x", "recv": "g"})");
    for (uint32_t d = 0; d < 3; ++d) {
        const std::string dev = std::to_string(d);
        add(R"({"kind": "memcpy", "device": )" + dev + R"(, "stream": 0, "dir": "d2h", "bytes": )" +
            std::to_string(2 * kCount) + R"(, "src": "y", "save": "y)" + dev + R"(.bin"})");
    }
    for (uint32_t d : {0u, 2u}) {
        const std::string dev = std::to_string(d);
        add(R"({"kind": "memcpy", "device": )" + dev + R"(, "stream": 0, "dir": "d2h", "bytes": )" +
            std::to_string(4 * kCount) + R"(, "src": "g", "save": "g)" + dev + R"(.bin"})");
    }
    add(R"({"kind": "sync", "device": 1})");
    return write_file(dir + "/w.json", R"({"format": "sfumato-workload", "version": 2,
 "streams": [{"id": 0, "priority": 0}, {"id": 1, "priority": 0}], "tasks": [
)" + tasks + "]}");
}

CliResult replay(const std::string& file, const std::string& out, const std::string& extra = "") {
    return run_cli("replay " + file + " --system " + config("system-tiny") + " --trace off --out " + out + " " + extra);
}

}  // namespace

TEST_CASE("replay --system: collectives in a workload give exact values on every rank", "[workload][collective]") {
    const std::string dir = temp_dir("wl_multi");
    const std::string file = workload(dir);
    const CliResult r = replay(file, dir + "/f");
    INFO(r.output);
    REQUIRE(r.code == 0);
    const auto s = read_json(dir + "/f/summary.json");
    CHECK(s["devices"] == 3);
    CHECK(s["chips"] == 4);
    CHECK(s["saved"].size() == 5);
    for (uint32_t d = 0; d < 3; ++d) {
        const auto y = read_fp16(dir + "/f/y" + std::to_string(d) + ".bin");
        REQUIRE(y.size() == kCount);
        for (uint64_t i = 0; i < kCount; ++i) {
            INFO("device " << d << " element " << i);
            REQUIRE(y[i] == value(0, i) + value(1, i) + value(2, i));
        }
    }
    // all_gather over ranks [2, 0]: rank 0 is device 2, so its block comes first.
    for (uint32_t d : {0u, 2u}) {
        const auto g = read_fp16(dir + "/f/g" + std::to_string(d) + ".bin");
        REQUIRE(g.size() == 2 * kCount);
        for (uint64_t i = 0; i < kCount; ++i) {
            INFO("device " << d << " element " << i);
            REQUIRE(g[i] == value(2, i));
            REQUIRE(g[kCount + i] == value(0, i));
        }
    }
    // Each task ran on its device; the collectives on all their ranks.
    const auto& t = s["tasks"];
    REQUIRE(t.size() == 18);  // 9 allocs, the kernel, 2 collectives, 5 saving copies, the sync
    CHECK(t[9]["device"] == 1);
    CHECK(t[9]["kind"] == "kernel");
    CHECK(t[10]["kind"] == "collective");
    CHECK(t[10]["device"].is_null());
    CHECK(t[10]["end_cycle"].get<uint64_t>() > t[10]["start_cycle"].get<uint64_t>());
    // The all_gather follows the all_reduce on the same streams of devices 0 and 2.
    CHECK(t[11]["start_cycle"].get<uint64_t>() >= t[10]["start_cycle"].get<uint64_t>());
    // A d2h copy of y waits for the all_reduce on its stream.
    for (size_t i = 12; i < 15; ++i) CHECK(t[i]["start_cycle"].get<uint64_t>() >= t[10]["start_cycle"].get<uint64_t>());
}

TEST_CASE("replay --system: timing mode takes the cycles of functional mode, task by task", "[workload][collective]") {
    const std::string dir = temp_dir("wl_multi_modes");
    const std::string file = workload(dir);
    const CliResult f = replay(file, dir + "/f");
    const CliResult t = replay(file, dir + "/t", "--mode timing");
    INFO(f.output << t.output);
    REQUIRE(f.code == 0);
    REQUIRE(t.code == 0);
    const auto sf = read_json(dir + "/f/summary.json"), st = read_json(dir + "/t/summary.json");
    CHECK(sf["total_cycles"].get<uint64_t>() > 0);
    CHECK(sf["total_cycles"] == st["total_cycles"]);
    CHECK(sf["tasks"] == st["tasks"]);
    CHECK(st["saved"].empty());  // no data in timing mode
}

TEST_CASE("replay: multi-device files the run cannot have exit 2 naming the task", "[workload][collective]") {
    const std::string dir = temp_dir("wl_multi_bad");
    auto file = [&](const std::string& tasks) {
        return write_file(dir + "/bad.json", R"({"format": "sfumato-workload", "version": 2, "streams": [{"id": 0}], "tasks": [)" +
                                                 tasks + "]}");
    };
    const std::string coll = R"({"kind": "collective", "stream": 0, "op": "all_reduce", "count": 8, "ranks": [0, 1]})";
    // Without --system.
    CliResult r = run_cli("replay " + file(coll) + " --config " + config("tiny") + " --out " + dir + "/o");
    CHECK(r.code == 2);
    CHECK(r.output.find("task 0 (collective)") != std::string::npos);
    CHECK(r.output.find("--system") != std::string::npos);
    r = run_cli("replay " + file(R"({"kind": "sync", "device": 1})") + " --config " + config("tiny") + " --out " + dir + "/o");
    CHECK(r.code == 2);
    CHECK(r.output.find("device 1") != std::string::npos);
    // A device the system does not have (system-tiny has 4 chips).
    r = replay(file(R"({"kind": "sync", "device": 7})"), dir + "/o");
    CHECK(r.code == 2);
    CHECK(r.output.find("field 'device'") != std::string::npos);
    r = replay(file(R"({"kind": "collective", "stream": 0, "op": "all_reduce", "count": 8, "ranks": [0, 5]})"), dir + "/o");
    CHECK(r.code == 2);
    CHECK(r.output.find("field 'ranks'") != std::string::npos);
    // Malformed collectives.
    r = replay(file(R"({"kind": "collective", "stream": 0, "op": "all_reduce", "count": 8, "ranks": [1, 1]})"), dir + "/o");
    CHECK(r.code == 2);
    CHECK(r.output.find("listed twice") != std::string::npos);
    r = replay(file(R"({"kind": "collective", "stream": 0, "op": "scatter", "count": 8, "ranks": [0, 1]})"), dir + "/o");
    CHECK(r.code == 2);
    CHECK(r.output.find("field 'op'") != std::string::npos);
    // A send buffer on one rank only.
    r = replay(file(R"({"kind": "alloc", "buffer": "x", "bytes": 16},
                       {"kind": "collective", "stream": 0, "op": "all_reduce", "count": 8, "ranks": [0, 1], "send": "x"})"),
               dir + "/o");
    CHECK(r.code == 2);
    CHECK(r.output.find("task 1 (collective): field 'send': buffer 'x' is not allocated on device 1") != std::string::npos);
    // Events are each device's own.
    r = replay(file(R"({"kind": "record", "device": 0, "stream": 0, "event": "e"},
                       {"kind": "wait", "device": 1, "stream": 0, "event": "e"})"),
               dir + "/o");
    CHECK(r.code == 2);
    CHECK(r.output.find("never recorded on device 1") != std::string::npos);
}
