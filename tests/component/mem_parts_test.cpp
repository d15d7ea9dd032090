// Requests spanning several L2 lines run as one part per line; only the last part to complete
// calls the client, so the others run ahead of SystemC time like internal events instead of
// waking the memory system at each of their ticks. Each TEST_CASE elaborates two identical
// memory systems driven by identical traffic, one whose parts all wait for their own time (the
// reference, MemorySystem::set_parts_run_ahead(false)), and compares every figure.
// One SystemC simulation per TEST_CASE (CTest runs each in its own process).
#include <catch2/catch.hpp>
#include <systemc>

#include "models/chip/chip_params.h"
#include "models/mem/memory_system.h"
#include "models/mem/traffic_gen.h"
#include "runtime/rt/runtime.h"
#include "sim/config.h"
#include "sim/sc_time_util.h"

using namespace sfumato;
using namespace sfumato::mem;

namespace {

struct Side {
    StatGroup root{nullptr, ""};
    TraceHub hub;
    std::unique_ptr<MemorySystem> mem;
    std::unique_ptr<TrafficGen> gen;
};

struct Pair {
    Config cfg;
    std::unique_ptr<ChipParams> chip;
    Side waiting, ahead;

    explicit Pair(const std::string& preset) {
        init_time_resolution();
        cfg.load_ini(std::string(SFUMATO_SOURCE_DIR) + "/configs/" + preset + ".ini");
        chip = std::make_unique<ChipParams>(cfg);
        rt::RuntimeParams host(ParamScope(cfg, "host"));
        cfg.check_unused();
        waiting.mem = std::make_unique<MemorySystem>("mem_waiting", chip->mem, &waiting.root, &waiting.hub,
                                                     chip->clock(), chip->mem_ports());
        ahead.mem = std::make_unique<MemorySystem>("mem_ahead", chip->mem, &ahead.root, &ahead.hub, chip->clock(),
                                                   chip->mem_ports());
        waiting.mem->set_parts_run_ahead(false);
    }
    void run(TrafficSpec s) {
        s.max_outstanding = waiting.mem->noc().max_outstanding;
        s.footprint = s.footprint ? s.footprint : waiting.mem->hbm().capacity_bytes / 2;
        if (s.op == MemOp::Copy) s.dst_base = waiting.mem->hbm().capacity_bytes / 2;
        for (Side* side : {&waiting, &ahead})
            side->gen = std::make_unique<TrafficGen>(side == &waiting ? "gen_waiting" : "gen_ahead", s, *side->mem);
        sc_core::sc_start();
        REQUIRE(waiting.gen->finished());
        REQUIRE(ahead.gen->finished());
    }
    void check_identical() const {
        const MemorySystem& a = *waiting.mem;
        const MemorySystem& b = *ahead.mem;
        CHECK(waiting.gen->end_tick().v == ahead.gen->end_tick().v);
        CHECK(waiting.gen->bytes_moved() == ahead.gen->bytes_moved());
        CHECK(a.l2_hits() == b.l2_hits());
        CHECK(a.l2_misses() == b.l2_misses());
        CHECK(a.writeback_stalls() == b.writeback_stalls());
        CHECK(a.unwritten_bytes() == b.unwritten_bytes());
        const auto ta = a.hbm_totals(), tb = b.hbm_totals();
        CHECK(ta.reads == tb.reads);
        CHECK(ta.writes == tb.writes);
        CHECK(ta.row_hits == tb.row_hits);
        CHECK(ta.row_conflicts == tb.row_conflicts);
        CHECK(ta.activates == tb.activates);
        CHECK(ta.busy_ck == tb.busy_ck);
        CHECK(a.read_latency().samples() == b.read_latency().samples());
        CHECK(a.read_latency().mean() == b.read_latency().mean());
        CHECK(a.read_latency().buckets() == b.read_latency().buckets());
    }
};

TrafficSpec spec(Pattern p, MemOp op, uint64_t bytes, uint32_t cores, uint32_t req_bytes) {
    TrafficSpec s;
    s.pattern = p;
    s.op = op;
    s.bytes = bytes;
    s.cores = cores;
    s.request_bytes = req_bytes;
    return s;
}

}  // namespace

TEST_CASE("mem parts: 910B-like reads of four lines per request are identical with fewer wake-ups") {
    Pair p("ascend910b-like");
    const uint32_t line = p.waiting.mem->l2().g.line_bytes;
    p.run(spec(Pattern::Seq, MemOp::Read, 8ull << 20, p.chip->cube_cores, 4 * line));
    p.check_identical();
    // The parts of a request complete at different ticks (they take different slices and
    // channels): three in four no longer wake the memory system.
    CHECK(p.ahead.mem->activations() < p.waiting.mem->activations());
}

TEST_CASE("mem parts: tiny random copies of unaligned multi-line requests past the L2 are identical") {
    Pair p("tiny");
    const uint32_t line = p.waiting.mem->l2().g.line_bytes;
    // 2.5 lines: each request spans three lines, its parts of different sizes.
    TrafficSpec s = spec(Pattern::Random, MemOp::Copy, 2 * p.waiting.mem->l2().size_bytes, p.chip->cube_cores,
                         5 * line / 2);
    s.footprint = 4 * p.waiting.mem->l2().size_bytes;
    p.run(s);
    p.check_identical();
    CHECK(p.waiting.mem->hbm_totals().writes > 0);  // the case exercises write-backs
    CHECK(p.ahead.mem->activations() < p.waiting.mem->activations());
}
