// The memory system's run-ahead client: completions delivered ahead of SystemC time (within the
// NoC latency) must give exactly the results of waking for each completion, with far fewer
// wake-ups. Each TEST_CASE elaborates two identical memory systems driven by identical traffic,
// one with the generator as its run-ahead client, and compares every figure.
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
    uint64_t unwritten_at_pass = 0, hits_at_pass = 0;
    Tick pass_end;
};

struct Pair {
    Config cfg;
    std::unique_ptr<ChipParams> chip;
    Side normal, ahead;

    explicit Pair(const std::string& preset) {
        init_time_resolution();
        cfg.load_ini(std::string(SFUMATO_SOURCE_DIR) + "/configs/" + preset + ".ini");
        chip = std::make_unique<ChipParams>(cfg);
        rt::RuntimeParams host(ParamScope(cfg, "host"));
        cfg.check_unused();
        normal.mem = std::make_unique<MemorySystem>("mem_normal", chip->mem, &normal.root, &normal.hub, chip->clock(), chip->mem_ports());
        ahead.mem = std::make_unique<MemorySystem>("mem_ahead", chip->mem, &ahead.root, &ahead.hub, chip->clock(), chip->mem_ports());
    }
    void run(TrafficSpec s) {
        s.max_outstanding = normal.mem->noc().max_outstanding;
        s.footprint = s.footprint ? s.footprint : normal.mem->hbm().capacity_bytes / 2;
        if (s.op == MemOp::Copy) s.dst_base = normal.mem->hbm().capacity_bytes / 2;
        for (Side* side : {&normal, &ahead}) {
            side->gen = std::make_unique<TrafficGen>(side == &normal ? "gen_normal" : "gen_ahead", s, *side->mem);
            side->gen->on_pass = [side](uint32_t) {
                side->unwritten_at_pass = side->mem->unwritten_bytes();
                side->hits_at_pass = side->mem->l2_hits();
            };
        }
        ahead.mem->set_runahead_client(ahead.gen.get());
        sc_core::sc_start();
        REQUIRE(normal.gen->finished());
        REQUIRE(ahead.gen->finished());
    }
    void check_identical() const {
        const MemorySystem& a = *normal.mem;
        const MemorySystem& b = *ahead.mem;
        CHECK(normal.gen->end_tick().v == ahead.gen->end_tick().v);
        CHECK(normal.gen->bytes_moved() == ahead.gen->bytes_moved());
        CHECK(a.l2_hits() == b.l2_hits());
        CHECK(a.l2_misses() == b.l2_misses());
        CHECK(a.writeback_stalls() == b.writeback_stalls());
        CHECK(a.unwritten_bytes() == b.unwritten_bytes());
        CHECK(normal.unwritten_at_pass == ahead.unwritten_at_pass);
        CHECK(normal.hits_at_pass == ahead.hits_at_pass);
        const auto ta = a.hbm_totals(), tb = b.hbm_totals();
        CHECK(ta.reads == tb.reads);
        CHECK(ta.writes == tb.writes);
        CHECK(ta.row_hits == tb.row_hits);
        CHECK(ta.row_conflicts == tb.row_conflicts);
        CHECK(ta.activates == tb.activates);
        CHECK(ta.turnarounds == tb.turnarounds);
        CHECK(ta.busy_ck == tb.busy_ck);
        CHECK(a.read_latency().samples() == b.read_latency().samples());
        CHECK(a.read_latency().mean() == b.read_latency().mean());
        CHECK(a.read_latency().buckets() == b.read_latency().buckets());
    }
};

TrafficSpec spec(Pattern p, MemOp op, uint64_t bytes, uint32_t cores, uint32_t req_bytes, uint32_t passes) {
    TrafficSpec s;
    s.pattern = p;
    s.op = op;
    s.bytes = bytes;
    s.cores = cores;
    s.request_bytes = req_bytes;
    s.passes = passes;
    return s;
}

}  // namespace

TEST_CASE("mem runahead: 910B-like sequential reads give identical results with far fewer wake-ups") {
    Pair p("ascend910b-like");
    p.run(spec(Pattern::Seq, MemOp::Read, 16ull << 20, p.chip->cube_cores, p.normal.mem->l2().g.line_bytes, 1));
    p.check_identical();
    // Completions land on many distinct ticks per NoC latency: most wake-ups go away.
    CHECK(p.ahead.mem->activations() * 3 < p.normal.mem->activations());
}

TEST_CASE("mem runahead: tiny random copies past the L2 over two passes are identical with write-backs and stalls") {
    Pair p("tiny");
    TrafficSpec s = spec(Pattern::Random, MemOp::Copy, 2 * p.normal.mem->l2().size_bytes, p.chip->cube_cores, 64, 2);
    s.footprint = 4 * p.normal.mem->l2().size_bytes;
    p.run(s);
    p.check_identical();
    CHECK(p.normal.mem->hbm_totals().writes > 0);  // the case exercises write-backs
    // Few cores on tiny: completions are mostly further apart than the NoC latency.
    CHECK(p.ahead.mem->activations() <= p.normal.mem->activations());
}
