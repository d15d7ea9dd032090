// Completions ahead of SystemC time (chip.mem.completions_ahead, off by default; docs/speed.md):
// a simulation-speed switch of the exact memory service that must change nothing a run reports.
// Kernels whose pipes wait for request slots (a memory-bound add on tiny and on the 910B-like
// preset, a matmul), with the switch on and off: the same cycles and every stat the same; and
// functional mode gives timing mode's cycles with it on.
#include <catch2/catch.hpp>

#include "tests/support.h"

using namespace sfumato::test;

namespace {
struct Run {
    nlohmann::json summary;
    std::string stats;
};

Run run(const std::string& args, const std::string& tag) {
    const std::string out = temp_dir("mem_ahead_" + tag);
    const CliResult r = run_cli(args + " --trace off --out " + out);
    INFO(tag << "\n" << r.output);
    REQUIRE(r.code == 0);
    const CliResult s = run_cli_stdout("stats " + out + "/stats.h5");
    REQUIRE(s.code == 0);
    return {read_json(out + "/summary.json"), s.output};
}

void same_with_and_without(const std::string& args, const std::string& tag) {
    const Run on = run(args + " --mode timing --set chip.mem.completions_ahead=true", tag + "_on");
    const Run off = run(args + " --mode timing --set chip.mem.completions_ahead=false", tag + "_off");
    CHECK(on.summary["total_cycles"] == off.summary["total_cycles"]);
    CHECK(on.summary["ops"][0]["cycles"] == off.summary["ops"][0]["cycles"]);
    CHECK(on.stats == off.stats);
    CHECK(on.stats.find("mte2/mem_requests") != std::string::npos);
}
}  // namespace

TEST_CASE("mem ahead: a memory-bound add on tiny gives the same cycles and stats with and without and functional equals timing") {
    const std::string args = "kernel add --n 262144 --dtype fp16 --config " + config("tiny");
    same_with_and_without(args, "add_tiny");
    const std::string ahead = " --set chip.mem.completions_ahead=true";
    const Run f = run(args + ahead + " --mode functional", "add_tiny_f");
    const Run t = run(args + ahead + " --mode timing", "add_tiny_t");
    CHECK(f.summary["total_cycles"] == t.summary["total_cycles"]);
}

TEST_CASE("mem ahead: an add and a matmul on the 910B-like preset give the same cycles and stats with and without") {
    same_with_and_without("kernel add --n 1048576 --dtype fp16 --config " + config("ascend910b-like"), "add_910b");
    same_with_and_without("kernel matmul --m 512 --n 512 --k 512 --config " + config("ascend910b-like"), "mm_910b");
}
