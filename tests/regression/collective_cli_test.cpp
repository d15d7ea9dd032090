// `sfumato collective` end to end on systems of tiny chips (configs/system-tiny.ini): every
// collective and algorithm gives exact values on the chips (peer copies over the links, staging
// and reductions as vector kernels) for odd sizes, every dtype and reduction, 2 to 16 ranks and
// several loops through the staging buffers; timing mode takes exactly the cycles functional mode
// takes; no link carries more than its bandwidth; bad system configs exit 2 naming the key.
#include <catch2/catch.hpp>

#include "tests/support.h"

using namespace sfumato::test;

namespace {

const std::vector<std::string> kOps = {"all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "all_to_all"};
const std::vector<std::string> kDtypes = {"fp16", "bf16", "fp32"};
const std::vector<std::string> kRedops = {"sum", "max", "min"};

uint32_t dtype_bytes(const std::string& t) { return t == "fp32" ? 4 : 2; }

// --bytes for `count` elements per rank (gather-like ops) or of the vector (the others).
uint64_t bytes_for(const std::string& op, const std::string& dt, uint32_t ranks, uint64_t count) {
    const bool per_rank = op == "all_gather" || op == "reduce_scatter" || op == "all_to_all";
    return count * dtype_bytes(dt) * (per_rank ? ranks : 1);
}

std::string system_args(uint32_t servers, uint32_t per_server) {
    return "--system " + config("system-tiny") + " --set system.servers=" + std::to_string(servers) +
           " --set system.chips_per_server=" + std::to_string(per_server);
}

CliResult run_collective(const std::string& args, const std::string& out) {
    return run_cli("collective " + args + " --trace off --out " + out);
}

void require_exact(const std::string& args) {
    INFO(args);
    const std::string out = temp_dir("coll");
    const CliResult r = run_collective(args, out);
    INFO(r.output);
    REQUIRE(r.code == 0);
    const auto s = read_json(out + "/summary.json");
    CHECK(s["check"]["checked"] == true);
    CHECK(s["check"]["passed"] == true);
    CHECK(s["check"]["mismatches"] == 0);
    CHECK(s["check"]["compared"].get<uint64_t>() > 0);
    CHECK(s["algbw_gbps"].get<double>() > 0);
}

}  // namespace

TEST_CASE("collective: every op and algorithm is exact on the chips (odd sizes, dtypes, reductions)", "[collective]") {
    // 2 servers x 2 chips: flat algorithms on 3 ranks (odd, not a power of two), and every
    // algorithm including hierarchical on all 4 (groups of 2 joined through the NICs).
    const std::vector<std::string> flat = {"ring", "halving_doubling", "mesh", "double_ring"};
    int i = 0;
    for (const auto& op : kOps) {
        for (uint32_t ranks : {3u, 4u}) {
            std::vector<std::string> algos = flat;
            if (ranks == 4) algos.push_back("hierarchical");
            for (const auto& algo : algos) {
                const std::string& dt = kDtypes[i % 3];
                const std::string& red = kRedops[(i / 3) % 3];
                ++i;
                const uint64_t count = 37 + 64 * (i % 4);  // odd, never a multiple of the ranks
                require_exact(op + " --bytes " + std::to_string(bytes_for(op, dt, ranks, count)) + " --dtype " + dt +
                              " --redop " + red + " --algo " + algo + " --ranks " + std::to_string(ranks) +
                              " --root " + std::to_string(ranks - 1) + " " + system_args(2, 2));
            }
        }
    }
}

TEST_CASE("collective: 2 and 16 ranks, several loops through the staging buffers", "[collective]") {
    // The tiny system's comm.buffer_bytes is 64 KiB: 40001 fp16 elements (80 KB) take two loops.
    for (const auto& algo : {"ring", "halving_doubling", "mesh", "double_ring", "hierarchical"}) {
        require_exact(std::string("all_reduce --bytes 80002 --dtype fp16 --algo ") + algo + " " + system_args(4, 4));
        require_exact(std::string("reduce_scatter --bytes ") + std::to_string(16 * 1001 * 4) + " --dtype fp32 --algo " +
                      algo + " " + system_args(4, 4));
    }
    for (const auto& op : kOps) {
        require_exact(op + " --bytes " + std::to_string(bytes_for(op, "bf16", 2, 40001)) + " --dtype bf16 --redop max " +
                      system_args(1, 2));
    }
    require_exact("all_gather --bytes " + std::to_string(bytes_for("all_gather", "fp16", 16, 3001)) +
                  " --dtype fp16 --algo auto " + system_args(4, 4));
}

TEST_CASE("collective: timing mode takes exactly the cycles of functional mode", "[collective]") {
    for (const auto& algo : {"mesh", "ring"}) {
        const std::string args = std::string("all_reduce --bytes 6002 --dtype fp16 --algo ") + algo + " " + system_args(2, 2);
        const std::string f = temp_dir("coll_f"), t = temp_dir("coll_t");
        const CliResult a = run_collective(args, f);
        const CliResult b = run_collective(args + " --mode timing", t);
        INFO(a.output << b.output);
        REQUIRE(a.code == 0);
        REQUIRE(b.code == 0);
        const auto sf = read_json(f + "/summary.json"), st = read_json(t + "/summary.json");
        CHECK(sf["total_cycles"].get<uint64_t>() > 0);
        CHECK(sf["total_cycles"] == st["total_cycles"]);
        CHECK(sf["time_us"] == st["time_us"]);
        CHECK(st["check"]["checked"] == false);
    }
}

TEST_CASE("collective: no link carries more than its bandwidth, and shared links are shared", "[collective][links]") {
    // A 4-chip ring with a mesh all_to_all: the routes to the opposite chip pass through a
    // neighbour, so every link carries several transfers at once. Per link, the bytes on the wire
    // over the link's bandwidth is its busy time, which cannot exceed the collective's time.
    const std::string out = temp_dir("coll_links");
    const CliResult r = run_collective("all_to_all --bytes " + std::to_string(4 * 4 * 20000) +
                                           " --dtype fp32 --algo mesh --mode timing " + system_args(1, 4) +
                                           " --set system.topology=ring --set system.nic.per_chip=0 --set comm.buffer_bytes=1MiB",
                                       out);
    INFO(r.output);
    REQUIRE(r.code == 0);
    const auto s = read_json(out + "/summary.json");
    const double window_us = s["time_us"].get<double>();
    REQUIRE(window_us > 0);
    int carried = 0;
    double busiest = 0;
    for (const auto& l : s["links"]) {
        INFO(l.dump());
        const double gbps = l["gbps"].get<double>();  // bytes per ns on the wire
        const double wire = static_cast<double>(l["wire_bytes"].get<uint64_t>());
        const double busy_us = l["busy_us"].get<double>();
        CHECK(l["bytes"].get<uint64_t>() <= l["wire_bytes"].get<uint64_t>());
        if (wire == 0) continue;
        ++carried;
        CHECK(busy_us == Approx(wire / gbps / 1e3).epsilon(1e-3));
        CHECK(wire / gbps / 1e3 <= window_us * (1 + 1e-9));  // never faster than the wire
        busiest = std::max(busiest, busy_us / window_us);
    }
    CHECK(carried == 8);  // both directions of the ring's 4 links
    // One loop of 80 KB blocks: the busiest link (it carries a direct block and blocks passing
    // through) is busy most of the time, never more than all of it.
    CHECK(busiest > 0.5);
}

TEST_CASE("collective: bad system configs exit 2 naming the key", "[collective]") {
    const std::string base = "collective all_reduce --bytes 4096 --system " + config("system-tiny");
    const std::vector<std::pair<std::string, std::string>> bad = {
        // a chip without links
        {"--set system.topology=custom --set system.links=0-1,1-2 --set system.nic.per_chip=0", "system.links"},
        // zero bandwidth
        {"--set system.link.gbps=0", "system.link.gbps"},
        {"--set system.nic.gbps=0", "system.nic.gbps"},
        // a topology that does not connect all chips
        {"--set system.topology=custom --set system.links=0-1,2-3 --set system.nic.per_chip=0", "system.links"},
        {"--set system.servers=2 --set system.nic.per_chip=0", "system.nic.per_chip"},
        {"--set system.topology=groups --set system.group_size=3", "system.group_size"},
        {"--set system.topology=custom --set system.links=0-9", "system.links"},
        {"--set system.topology=star", "system.topology"},
        {"--set system.chip=no-such-chip.ini", "system.chip"},
    };
    for (const auto& [args, key] : bad) {
        INFO(args);
        const CliResult r = run_cli(base + " " + args);
        INFO(r.output);
        CHECK(r.code == 2);
        CHECK(r.output.find("'" + key + "'") != std::string::npos);
    }
    const CliResult no_file = run_cli("collective all_reduce --bytes 4096 --system /no/such/system.ini");
    CHECK(no_file.code == 2);
    CHECK(no_file.output.find("/no/such/system.ini") != std::string::npos);
    const CliResult bad_bytes = run_cli("collective all_gather --bytes 4097 --system " + config("system-tiny"));
    CHECK(bad_bytes.code == 2);
    CHECK(bad_bytes.output.find("--bytes") != std::string::npos);
    const CliResult bad_algo = run_cli("collective all_reduce --bytes 4096 --algo tree --system " + config("system-tiny"));
    CHECK(bad_algo.code == 2);
    CHECK(bad_algo.output.find("--algo") != std::string::npos);
}

TEST_CASE("collective: params and info list the system and comm keys", "[collective]") {
    // Without --system the keys are listed with their defaults; with it, with the file's values.
    CliResult r = run_cli("params --config " + config("tiny"));
    REQUIRE(r.code == 0);
    for (const char* k : {"system.servers", "system.link.gbps", "system.nic.per_chip", "system.peer_dma.engines", "comm.buffer_bytes"})
        CHECK(r.output.find(k) != std::string::npos);
    r = run_cli("params --system " + config("system-8x910b-like"));
    REQUIRE(r.code == 0);
    CHECK(r.output.find("system.chips_per_server") != std::string::npos);
    r = run_cli("info --system " + config("system-tiny") + " --set system.servers=2");
    INFO(r.output);
    REQUIRE(r.code == 0);
    CHECK(r.output.find("8 chips (2 servers x 4)") != std::string::npos);
    CHECK(r.output.find("system.servers = 2") != std::string::npos);
    CHECK(r.output.find("chip-to-chip link") != std::string::npos);
    // Bad keys and values exit 2 naming the key.
    r = run_cli("params --system " + config("system-tiny") + " --set system.link.gbps=0");
    CHECK(r.code == 2);
    CHECK(r.output.find("system.link.gbps") != std::string::npos);
    r = run_cli("info --system " + config("system-tiny") + " --set system.nonsense=1");
    CHECK(r.code == 2);
    CHECK(r.output.find("system.nonsense") != std::string::npos);
}

TEST_CASE("collective: every step opens with an ack each way per pair before its data, as HCCL's executors do",
          "[collective]") {
    // The vendor's mesh and ring executors exchange an ack with each peer of a step before the
    // step's transfers and a data notify after them (two notifies per sending pair per step).
    // Mesh all-reduce is one reduce-scatter step and one all-gather step, everyone to everyone;
    // ring all-reduce is 2 (r - 1) steps of r neighbour pairs: both 2 r (r - 1) pairs in all.
    for (const std::string algo : {"mesh", "ring"}) {
        for (uint32_t ranks : {2u, 3u, 4u}) {
            const std::string out = temp_dir("coll_ack");
            const std::string args = "all_reduce --bytes 4096 --dtype fp16 --ranks " + std::to_string(ranks) +
                                     " --algo " + algo + " --mode timing " + system_args(1, 4);
            INFO(args);
            REQUIRE(run_collective(args, out).code == 0);
            const CliResult st = run_cli("stats " + out + "/stats.h5 links/notifies");
            REQUIRE(st.code == 0);
            const auto pos = st.output.find("links/notifies");
            REQUIRE(pos != std::string::npos);
            const uint64_t notifies = std::stoull(st.output.substr(pos + std::string("links/notifies").size()));
            const uint64_t pairs = 2ull * ranks * (ranks - 1);
            CHECK(notifies == 2 * pairs);
        }
    }
}
