// The bulk memory service on a kernel (chip.mem.service = bulk, docs/speed.md "Bulk memory
// mode"): a memory-bound elementwise add on tiny, cold L2 (its inputs written back first), against
// the exact service. Its cycles stay within the stated bound, functional and timing modes agree,
// the summary names the service, and the kernel does not beat the HBM roofline by more than the
// written third that may stay in the write-back L2 (the rule cli_add_test.cpp applies to exact),
// and its pipes send the same requests (as one burst per DMA instruction).
#include <catch2/catch.hpp>
#include <cmath>
#include <map>

#include "tests/support.h"

using namespace sfumato::test;

namespace {
// docs/speed.md, "Bulk memory mode": kernel cycles within this fraction of exact.
constexpr double kBulkKernelBound = 0.05;
}  // namespace

TEST_CASE("mem bulk: a memory-bound add within the stated bound of exact, functional = timing, under the roofline") {
    const std::string base = "kernel add --n 65536 --dtype fp16 --trace off --config " + config("tiny");
    std::map<std::string, std::string> outs;
    auto run = [&](const std::string& tag, const std::string& extra) {
        const std::string out = temp_dir("mem_bulk_" + tag);
        outs[tag] = out;
        const CliResult r = run_cli(base + " " + extra + " --out " + out);
        INFO(tag << "\n" << r.output);
        REQUIRE(r.code == 0);
        return read_json(out + "/summary.json");
    };
    const auto exact = run("exact", "--mode timing");
    const auto bulk = run("bulk", "--mode timing --set chip.mem.service=bulk");
    const auto bulk_f = run("bulk_f", "--mode functional --set chip.mem.service=bulk");
    CHECK(exact["mem_service"] == "exact");
    CHECK(bulk["mem_service"] == "bulk");
    CHECK(bulk_f["total_cycles"] == bulk["total_cycles"]);
    const double ce = exact["ops"][0]["cycles"].get<double>(), cb = bulk["ops"][0]["cycles"].get<double>();
    INFO("kernel cycles exact " << ce << ", bulk " << cb);
    CHECK(std::abs(cb / ce - 1.0) <= kBulkKernelBound);
    const double te = exact["total_cycles"].get<double>(), tb = bulk["total_cycles"].get<double>();
    CHECK(std::abs(tb / te - 1.0) <= kBulkKernelBound);
    CHECK(bulk["ops"][0]["roofline_fraction"].get<double>() <= 1.5);
    // The bulk service takes each DMA instruction's requests as one burst: the pipes still count
    // the same requests (their stats), every core's and pipe's.
    const CliResult re = run_cli_stdout("stats " + outs["exact"] + "/stats.h5 mem_requests");
    const CliResult rb = run_cli_stdout("stats " + outs["bulk"] + "/stats.h5 mem_requests");
    REQUIRE(re.code == 0);
    CHECK(re.output.find("mte2/mem_requests") != std::string::npos);
    CHECK(rb.output == re.output);
}
