// Memory-system behaviour under traffic: bandwidth against the calibration point and the peak,
// random versus sequential, L2 reuse, MSHR-limited misses, and the trace counters.
// One SystemC simulation per TEST_CASE (CTest runs each in its own process).
#include <catch2/catch.hpp>
#include <systemc>

#include "models/chip/chip_params.h"
#include "models/mem/memory_system.h"
#include "runtime/rt/runtime.h"
#include "models/mem/traffic_gen.h"
#include "sim/config.h"
#include "sim/sc_time_util.h"

using namespace sfumato;
using namespace sfumato::mem;

namespace {

struct CountingSink : ITraceSink {
    std::vector<std::string> names;
    std::vector<uint64_t> samples;
    double max_value = 0;
    TrackId track(const std::string&, const std::string&, int) override { return 0; }
    void slice(TrackId, const char*, Tick, Tick, const TraceArg*, int) override {}
    void slice_str(TrackId, const std::string&, Tick, Tick, const TraceArg*, int) override {}
    TrackId counter_track(const std::string&, const std::string& n) override {
        names.push_back(n);
        samples.push_back(0);
        return static_cast<TrackId>(names.size() - 1);
    }
    void counter(TrackId t, Tick, double v) override {
        ++samples[t];
        if (names[t].find("GB/s") != std::string::npos) max_value = std::max(max_value, v);
    }
    void flow(TrackId, Tick, TrackId, Tick, const char*) override {}
};

struct Run {
    Config cfg;
    std::unique_ptr<ChipParams> chip;
    StatGroup root{nullptr, ""};
    TraceHub hub;
    std::unique_ptr<MemorySystem> mem;
    std::unique_ptr<TrafficGen> gen;
    uint32_t cores = 0;

    explicit Run(const std::string& preset, ITraceSink* sink = nullptr) {
        init_time_resolution();
        cfg.load_ini(std::string(SFUMATO_SOURCE_DIR) + "/configs/" + preset + ".ini");
        chip = std::make_unique<ChipParams>(cfg);
        rt::RuntimeParams host(ParamScope(cfg, "host"));
        cfg.check_unused();
        cores = chip->cube_cores;
        if (sink) hub.attach(sink, TraceLevel::Mem);
        mem = std::make_unique<MemorySystem>("mem", chip->mem, &root, &hub, chip->clock(), chip->mem_ports());
    }
    TrafficSpec spec(Pattern p, MemOp op, uint64_t bytes, uint32_t k) const {
        TrafficSpec s;
        s.pattern = p;
        s.op = op;
        s.bytes = bytes;
        s.cores = k;
        s.request_bytes = p == Pattern::Random ? 64 : mem->l2().g.line_bytes;
        s.max_outstanding = mem->noc().max_outstanding;
        s.footprint = mem->hbm().capacity_bytes;
        return s;
    }
    double run(const TrafficSpec& s) {
        gen = std::make_unique<TrafficGen>("gen", s, *mem);
        sc_core::sc_start();
        REQUIRE(gen->finished());
        mem->flush_trace();
        return static_cast<double>(gen->bytes_moved()) / (static_cast<double>(gen->end_tick().v) / 1000.0);
    }
};

// The calibration point of ../shared/VALIDATION.md: 910B-class HBM read probe.
constexpr double kReadProbeGbps = 1148.0;

}  // namespace

TEST_CASE("mem bandwidth: 910B-like sequential read with all cores is near the read probe and below peak") {
    Run r("ascend910b-like");
    const double gbps = r.run(r.spec(Pattern::Seq, MemOp::Read, 128ull << 20, r.cores));
    CHECK(gbps <= r.mem->peak_gbps());
    CHECK(gbps >= 0.9 * kReadProbeGbps);
    CHECK(gbps <= 1.1 * kReadProbeGbps);
    // A streamed 512 B line is one activate and back-to-back row hits.
    CHECK(r.mem->row_hit_rate() > 0.9);
}

TEST_CASE("mem bandwidth: 910B-like random 64 B reads are far slower and the row hit rate says why") {
    Run r("ascend910b-like");
    const double gbps = r.run(r.spec(Pattern::Random, MemOp::Read, 16ull << 20, r.cores));
    CHECK(gbps < 0.5 * kReadProbeGbps);
    CHECK(r.mem->row_hit_rate() < 0.6);
}

TEST_CASE("mem bandwidth: on tiny a single stream reaches 90 % of its channel peak") {
    Run r("tiny");
    const double gbps = r.run(r.spec(Pattern::Seq, MemOp::Read, 8ull << 20, 1));
    const auto& h = r.mem->hbm();
    const double channel_peak = h.bus_width_bits / 8.0 * h.data_rate_mtps / 1000.0;
    CHECK(gbps >= 0.9 * channel_peak);
    CHECK(gbps <= channel_peak);
}

namespace {
// Reads a working set of footprint(L2 size) bytes twice on tiny, all cores; the L2 hit rate of
// the second pass.
double second_pass_hit_rate(uint64_t (*footprint)(uint64_t)) {
    Run r("tiny");
    TrafficSpec s = r.spec(Pattern::Seq, MemOp::Read, footprint(r.mem->l2().size_bytes), r.cores);
    s.passes = 2;
    uint64_t h1 = 0, m1 = 0;
    r.gen = std::make_unique<TrafficGen>("gen", s, *r.mem);
    r.gen->on_pass = [&](uint32_t pass) {
        if (pass == 0) {
            h1 = r.mem->l2_hits();
            m1 = r.mem->l2_misses();
        }
    };
    sc_core::sc_start();
    REQUIRE(r.gen->finished());
    return static_cast<double>(r.mem->l2_hits() - h1) /
           static_cast<double>(r.mem->l2_hits() - h1 + r.mem->l2_misses() - m1);
}
}  // namespace

TEST_CASE("mem bandwidth: a working set smaller than L2 hits on the second pass") {
    const double second = second_pass_hit_rate([](uint64_t l2) { return l2 / 2; });
    CHECK(second >= 0.95);
}

TEST_CASE("mem bandwidth: a working set larger than L2 misses on the second pass too") {
    const double second = second_pass_hit_rate([](uint64_t l2) { return 2 * l2; });
    CHECK(second < 0.5);
}

TEST_CASE("mem bandwidth: writes are absorbed by L2 and dirty lines are written back on eviction") {
    Run r("tiny");
    const uint64_t l2 = r.mem->l2().size_bytes;
    r.run(r.spec(Pattern::Seq, MemOp::Write, 2 * l2, r.cores));
    const auto t = r.mem->hbm_totals();
    // Half the data no longer fits and must have gone to HBM; never more than was written.
    CHECK(t.bytes_written >= l2 / 2);
    CHECK(t.bytes_written <= 2 * l2);
    CHECK(t.reads == 0);  // full-line writes allocate without fetching
}

TEST_CASE("mem bandwidth: a long write stream is back-pressured to the HBM write rate") {
    Run r("tiny");
    const auto& h = r.mem->hbm();
    const uint64_t l2 = r.mem->l2().size_bytes;
    const uint64_t line = r.mem->l2().g.line_bytes;
    const uint64_t bytes = 16 * l2;  // footprint >> L2
    const TrafficSpec s = r.spec(Pattern::Seq, MemOp::Write, bytes, 1);
    // Bytes written but not yet in the HBM when the last write completes: at most the L2, the
    // write queues and one waiting write-back per outstanding request.
    uint64_t unwritten = 0;
    r.gen = std::make_unique<TrafficGen>("gen", s, *r.mem);
    r.gen->on_pass = [&](uint32_t) { unwritten = r.mem->unwritten_bytes(); };
    sc_core::sc_start();
    REQUIRE(r.gen->finished());
    const double ns = static_cast<double>(r.gen->end_tick().v) / 1000.0;
    const double accepted = static_cast<double>(r.gen->bytes_moved()) / ns;
    const double peak = r.mem->peak_gbps();
    const uint64_t buffered = l2 + uint64_t(h.total_pcs()) * h.write_queue_depth * line + uint64_t(s.max_outstanding) * line;
    CHECK(unwritten <= buffered);
    const double retired = static_cast<double>(r.gen->bytes_moved() - unwritten) / ns;
    CHECK(retired <= peak);
    // The requester cannot outrun the HBM by more than what the buffers absorb.
    CHECK(accepted <= peak * static_cast<double>(bytes) / static_cast<double>(bytes - buffered));
    CHECK(r.mem->writeback_stalls() > 0);
    // A streamed write keeps its rows open; refresh takes tRFC of every tREFI. Bank-level
    // overlap of activates leaves at least 3/4 of the rest.
    const double refresh_share = static_cast<double>(h.t.rfc) / static_cast<double>(h.t.refi);
    CHECK(retired >= 0.75 * (1.0 - refresh_share) * peak);
}

TEST_CASE("mem bandwidth: trace counters per HBM channel and for the L2 hit rate") {
    CountingSink sink;
    Run r("tiny", &sink);
    r.run(r.spec(Pattern::Seq, MemOp::Read, 1ull << 20, r.cores));
    REQUIRE(sink.names.size() == r.mem->hbm().stacks * r.mem->hbm().channels_per_stack + 1);
    for (auto n : sink.samples) CHECK(n > 0);
    // A window's bandwidth never exceeds the channel's peak.
    const auto& h = r.mem->hbm();
    CHECK(sink.max_value <= h.bus_width_bits / 8.0 * h.data_rate_mtps / 1000.0 + 1e-9);
    CHECK(sink.max_value > 0);
}
