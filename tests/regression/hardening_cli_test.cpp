// What an outside review found wrong in the CLI's figures and exits, each checked as a user
// would see it: keys set but not read, exact clocks, one kernel duration, the cycle of a
// deadlock, a check that did not run, exit codes, help on stdout and exact counters in
// `sfumato stats`. Expected figures come from the presets' parameters.
#include <catch2/catch.hpp>
#include <regex>

#include "models/chip/chip_params.h"
#include "tests/support.h"
#include "traces/hdf5_stats.h"

using namespace sfumato;
using namespace sfumato::test;

namespace {

ChipParams* load(Config& c, const std::string& preset) {
    c.load_ini(config(preset));
    return new ChipParams(c);
}

uint64_t u64(const nlohmann::json& j) { return j.get<uint64_t>(); }

const nlohmann::json& kernel_task(const nlohmann::json& s) {
    for (const auto& t : s["tasks"])
        if (t["kind"] == "kernel") return t;
    FAIL("no kernel task");
    return s;
}

}  // namespace

TEST_CASE("config: a key the chosen configuration does not read exits 2 naming it") {
    const std::string run = "kernel add --n 4096 --mode timing --trace off ";
    // The skeleton memory's keys under the detailed model (the default) and the other way round.
    struct Case {
        std::string args, key;
    } cases[] = {
        {"--config " + config("tiny") + " --set chip.gm.latency=5", "chip.gm.latency"},
        {"--config " + config("tiny") + " --set chip.dma.d2d_gbps=5", "chip.dma.d2d_gbps"},
        {"--config " + config("tiny-simple-mem") + " --set chip.hbm.stacks=2", "chip.hbm.stacks"},
        {"--config " + config("tiny-simple-mem") + " --set chip.l2.line_bytes=384", "chip.l2.line_bytes"},
        {"--config " + config("tiny-simple-mem") + " --set chip.dma.engines=2", "chip.dma.engines"},
        // A preset's detailed-memory keys are not read under the simple model.
        {"--config " + config("tiny") + " --set chip.mem.model=simple", "chip.hbm."},
        // Per-bank refresh (the presets') reads tRFCSB, not tRFC.
        {"--config " + config("tiny") + " --set chip.hbm.tRFC=300", "chip.hbm.tRFC"},
        // A coupled chip has no AIVs.
        {"--config " + config("ascend910-like") + " --set chip.aiv_per_aic=2", "chip.aiv_per_aic"},
        // The old skeleton host-link key is gone: one host link, chip.host_link.*.
        {"--config " + config("tiny") + " --set chip.dma.link_gbps=1", "chip.dma.link_gbps"},
    };
    for (const auto& c : cases) {
        INFO(c.args);
        const CliResult r = run_cli(run + c.args);
        INFO(r.output);
        CHECK(r.code == 2);
        CHECK_THAT(r.output, Catch::Contains("config key '" + c.key));
    }
    // The same keys where they are read are fine.
    CHECK(run_cli(run + "--config " + config("tiny-simple-mem") + " --set chip.gm.latency=5").code == 0);
    CHECK(run_cli(run + "--config " + config("tiny") + " --set chip.hbm.tRFCSB=150").code == 0);
    // `params` marks what the configuration does not read.
    const CliResult p = run_cli("params --config " + config("tiny"));
    REQUIRE(p.code == 0);
    CHECK(std::regex_search(p.output, std::regex("chip\\.gm\\.latency[^\\n]*not read")));
    CHECK_FALSE(std::regex_search(p.output, std::regex("chip\\.hbm\\.stacks[^\\n]*not read")));
}

TEST_CASE("config: one host link, read by both memory models") {
    // chip.host_link.gbps sets the copy rate whichever DMA model runs the copies.
    for (const char* preset : {"tiny", "tiny-simple-mem"}) {
        INFO(preset);
        const std::string d1 = temp_dir(std::string("link_a_") + preset), d2 = temp_dir(std::string("link_b_") + preset);
        const std::string run = "kernel add --n 65536 --mode timing --trace off --config " + config(preset);
        REQUIRE(run_cli(run + " --out " + d1).code == 0);
        REQUIRE(run_cli(run + " --set chip.host_link.gbps=1 --out " + d2).code == 0);
        const auto a = read_json(d1 + "/summary.json")["tasks"][0], b = read_json(d2 + "/summary.json")["tasks"][0];
        REQUIRE(a["kind"] == "memcpy");
        Config c;
        std::unique_ptr<ChipParams> p(load(c, preset));
        // 65536 fp16 = 128 KiB over the link: at 1 GB/s instead of the preset's rate.
        const double bytes = 65536 * 2;
        const double slower_ns = bytes / 1.0 - bytes / p->host_link.gbps;
        const double got_ns = static_cast<double>((u64(b["end_cycle"]) - u64(b["start_cycle"])) -
                                                  (u64(a["end_cycle"]) - u64(a["start_cycle"]))) /
                              p->clock().freq_ghz();
        CHECK(got_ns == Approx(slower_ns).epsilon(0.01));
    }
}

TEST_CASE("clock: times are cycles / f exactly at 1.8 GHz") {
    Config c;
    std::unique_ptr<ChipParams> p(load(c, "ascend910b-like"));
    REQUIRE(p->clock_mhz == 1800u);
    const std::string dir = temp_dir("exact_clock");
    const CliResult r = run_cli("kernel matmul --m 256 --n 256 --k 512 --dtype fp16 --mode timing --trace off --config " +
                                config("ascend910b-like") + " --out " + dir);
    INFO(r.output);
    REQUIRE(r.code == 0);
    const auto s = read_json(dir + "/summary.json");
    const auto& op = s["ops"][0];
    // A rounded 556 ps period would be 0.08 % off: far beyond this tolerance.
    CHECK(op["time_us"].get<double>() == Approx(static_cast<double>(u64(op["cycles"])) / 1800.0).epsilon(1e-12));
    CHECK(s["total_time_us"].get<double>() == Approx(static_cast<double>(u64(s["total_cycles"])) / 1800.0).epsilon(1e-12));
    // The printed microseconds agree with the printed cycles to the printed precision.
    std::smatch m;
    REQUIRE(std::regex_search(r.output, m, std::regex("kernel matmul: (\\d+) cycles, ([0-9.]+) us")));
    char expect[32];
    std::snprintf(expect, sizeof expect, "%.3f", std::stod(m[1]) / 1800.0);
    CHECK(m[2].str() == expect);
}

TEST_CASE("kernel duration: ops[].cycles is the execution span the kernel task reports") {
    const std::string dir = temp_dir("one_duration");
    REQUIRE(run_cli("kernel add --n 1048576 --block-dim 1 --mode timing --trace off --config " + config("tiny") + " --out " + dir).code ==
            0);
    const auto s = read_json(dir + "/summary.json");
    const auto& k = kernel_task(s);
    const uint64_t span = u64(k["exec_end_cycle"]) - u64(k["exec_start_cycle"]);
    CHECK(u64(s["ops"][0]["cycles"]) == span);
    // The span lies inside the task: the scheduler's dispatch of the task, of its one block and
    // of that block's one core before, the core's completion report and the task's after.
    Config c;
    std::unique_ptr<ChipParams> p(load(c, "tiny"));
    CHECK(u64(k["exec_start_cycle"]) ==
          u64(k["start_cycle"]) + p->ts.dispatch_cycles + p->ts.block_dispatch_cycles + p->ts.core_start_cycles);
    CHECK(u64(k["end_cycle"]) == u64(k["exec_end_cycle"]) + p->ts.core_done_cycles + p->ts.completion_cycles);
    // The task duration (dispatch to completion report) spans the whole task.
    CHECK(u64(s["ops"][0]["task_duration"]) == u64(k["end_cycle"]) - u64(k["start_cycle"]));
}

TEST_CASE("deadlock: the report names the cycle the run got stuck, not the end of a time slice") {
    auto stuck_at = [](const std::string& extra) {
        // The skeleton memory: the core's start-up (code fetch, page-table walk) costs the same at
        // any time there, where the detailed memory's HBM state (refresh) depends on the time.
        const CliResult r =
            run_cli("asm " + source_dir() + "/examples/asm/deadlock.s --config " + config("tiny-simple-mem") + " " + extra);
        INFO(r.output);
        CHECK(r.code == 4);
        std::smatch m;
        REQUIRE(std::regex_search(r.output, m, std::regex("from cycle (\\d+)")));
        return std::stoull(m[1]);
    };
    const uint64_t a = stuck_at("");
    const uint64_t b = stuck_at("--set chip.ts.dispatch_cycles=1200");
    Config c;
    std::unique_ptr<ChipParams> p(load(c, "tiny-simple-mem"));
    // The program sticks a fixed time after its block starts: later by exactly the extra dispatch.
    CHECK(b - a == 1200 - p->ts.dispatch_cycles);
    CHECK(a < 1000000);  // well before the end of the first 1 ms slice
}

TEST_CASE("check: a check that did not run has no verdict") {
    const std::string dir = temp_dir("no_verdict");
    const CliResult r = run_cli("kernel add --n 4096 --mode timing --trace off --config " + config("tiny") + " --out " + dir);
    REQUIRE(r.code == 0);
    const auto s = read_json(dir + "/summary.json");
    CHECK(s["check"]["checked"] == false);
    CHECK(s["check"]["passed"].is_null());
    CHECK_THAT(r.output, Catch::Contains("check: not run"));
    CHECK_THAT(r.output, !Catch::Contains("passed"));
    const std::string f = temp_dir("verdict");
    REQUIRE(run_cli("kernel add --n 4096 --trace off --config " + config("tiny") + " --out " + f).code == 0);
    CHECK(read_json(f + "/summary.json")["check"]["passed"] == true);
}

TEST_CASE("exit codes: a program that overruns a buffer is bad input, and the examples say what they need") {
    for (const char* ex : {"vector_peak", "ub_bank_conflict", "cube_peak", "mte1_rate"}) {
        INFO(ex);
        const std::string file = source_dir() + "/examples/asm/" + ex + ".s";
        const CliResult r = run_cli("asm " + file + " --mode timing --config " + config("tiny"));
        INFO(r.output);
        CHECK(r.code == 2);
        CHECK_THAT(r.output, Catch::Contains("overruns"));
        std::ifstream f(file);
        std::string head, line;
        while (std::getline(f, line) && line.rfind("#", 0) == 0) head += line + "\n";
        CHECK_THAT(head, Catch::Contains("Needs a 910-class preset"));
    }
}

TEST_CASE("help: every command's --help goes to stdout and exits 0") {
    for (const char* cmd : {"", "kernel", "asm", "replay", "membench", "params", "info", "stats"}) {
        INFO(cmd);
        const CliResult r = run_cli_stdout(std::string(cmd) + " --help");
        CHECK(r.code == 0);
        CHECK_THAT(r.output, Catch::Contains("usage"));
    }
    // Without a command it is an error: usage on stderr, exit 2.
    const CliResult none = run_cli_stdout("");
    CHECK(none.code == 2);
    CHECK(none.output.empty());
}

TEST_CASE("options: an argument holding a %token% of Boost's message template is named, not a hang") {
    // Boost substitutes option names and values into its message until no %token% is left; these
    // arguments substituted themselves forever.
    const CliResult a = run_cli("kernel add --n 64 --config " + config("tiny") + " --bogus%canonical_option%");
    CHECK(a.code == 2);
    CHECK_THAT(a.output, Catch::Contains("unrecognised option '--bogus?canonical_option?'"));
    const CliResult b = run_cli("run zoo:mlp --config " + config("tiny") + " --max-cycles %value%");
    CHECK(b.code == 2);
    CHECK_THAT(b.output, Catch::Contains("'?value?'"));
    CHECK_THAT(b.output, Catch::Contains("--max-cycles"));
}

TEST_CASE("stats: integer counters print exactly") {
    const std::string dir = temp_dir("stats_exact");
    REQUIRE(run_cli("kernel add --n 1048576 --mode timing --trace off --config " + config("tiny") + " --out " + dir).code == 0);
    // Find a counter with more digits than the old 6-significant-digit format kept.
    uint64_t big = 0;
    std::string path;
    for (const auto& rec : read_stats_h5(dir + "/stats.h5"))
        if (rec.integer && rec.ints.size() == 1 && rec.ints[0] > 1000000 && rec.ints[0] % 10 != 0) {
            big = rec.ints[0];
            path = rec.path;
            break;
        }
    REQUIRE(big > 0);
    INFO(path << " = " << big);
    const CliResult r = run_cli("stats " + dir + "/stats.h5 " + path);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.output, Catch::Contains(" " + std::to_string(big) + " "));
}

TEST_CASE("kernel --l2: cold by default keeps GB/s at or below the HBM peak, warm reads the uploaded inputs from L2") {
    Config c;
    std::unique_ptr<ChipParams> p(load(c, "ascend910b-like"));
    const double hbm_gbps = chip_peaks(*p).gm_gbps;
    const std::string base = "kernel add --n 1048576 --block-dim 48 --mode timing --trace off --config " + config("ascend910b-like");
    const std::string cold = temp_dir("l2_cold"), warm = temp_dir("l2_warm");
    const CliResult rc = run_cli(base + " --out " + cold);
    INFO(rc.output);
    REQUIRE(rc.code == 0);
    REQUIRE(run_cli(base + " --l2 warm --out " + warm).code == 0);
    const auto sc = read_json(cold + "/summary.json"), sw = read_json(warm + "/summary.json");
    CHECK(sc["l2"] == "cold");
    CHECK(sw["l2"] == "warm");
    auto gbps = [](const nlohmann::json& s) {
        const auto& o = s["ops"][0];
        return static_cast<double>(u64(o["bytes"])) / (o["time_us"].get<double>() * 1e3);
    };
    INFO("cold " << gbps(sc) << " GB/s, warm " << gbps(sw) << " GB/s, HBM peak " << hbm_gbps);
    CHECK(gbps(sc) <= hbm_gbps);
    CHECK(gbps(sw) > gbps(sc));
    // No run beats the on-chip ceiling.
    CHECK(sc["ops"][0]["roofline_fraction_l2"].get<double>() <= 1.0);
    CHECK(sw["ops"][0]["roofline_fraction_l2"].get<double>() <= 1.0);
    // The printed line names what the GB/s divides.
    CHECK_THAT(rc.output, Catch::Contains("GB/s (GM bytes / kernel time)"));
    CHECK(run_cli(base + " --l2 lukewarm").code == 2);
}

TEST_CASE("roofline: asm and kernel share one definition, and a partial last wave shows as a low fraction") {
    // vector_peak with one block more than the 910B-like preset's vector cores: two waves, the
    // second one block. The roofline puts the 49 blocks' work on all 48 cores, so the fraction
    // is about the vector pipe's utilisation (about 0.5), not 1.
    Config c;
    std::unique_ptr<ChipParams> p(load(c, "ascend910b-like"));
    const uint32_t blocks = p->vector_cores() + 1;
    const std::string out = temp_dir("roof_waves");
    const CliResult r = run_cli("asm " + source_dir() + "/examples/asm/vector_peak.s --mode timing --trace off --block-dim " +
                                std::to_string(blocks) + " --config " + config("ascend910b-like") + " --out " + out);
    INFO(r.output);
    REQUIRE(r.code == 0);
    const auto s = read_json(out + "/summary.json");
    const auto& o = s["ops"][0];
    const double f = o["roofline_fraction"].get<double>(), util = o["pipe_util"]["vector"].get<double>();
    // The pipe's busy time holds one pipeline depth per block beyond the roofline's work.
    const double per_block = 4000.0 * 64 * p->core.vec_cycles_per_repeat;  // .rep 4000, repeat=64
    CHECK(f == Approx(util * per_block / (per_block + p->core.vec_startup)).epsilon(1e-6));
    CHECK(f < 0.6);
    CHECK(o["bound"] == "compute");
    CHECK(o.contains("roofline_fraction_l2"));
}

TEST_CASE("info: per-core read and write figures come from one port model") {
    Config c;
    std::unique_ptr<ChipParams> p(load(c, "ascend910b-like"));
    const CliResult r = run_cli("info --config " + config("ascend910b-like"));
    REQUIRE(r.code == 0);
    const double ghz = p->clock_mhz / 1000.0;
    char line[200];
    std::snprintf(line, sizeof line, "%.1f GB/s read (L2 hits), %.1f GB/s of it from HBM (L2 misses), %.1f GB/s write",
                  p->mem.noc.l2_read_bytes_per_cycle * ghz, p->mem.noc.gm_bytes_per_cycle * ghz,
                  p->mem.noc.l2_write_bytes_per_cycle * ghz);
    CHECK_THAT(r.output, Catch::Contains(line));
}
