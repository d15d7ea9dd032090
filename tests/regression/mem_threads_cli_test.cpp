// The memory system's HBM side on a second host thread (chip.mem.threads, memory_system_mt.cpp): a
// simulation-speed switch that must change nothing a run reports. Memory benchmarks (a read
// stream on two threads throughout; write and copy streams whose first write-back brings the run
// back to one thread) and a kernel (no run-ahead client: the other activation paths) with 1 and 2
// threads: the same summary figures and the same stats. threads = 2 without the HBM side's lead
// (frontend latency 0) is refused, naming the key, as a bad configuration.
#include <catch2/catch.hpp>

#include "tests/support.h"

using namespace sfumato::test;

namespace {
struct Run {
    nlohmann::json summary;
    std::string stats;
};

Run run(const std::string& args, const std::string& tag) {
    const std::string out = temp_dir("mem_threads_" + tag);
    const CliResult r = run_cli(args + " --trace off --out " + out);
    INFO(tag << "\n" << r.output);
    REQUIRE(r.code == 0);
    const CliResult s = run_cli_stdout("stats " + out + "/stats.h5");
    REQUIRE(s.code == 0);
    return {read_json(out + "/summary.json"), s.output};
}

// The summary without what differs by design (wall clock, the threads used).
nlohmann::json figures(nlohmann::json j) {
    for (const char* k : {"wall_seconds", "sim_gb_per_wall_second", "mem_threads", "config_hash", "manifest"}) j.erase(k);
    return j;
}

void same_with_one_and_two(const std::string& args, const std::string& tag, bool two_at_start) {
    const Run one = run(args + " --mode timing --set chip.mem.threads=1", tag + "_1");
    const Run two = run(args + " --mode timing --set chip.mem.threads=2", tag + "_2");
    CHECK(figures(one.summary) == figures(two.summary));
    CHECK(one.stats == two.stats);
    CHECK(one.stats.find("hbm/reads") != std::string::npos);
    if (one.summary.contains("mem_threads")) {
        CHECK(one.summary["mem_threads"] == 1);
        CHECK(two.summary["mem_threads"] == (two_at_start ? 2 : 1));
    }
}
}  // namespace

TEST_CASE("mem threads: a read stream past the L2 gives the same figures and stats on one thread and two") {
    same_with_one_and_two("membench --pattern seq --op read --bytes 64M --config " + config("ascend910b-like"), "seq_read",
                          true);
    same_with_one_and_two("membench --pattern random --op read --bytes 4M --config " + config("ascend910-like"), "rnd_read",
                          true);
}

TEST_CASE("mem threads: write and copy streams (write-backs, full write queues) give the same figures and stats") {
    same_with_one_and_two("membench --pattern random --op copy --bytes 16M --cores 8 --config " + config("ascend910-like"),
                          "rnd_copy", true);
    same_with_one_and_two("membench --pattern random --op write --bytes 4M --config " + config("tiny"), "rnd_write_tiny",
                          true);
}

TEST_CASE("mem threads: a kernel (no run-ahead client) gives the same cycles and stats on one thread and two") {
    same_with_one_and_two("kernel add --n 262144 --dtype fp16 --config " + config("tiny"), "add_tiny", false);
}

TEST_CASE("mem threads: two threads without the HBM side's lead are refused, naming the key") {
    const std::string out = temp_dir("mem_threads_refused");
    const CliResult r = run_cli("membench --pattern seq --op read --bytes 1M --config " + config("tiny") +
                                " --set chip.mem.threads=2 --set chip.hbm.frontend_latency_ns=0 --trace off --out " + out);
    CHECK(r.code == 2);  // bad input, before anything runs
    CHECK(r.output.find("chip.mem.threads") != std::string::npos);
    CHECK(r.output.find("internal error") == std::string::npos);
}
