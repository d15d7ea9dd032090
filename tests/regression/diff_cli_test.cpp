// `sfumato diff` through the CLI: a run against itself is the same (exit 0); a runtime change
// (a larger launch overhead) is caught at 1 % (exit 1) while the kernels' own cycles stay
// equal; ops present in one run only are listed; bad arguments exit 2. And the replay cost
// model it guards: kernels on two streams that each take half the chip overlap.
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <map>

#include "tests/support.h"

using namespace sfumato::test;

namespace {

std::string workload(const std::string& dir, const std::string& name, const std::string& tasks, const std::string& streams) {
    const std::string path = dir + "/" + name;
    std::ofstream(path) << R"({"format": "sfumato-workload", "version": 2, "streams": )" + streams + R"(, "tasks": )" + tasks + "}";
    return path;
}

CliResult replay(const std::string& file, const std::string& out, const std::string& extra = "") {
    return run_cli("replay " + file + " --config " + config("tiny") + " --mode timing --out " + out + " " + extra);
}

const char* kKernel = R"({"kind": "kernel", "op": "add", "args": {"n": 2097152, "dtype": "fp16"}, "block_dim": 2, "stream": )";

}  // namespace

TEST_CASE("diff: a run against itself is the same, a larger launch overhead differs at 1 %") {
    const std::string d = temp_dir("diff");
    const std::string w = workload(d, "w.json", std::string("[") + kKernel + "0, \"name\": \"a\"}, " + kKernel + "0, \"name\": \"b\"}, {\"kind\": \"sync\"}]",
                                   R"([{"id": 0}])");
    REQUIRE(replay(w, d + "/base").code == 0);
    REQUIRE(replay(w, d + "/again").code == 0);
    const CliResult same = run_cli("diff " + d + "/base " + d + "/again/summary.json --tolerance 1");
    INFO(same.output);
    CHECK(same.code == 0);
    CHECK(same.output.find("verdict: SAME") != std::string::npos);

    // 20 us more per launch: the kernels are unchanged, the total is not.
    REQUIRE(replay(w, d + "/slow", "--set host.launch_overhead_ns=21000").code == 0);
    const CliResult slow = run_cli("diff " + d + "/base " + d + "/slow --tolerance 1");
    INFO(slow.output);
    CHECK(slow.code == 1);
    CHECK(slow.output.find("verdict: DIFFERENT") != std::string::npos);
    const CliResult by_type = run_cli("diff " + d + "/base " + d + "/slow --by type --tolerance 1");
    CHECK(by_type.code == 1);
    // The kernels themselves stay within the tolerance: they start at other absolute times, so
    // their memory requests meet the HBM's clock phase and refresh differently (a few tenths of
    // a percent), which the diff's per-op rows must not call a difference.
    const auto a = read_json(d + "/base/summary.json"), b = read_json(d + "/slow/summary.json");
    REQUIRE(a["ops"].size() == 2);
    for (size_t i = 0; i < 2; ++i) {
        const double ca = a["ops"][i]["cycles"].get<double>(), cb = b["ops"][i]["cycles"].get<double>();
        CHECK(std::fabs(cb - ca) <= 0.01 * ca);
    }
    CHECK(slow.output.find("0 of 2 ops beyond") != std::string::npos);

    // A run with one kernel fewer: the missing op is listed.
    const std::string w1 = workload(d, "w1.json", std::string("[") + kKernel + "0, \"name\": \"a\"}, {\"kind\": \"sync\"}]", R"([{"id": 0}])");
    REQUIRE(replay(w1, d + "/one").code == 0);
    const CliResult fewer = run_cli("diff " + d + "/base " + d + "/one --tolerance 100");
    CHECK(fewer.code == 1);
    CHECK(fewer.output.find("only in A: b") != std::string::npos);
}

TEST_CASE("diff: bad arguments exit 2 naming the culprit") {
    const std::string d = temp_dir("diff_bad");
    CHECK(run_cli("diff " + d + "/nothing " + d + "/nothing").code == 2);
    std::ofstream(d + "/x.json") << "{\"not\": 1}";
    const CliResult r = run_cli("diff " + d + "/x.json " + d + "/x.json");
    CHECK(r.code == 2);
    CHECK(r.output.find("x.json") != std::string::npos);
    CHECK(run_cli("diff " + d + "/x.json").code == 2);
}

TEST_CASE("replay: one kernel costs launch + kernel + sync, two half-chip kernels on two streams overlap") {
    const std::string d = temp_dir("half_chip");
    const std::string one = workload(d, "one.json", std::string("[") + kKernel + "0}, {\"kind\": \"sync\"}]", R"([{"id": 0}])");
    // Host costs set here; tiny runs at 1 GHz (configs/tiny.ini), so 1 ns is 1 cycle.
    const uint64_t launch_ns = 1000, call_ns = 200, sync_ns = 1000;
    const std::string host = " --set host.launch_overhead_ns=" + std::to_string(launch_ns) + " --set host.api_overhead_ns=" +
                             std::to_string(call_ns) + " --set host.sync_ns=" + std::to_string(sync_ns);
    REQUIRE(replay(one, d + "/one", host).code == 0);
    const auto s1 = read_json(d + "/one/summary.json");
    const uint64_t t1 = s1["total_cycles"].get<uint64_t>(), kernel = s1["ops"][0]["cycles"].get<uint64_t>();
    // No hidden uploads or allocations: the launch, the kernel, the sync's return, plus a dispatch
    // latency far below an upload of the 12 MiB of operands (393216 cycles at tiny's 32 B/cycle).
    CHECK(t1 >= kernel + launch_ns + sync_ns);
    CHECK(t1 <= kernel + launch_ns + call_ns + sync_ns + 1000);

    // block_dim 12: half of ascend910b-like's 24 cube cores (configs/ascend910b-like.ini), each
    // kernel compute-bound, so the two share the chip without slowing each other much.
    const std::string mm = R"({"kind": "kernel", "op": "matmul", "args": {"m": 1024, "n": 1024, "k": 2048}, "block_dim": 12, "stream": )";
    const std::string a = workload(d, "a.json", "[" + mm + "0}, {\"kind\": \"sync\"}]", R"([{"id": 0}])");
    const std::string b = workload(d, "b.json", "[" + mm + "0}, " + mm + "1}, {\"kind\": \"sync\"}]", R"([{"id": 0}, {"id": 1}])");
    for (const auto& [w, out] : {std::pair{a, "/a"}, std::pair{b, "/b"}})
        REQUIRE(run_cli("replay " + w + " --config " + config("ascend910b-like") + " --mode timing --out " + d + out).code == 0);
    const uint64_t alone = read_json(d + "/a/summary.json")["total_cycles"].get<uint64_t>();
    const uint64_t both = read_json(d + "/b/summary.json")["total_cycles"].get<uint64_t>();
    CHECK(both < alone * 3 / 2);
    const auto sb = read_json(d + "/b/summary.json");
    REQUIRE(sb["tasks"].size() == 3);
    CHECK(sb["tasks"][1]["start_cycle"].get<uint64_t>() < sb["tasks"][0]["end_cycle"].get<uint64_t>());  // they overlap
}

// --summary-ops: a run with more tasks than the limit sums its launches per operator type
// instead of listing them (ops_by_type), with the same totals as the full lists; diff compares
// such a summary by type and refuses a per-op comparison naming the option; report shows it.
TEST_CASE("summary: over --summary-ops the launches are summed per type, and diff and report use the sums") {
    const std::string d = temp_dir("summary_ops");
    const std::string w = workload(d, "w.json",
                                   std::string("[") + kKernel + "0, \"name\": \"a\"}, " + kKernel + "0, \"name\": \"b\"}, " +
                                       R"({"kind": "kernel", "op": "softmax", "args": {"rows": "5", "cols": "70"}, "block_dim": 1, "stream": 0, "name": "c"}, )" +
                                       R"({"kind": "sync"}])",
                                   R"([{"id": 0}])");
    REQUIRE(replay(w, d + "/full").code == 0);
    REQUIRE(replay(w, d + "/sums", "--summary-ops 1").code == 0);
    const auto full = read_json(d + "/full/summary.json"), sums = read_json(d + "/sums/summary.json");
    REQUIRE(full["ops"].size() == 3);
    CHECK(!sums.contains("ops"));
    REQUIRE(sums.contains("ops_omitted"));
    CHECK(sums["ops_omitted"]["limit"] == 1);
    CHECK(sums["ops_omitted"]["launches"] == 3);
    CHECK(sums["total_cycles"] == full["total_cycles"]);
    std::map<std::string, std::pair<uint64_t, uint64_t>> want;  // type -> (count, cycles)
    for (const auto& o : full["ops"]) {
        auto& x = want[o["type"].get<std::string>()];
        ++x.first, x.second += o["cycles"].get<uint64_t>();
    }
    REQUIRE(sums["ops_by_type"].size() == want.size());
    for (const auto& t : sums["ops_by_type"]) {
        const auto& x = want.at(t["type"].get<std::string>());
        CHECK(t["count"] == x.first);
        CHECK(t["cycles"] == x.second);
    }

    const CliResult by_type = run_cli("diff " + d + "/full " + d + "/sums --by type --tolerance 0");
    INFO(by_type.output);
    CHECK(by_type.code == 0);
    const CliResult by_op = run_cli("diff " + d + "/full " + d + "/sums");
    CHECK(by_op.code == 2);
    CHECK(by_op.output.find("--summary-ops") != std::string::npos);

    const CliResult rep = run_cli("report " + d + "/sums -o " + d + "/r.html");
    INFO(rep.output);
    REQUIRE(rep.code == 0);
    CHECK(read_text(d + "/r.html").find("summed per operator type") != std::string::npos);
}
