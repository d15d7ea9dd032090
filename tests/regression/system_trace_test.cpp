// trace.json of a run on a system of chips: each chip's HBM/L2 counters and host API calls go in a
// process of their own ("chipN memory", "chipN host"), so the chips' tracks stay apart in Perfetto
// (one shared "memory" process let the chips overwrite each other's counters); a lone chip keeps
// its "memory" and "host" processes.
#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "tests/support.h"

using namespace sfumato::test;

namespace {

struct Process {
    std::set<std::string> counters;           // names of its counter events
    std::map<uint64_t, std::string> threads;  // tid -> track name
    std::map<uint64_t, size_t> slices;        // tid -> slice events
};

// Processes by name (each name must be one pid).
std::map<std::string, Process> read_processes(const std::string& path) {
    const auto t = read_json(path);
    std::map<uint64_t, std::string> names;
    for (const auto& e : t["traceEvents"])
        if (e.value("ph", "") == "M" && e.value("name", "") == "process_name") {
            const uint64_t pid = e["pid"].get<uint64_t>();
            const std::string name = e["args"]["name"].get<std::string>();
            for (const auto& [p, n] : names) CHECK_FALSE(n == name);  // a name names one process
            names[pid] = name;
        }
    std::map<std::string, Process> out;
    for (const auto& e : t["traceEvents"]) {
        const std::string ph = e.value("ph", "");
        if (!e.contains("pid") || !names.count(e["pid"].get<uint64_t>())) continue;
        Process& p = out[names[e["pid"].get<uint64_t>()]];
        if (ph == "C") p.counters.insert(e.value("name", ""));
        if (ph == "M" && e.value("name", "") == "thread_name") p.threads[e["tid"].get<uint64_t>()] = e["args"]["name"].get<std::string>();
        if (ph == "X") ++p.slices[e["tid"].get<uint64_t>()];
    }
    return out;
}

size_t api_slices(const Process& p) {
    size_t n = 0;
    for (const auto& [tid, name] : p.threads)
        if (name == "context 0 API" && p.slices.count(tid)) n += p.slices.at(tid);
    return n;
}

}  // namespace

TEST_CASE("system trace: each chip's memory counters and host calls in processes of their own", "[trace][system]") {
    const std::string dir = temp_dir("system_trace");
    const CliResult r = run_cli("collective all_reduce --bytes 65536 --system " + config("system-tiny") +
                                " --set system.chips_per_server=2 --trace mem --out " + dir);
    INFO(r.output);
    REQUIRE(r.code == 0);
    const auto procs = read_processes(dir + "/trace.json");
    std::string seen;
    for (const auto& [name, p] : procs) seen += " '" + name + "'";
    INFO("processes:" << seen);
    CHECK_FALSE(procs.count("memory"));
    CHECK_FALSE(procs.count("host"));
    for (const std::string chip : {"chip0", "chip1"}) {
        INFO(chip);
        REQUIRE(procs.count(chip + " memory"));
        const Process& m = procs.at(chip + " memory");
        CHECK(m.counters.count("hbm ch0 GB/s"));
        CHECK(m.counters.count("l2 hit rate"));
        REQUIRE(procs.count(chip + " host"));
        // Every rank's host program called the runtime (allocations, copies, the collective).
        CHECK(api_slices(procs.at(chip + " host")) > 0);
    }
}

TEST_CASE("system trace: a lone chip keeps its memory and host processes", "[trace]") {
    const std::string dir = temp_dir("lone_trace");
    const CliResult r = run_cli("kernel add --n 4096 --config " + config("tiny") + " --trace mem --out " + dir);
    INFO(r.output);
    REQUIRE(r.code == 0);
    const auto procs = read_processes(dir + "/trace.json");
    REQUIRE(procs.count("memory"));
    CHECK(procs.at("memory").counters.count("hbm ch0 GB/s"));
    REQUIRE(procs.count("host"));
    CHECK(api_slices(procs.at("host")) > 0);
}
