// `sfumato membench`: the memory model's self-test. Drives the memory system (NoC, L2, HBM)
// from K cores' MTE2/MTE3 ports with a synthetic pattern and reports achieved bandwidth against
// the HBM peak, the row-buffer and L2 hit rates and the read latency (mean, 99th percentile).
// Writes summary.json, stats.txt and (with --trace mem) trace.json with per-channel counters.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <systemc>

#include "models/mem/memory_system.h"
#include "models/mem/traffic_gen.h"
#include "sim/cli/command.h"
#include "sim/config.h"
#include "sim/error.h"
#include "sim/sc_time_util.h"
#include "sim/stats.h"
#include "sim/trace.h"

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

// Counter tracks only, as Chrome Trace Event JSON (the run's timeline writer can replace this).
class CounterJsonSink : public ITraceSink {
public:
    TrackId track(const std::string& p, const std::string& t, int) override { return counter_track(p, t); }
    void slice(TrackId, const char*, Tick, Tick, const TraceArg*, int) override {}
    void slice_str(TrackId, const std::string&, Tick, Tick, const TraceArg*, int) override {}
    TrackId counter_track(const std::string& process, const std::string& name) override {
        m_names.push_back({process, name});
        return static_cast<TrackId>(m_names.size() - 1);
    }
    void counter(TrackId t, Tick at, double v) override { m_events.push_back({t, at.v, v}); }
    void flow(TrackId, Tick, TrackId, Tick, const char*) override {}
    void write(const std::string& path) const {
        nlohmann::json ev = nlohmann::json::array();
        ev.push_back({{"ph", "M"}, {"pid", 0}, {"name", "process_name"}, {"args", {{"name", "memory"}}}});
        for (const auto& e : m_events) {
            ev.push_back({{"ph", "C"}, {"pid", 0}, {"name", m_names[e.track].second}, {"ts", static_cast<double>(e.ps) / 1e6},
                          {"args", {{"value", e.v}}}});
        }
        std::ofstream(path) << nlohmann::json{{"traceEvents", ev}, {"displayTimeUnit", "ns"}}.dump() << "\n";
    }

private:
    struct E {
        TrackId track;
        uint64_t ps;
        double v;
    };
    std::vector<std::pair<std::string, std::string>> m_names;
    std::vector<E> m_events;
};

class TextStats : public StatVisitor {
public:
    explicit TextStats(std::ostream& o) : m_o(o) {}
    void visit(const std::string& g, const Counter& s) override { m_o << g << "/" << s.name() << " " << s.value() << "\n"; }
    void visit(const std::string& g, const Average& s) override { m_o << g << "/" << s.name() << " " << s.mean() << "\n"; }
    void visit(const std::string& g, const Histogram& s) override {
        m_o << g << "/" << s.name() << " mean " << s.mean() << " p99 " << s.quantile(0.99) << " n " << s.samples() << "\n";
    }
    void visit(const std::string& g, const Formula& s) override { m_o << g << "/" << s.name() << " " << s.value() << "\n"; }

private:
    std::ostream& m_o;
};

void usage() {
    std::fprintf(stderr,
                 "usage: sfumato membench --config F [--set k=v]... --pattern seq|random|stride[:BYTES]\n"
                 "                        --op read|write|copy --bytes N[K|M|G] [--cores K] [--req-bytes B]\n"
                 "                        [--mode functional|timing] [--trace off|mem] --out DIR\n");
}

int membench(const std::vector<std::string>& args) {
    Config cfg;
    std::string pattern = "seq", op = "read", out, trace = "off";
    uint64_t bytes = 64ull << 20, req_bytes = 0;
    int64_t cores = -1;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        auto val = [&]() -> const std::string& {
            if (i + 1 >= args.size()) throw InputError("membench: " + a + " needs a value");
            return args[++i];
        };
        if (a == "--help" || a == "-h") { usage(); return kExitOk; }
        else if (a == "--config") cfg.load_ini(val());
        else if (a == "--set") cfg.apply_override(val());
        else if (a == "--pattern") pattern = val();
        else if (a == "--op") op = val();
        else if (a == "--bytes") bytes = parse_size(val());
        else if (a == "--cores") cores = static_cast<int64_t>(parse_size(val()));
        else if (a == "--req-bytes") req_bytes = parse_size(val());
        else if (a == "--out") out = val();
        else if (a == "--trace") trace = val();
        else if (a == "--mode") {
            const std::string& m = val();  // the memory system carries no data: cycles are identical
            if (m != "functional" && m != "timing") throw InputError("membench: --mode functional|timing");
        } else throw InputError("membench: unknown option '" + a + "'");
    }
    if (out.empty()) throw InputError("membench: --out DIR is required");
    TraceLevel level;
    if (!parse_trace_level(trace, level)) throw InputError("membench: bad --trace '" + trace + "'");

    init_time_resolution();
    const ParamScope chip(cfg, "chip");
    const uint32_t clock_mhz = Param<uint32_t>(chip, "clock_mhz", 1000, "MHz", "core clock", {1, 100000});
    const uint32_t ncores = Param<uint32_t>(chip, "cores", 2, "", "AI cores (memory ports)", {1, 4096});
    StatGroup root(nullptr, "");
    TraceHub hub;
    CounterJsonSink sink;
    if (level != TraceLevel::Off) hub.attach(&sink, level);
    MemorySystem mem("mem", chip, &root, &hub, ClockDomain(period_ps_from_mhz(clock_mhz)), ncores);

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
    spec.cores = cores < 0 ? ncores : static_cast<uint32_t>(cores);
    if (spec.cores == 0 || spec.cores > ncores)
        throw InputError("membench: --cores must be in [1, " + std::to_string(ncores) + "]");
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
    cfg.check_unused();

    TrafficGen gen("gen", spec, mem);
    const auto w0 = std::chrono::steady_clock::now();
    sc_core::sc_start();
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
    if (!gen.finished()) throw ModelError("membench", "traffic did not complete (deadlock in the memory system)", kExitDeadlock);
    mem.flush_trace();

    const double sim_ns = static_cast<double>(gen.end_tick().v) / 1000.0;
    const double achieved = sim_ns > 0 ? static_cast<double>(gen.bytes_moved()) / sim_ns : 0.0;
    nlohmann::json j;
    j["command"] = "membench";
    j["config"] = cfg.sources();
    j["config_hash"] = cfg.hash();
    j["pattern"] = pattern;
    j["op"] = op;
    j["cores"] = spec.cores;
    j["request_bytes"] = spec.request_bytes;
    j["bytes"] = gen.bytes_moved();
    j["sim_time_ns"] = sim_ns;
    j["achieved_gbps"] = achieved;
    j["peak_gbps"] = mem.peak_gbps();
    j["row_hit_rate"] = mem.row_hit_rate();
    j["l2_hit_rate"] = mem.l2_hit_rate();
    j["avg_latency_ns"] = mem.read_latency().mean();
    j["p99_latency_ns"] = mem.read_latency().quantile(0.99);
    j["wall_seconds"] = wall;
    j["sim_gb_per_wall_second"] = wall > 0 ? static_cast<double>(gen.bytes_moved()) / 1e9 / wall : 0.0;
    std::filesystem::create_directories(out);
    std::ofstream(out + "/summary.json") << j.dump(2) << "\n";
    {
        std::ofstream st(out + "/stats.txt");
        TextStats v(st);
        root.accept(v);
    }
    if (level != TraceLevel::Off) sink.write(out + "/trace.json");
    std::printf("membench %s %s on %s: %llu B by %u cores in %.1f us simulated\n", pattern.c_str(), op.c_str(),
                cfg.sources().empty() ? "defaults" : cfg.sources().back().c_str(),
                static_cast<unsigned long long>(gen.bytes_moved()), spec.cores, sim_ns / 1000.0);
    std::printf("  achieved %.1f GB/s of %.1f GB/s peak (%.1f %%)\n", achieved, mem.peak_gbps(), 100.0 * achieved / mem.peak_gbps());
    std::printf("  row hit rate %.3f, L2 hit rate %.3f\n", mem.row_hit_rate(), mem.l2_hit_rate());
    std::printf("  read latency avg %.1f ns, p99 %.1f ns\n", mem.read_latency().mean(), mem.read_latency().quantile(0.99));
    std::printf("  wall %.2f s (%.2f GB simulated per wall second)\n", wall, j["sim_gb_per_wall_second"].get<double>());
    return kExitOk;
}

}  // namespace

SFUMATO_COMMAND("membench", "memory-system self-test: bandwidth, hit rates and latency of a traffic pattern", membench);

}  // namespace sfumato::cli
