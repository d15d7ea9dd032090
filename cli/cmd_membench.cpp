// `sfumato membench`: the memory model's self-test. Drives the memory system (NoC, L2, HBM)
// from K cores' MTE2/MTE3 ports with a synthetic pattern and reports achieved bandwidth against
// the HBM peak, the row-buffer and L2 hit rates and the read latency (mean, 99th percentile).
// Writes summary.json, stats.h5 and trace.json (HBM channel bandwidth and L2 hit-rate counters
// with --trace mem, the default here).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <systemc>

#include "models/chip/chip_params.h"
#include "models/mem/memory_system.h"
#include "models/mem/traffic_gen.h"
#include "runtime/rt/runtime.h"
#include "cli/command.h"
#include "cli/interrupt.h"
#include "cli/session.h"
#include "sim/config.h"
#include "sim/error.h"
#include "sim/run_horizon.h"
#include "sim/sc_time_util.h"
#include "sim/stats.h"
#include "sim/trace.h"
#include "traces/atomic_file.h"
#include "traces/chrome_trace.h"
#include "traces/hdf5_stats.h"

namespace sfumato::cli {

namespace {

using namespace sfumato::mem;

uint64_t parse_size(const std::string& s) {
    if (s.empty()) throw InputError("membench: empty size");
    size_t pos = 0;
    uint64_t v = 0;
    try {
        v = std::stoull(s, &pos);
    } catch (const std::exception&) {
        throw InputError("membench: bad size '" + s + "'");
    }
    const std::string suf = s.substr(pos);
    if (suf == "" || suf == "B") return v;
    if (suf == "K" || suf == "KiB") return v << 10;
    if (suf == "M" || suf == "MiB") return v << 20;
    if (suf == "G" || suf == "GiB") return v << 30;
    throw InputError("membench: bad size suffix in '" + s + "' (K, M, G)");
}

int membench(const std::vector<std::string>& args) {
    CommonOptions common;
    common.trace = "mem";
    std::string pattern = "seq", op = "read", bytes_s = "64M", req_s;
    uint32_t cores = 0;
    po::options_description d("sfumato membench");
    add_run_options(d, common);
    d.add_options()("pattern", po::value<std::string>(&pattern)->default_value("seq"), "seq | random | stride[:BYTES]")(
        "op", po::value<std::string>(&op)->default_value("read"), "read | write | copy")(
        "bytes", po::value<std::string>(&bytes_s)->default_value("64M"), "bytes to move per pass (suffix K, M, G)")(
        "cores", po::value<uint32_t>(&cores)->default_value(0), "AI cores driving traffic (0: all of chip.cube_cores)")(
        "req-bytes", po::value<std::string>(&req_s), "bytes per request (default: the L2 line; 64 for random)");
    po::variables_map vm;
    if (!parse_command(args, "sfumato membench --config F --pattern P --op O --bytes N [--cores K] --out DIR", d, vm))
        return kExitOk;
    if (vm["trace"].defaulted()) common.trace = "mem";
    if (common.mode != "functional" && common.mode != "timing") throw InputError("--mode must be functional or timing");
    TraceLevel level;
    if (!parse_trace_level(common.trace, level)) throw InputError("--trace must be off|op|task|instr|mem");
    const uint64_t bytes = parse_size(bytes_s);
    const uint64_t req_bytes = req_s.empty() ? 0 : parse_size(req_s);

    Config cfg;
    load_config(cfg, common);
    ChipParams chip(cfg);
    rt::RuntimeParams host(ParamScope(cfg, "host"));  // the preset's host keys are valid here too
    cfg.check_unused();
    stop_if_validating(cfg);
    init_time_resolution();
    StatGroup root(nullptr, "");
    TraceHub hub;
    ChromeTraceWriter writer;
    if (level != TraceLevel::Off) hub.attach(&writer, level);
    const uint32_t ports = chip.mem_ports();
    MemorySystem mem("mem", chip.mem, &root, &hub, chip.clock(), ports);
    const uint32_t ncores = chip.cube_cores;

    TrafficSpec spec;
    std::string pat = pattern;
    if (pat.rfind("stride", 0) == 0) {
        spec.pattern = Pattern::Stride;
        spec.stride = pat.size() > 7 && pat[6] == ':' ? parse_size(pat.substr(7)) : 2 * mem.l2().g.line_bytes;
        pat = "stride";
    } else if (pat == "seq") spec.pattern = Pattern::Seq;
    else if (pat == "random") spec.pattern = Pattern::Random;
    else throw InputError("membench: --pattern seq|random|stride[:BYTES]");
    if (op == "read") spec.op = MemOp::Read;
    else if (op == "write") spec.op = MemOp::Write;
    else if (op == "copy") spec.op = MemOp::Copy;
    else throw InputError("membench: --op read|write|copy");
    spec.cores = cores == 0 ? ncores : cores;
    if (spec.cores > ports) throw InputError("membench: --cores must be at most " + std::to_string(ports) + " (memory ports)");
    spec.request_bytes = static_cast<uint32_t>(req_bytes ? req_bytes : spec.pattern == Pattern::Random ? 64 : mem.l2().g.line_bytes);
    spec.bytes = bytes;
    spec.max_outstanding = mem.noc().max_outstanding;
    const uint64_t cap = mem.hbm().capacity_bytes;
    if (spec.op == MemOp::Copy) {
        if (2 * bytes > cap) throw InputError("membench: copy needs 2 x --bytes of device memory");
        spec.dst_base = cap / 2;
        spec.footprint = cap / 2;
    } else {
        spec.footprint = cap;
    }
    const uint64_t span = spec.pattern == Pattern::Stride ? bytes / spec.request_bytes * spec.stride : bytes;
    if (spec.pattern != Pattern::Random && span > (spec.op == MemOp::Copy ? cap / 2 : cap))
        throw InputError("membench: the pattern spans " + std::to_string(span) + " B, beyond the device memory");
    TrafficGen gen("gen", spec, mem);
    mem.set_runahead_client(&gen);  // it times everything from done_tick: same results, fewer wake-ups
    // Taken when the last request completes (later events only drain the write queues).
    uint64_t unwritten_at_end = 0;
    gen.on_pass = [&](uint32_t pass) {
        if (pass + 1 == spec.passes) unwritten_at_end = mem.unwritten_bytes();
    };
    const auto w0 = std::chrono::steady_clock::now();
    // Run to the end in steps (stopping at the last event, as one sc_start() would), so that a
    // SIGINT/SIGTERM is seen between them; the memory system's activations ahead of SystemC time
    // stop at each step's end too (sim/run_horizon.h).
    // The steps end at fixed times: SystemC time stays at the last event of a step, which can be
    // more than a step before the next (the memory system ran the time between ahead).
    const uint64_t step = sc_core::sc_time(62500, sc_core::SC_NS).value();
    uint64_t step_end = sc_core::sc_time_stamp().value();
    do {
        step_end += step;
        run_horizon() = step_end - 1;
        sc_core::sc_start(to_sc_time(Tick(step_end - sc_core::sc_time_stamp().value())), sc_core::SC_EXIT_ON_STARVATION);
        throw_if_interrupted("at " + std::to_string(sc_core::sc_time_stamp().to_seconds() * 1e6) + " us simulated");
    } while (sc_core::sc_pending_activity());
    run_horizon() = ~uint64_t(0);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
    if (!gen.finished()) throw ModelError("membench", "traffic did not complete (deadlock in the memory system)", kExitDeadlock);
    mem.flush_trace();

    const double sim_ns = static_cast<double>(gen.end_tick().v) / 1000.0;
    // "achieved" counts bytes that reached their destination by the last completion: reads
    // delivered to the cores, and written bytes that left the L2 for the HBM (taken by the
    // controller's scheduler, whose data bus is paced). Written bytes still dirty in L2 or
    // waiting in / for a write queue at that moment are not counted (no flush is simulated): a
    // write run that fits in L2 achieves ~0 of HBM bandwidth, honestly.
    // "accepted" is the requesters' rate (every completed request, L2-absorbed writes included).
    const uint64_t unwritten = std::min(unwritten_at_end, gen.bytes_written());
    const uint64_t retired = gen.bytes_moved() - unwritten;
    const double achieved = sim_ns > 0 ? static_cast<double>(retired) / sim_ns : 0.0;
    const double accepted = sim_ns > 0 ? static_cast<double>(gen.bytes_moved()) / sim_ns : 0.0;
    nlohmann::json j;
    j["command"] = "membench";
    j["version"] = version_string();
    j["mode"] = common.mode;
    j["config"] = cfg.sources();
    j["config_hash"] = cfg.hash();
    j["mem_service"] = mem_service_name(chip);
    j["mem_threads"] = mem.threads_at_start();  // host threads (chip.mem.threads; the same results)
    j["pattern"] = pattern;
    j["op"] = op;
    j["cores"] = spec.cores;
    j["request_bytes"] = spec.request_bytes;
    j["bytes"] = gen.bytes_moved();
    j["sim_time_ns"] = sim_ns;
    j["achieved_gbps"] = achieved;
    j["accepted_gbps"] = accepted;
    j["bytes_unwritten"] = unwritten;
    j["writeback_stalls"] = mem.writeback_stalls();
    j["peak_gbps"] = mem.peak_gbps();
    j["row_hit_rate"] = mem.row_hit_rate();
    j["l2_hit_rate"] = mem.l2_hit_rate();
    j["avg_latency_ns"] = mem.read_latency().mean();
    j["p99_latency_ns"] = mem.read_latency().quantile(0.99);
    j["wall_seconds"] = wall;
    j["sim_gb_per_wall_second"] = wall > 0 ? static_cast<double>(gen.bytes_moved()) / 1e9 / wall : 0.0;
    throw_if_interrupted("before writing outputs");
    if (!common.out.empty()) {
        StagedOutputs out(common.out);  // all files or none
        if (level != TraceLevel::Off) writer.write(out.path("trace.json"));
        std::string cmdline = "sfumato membench";
        for (const auto& a : args) cmdline += " " + a;
        write_stats_h5(out.path("stats.h5"), root, cfg.effective(), {version_string(), cmdline, cfg.hash(), common.mode, git_revision(), {}});
        write_text_atomically(out.path("summary.json"), j.dump(2) + "\n");
        throw_if_interrupted("while writing outputs");
        out.commit();
    }
    std::printf("membench %s %s on %s: %llu B by %u cores in %.1f us simulated\n", pattern.c_str(), op.c_str(),
                cfg.sources().empty() ? "defaults" : cfg.sources().back().c_str(),
                static_cast<unsigned long long>(gen.bytes_moved()), spec.cores, sim_ns / 1000.0);
    std::printf("  achieved %.1f GB/s of %.1f GB/s peak (%.1f %%)\n", achieved, mem.peak_gbps(), 100.0 * achieved / mem.peak_gbps());
    if (gen.bytes_written())
        std::printf("  accepted %.1f GB/s by the requesters; %llu B still dirty in L2 or queued (not counted above)\n",
                    accepted, static_cast<unsigned long long>(unwritten));
    std::printf("  row hit rate %.3f, L2 hit rate %.3f\n", mem.row_hit_rate(), mem.l2_hit_rate());
    std::printf("  read latency avg %.1f ns, p99 %.1f ns\n", mem.read_latency().mean(), mem.read_latency().quantile(0.99));
    std::printf("  wall %.2f s (%.2f GB simulated per wall second)\n", wall, j["sim_gb_per_wall_second"].get<double>());
    return kExitOk;
}

}  // namespace

SFUMATO_COMMAND("membench", "memory-system self-test: bandwidth, hit rates and latency of a traffic pattern", membench);

}  // namespace sfumato::cli
