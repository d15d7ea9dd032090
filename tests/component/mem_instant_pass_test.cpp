// The exact memory service's end-of-instant pass (MemorySystem::handover_end): once the requests
// submitted at one instant are handed over, nothing later can reach a slice before now + 1 + the
// NoC latency, so what is due up to now + the NoC latency (the lookups of those requests) runs
// at once instead of in a wake-up of its own. Each TEST_CASE elaborates two identical memory
// systems driven by identical traffic, one without the pass (the reference,
// MemorySystem::set_instant_pass(false)), and compares every figure and the wake-ups.
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
    Side ref, pass;

    explicit Pair(const std::string& preset) {
        init_time_resolution();
        cfg.load_ini(std::string(SFUMATO_SOURCE_DIR) + "/configs/" + preset + ".ini");
        chip = std::make_unique<ChipParams>(cfg);
        rt::RuntimeParams host(ParamScope(cfg, "host"));
        cfg.check_unused();
        ref.mem = std::make_unique<MemorySystem>("mem_ref", chip->mem, &ref.root, &ref.hub, chip->clock(),
                                                 chip->mem_ports());
        pass.mem = std::make_unique<MemorySystem>("mem_pass", chip->mem, &pass.root, &pass.hub, chip->clock(),
                                                  chip->mem_ports());
        ref.mem->set_instant_pass(false);
    }
    void run(TrafficSpec s) {
        s.max_outstanding = ref.mem->noc().max_outstanding;
        s.footprint = s.footprint ? s.footprint : ref.mem->hbm().capacity_bytes / 2;
        if (s.op == MemOp::Copy) s.dst_base = ref.mem->hbm().capacity_bytes / 2;
        for (Side* side : {&ref, &pass})
            side->gen = std::make_unique<TrafficGen>(side == &ref ? "gen_ref" : "gen_pass", s, *side->mem);
        sc_core::sc_start();
        REQUIRE(ref.gen->finished());
        REQUIRE(pass.gen->finished());
    }
    void check_identical() const {
        const MemorySystem& a = *ref.mem;
        const MemorySystem& b = *pass.mem;
        CHECK(ref.gen->end_tick().v == pass.gen->end_tick().v);
        CHECK(ref.gen->bytes_moved() == pass.gen->bytes_moved());
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
        // The reference never runs a pass; the other one does, and wakes up less.
        CHECK(a.instant_passes() == 0);
        CHECK(b.instant_passes() > 0);
        CHECK(b.activations() < a.activations());
    }
};

TrafficSpec spec(Pattern p, MemOp op, uint64_t bytes, uint32_t cores, uint32_t req_bytes) {
    TrafficSpec s;
    s.pattern = p;
    s.op = op;
    s.bytes = bytes;
    s.cores = cores;
    s.request_bytes = req_bytes;
    s.bursts = false;
    return s;
}

}  // namespace

TEST_CASE("mem instant pass: 910B-like sequential line reads are identical with fewer wake-ups") {
    Pair p("ascend910b-like");
    p.run(spec(Pattern::Seq, MemOp::Read, 8ull << 20, p.chip->cube_cores, p.ref.mem->l2().g.line_bytes));
    p.check_identical();
}

TEST_CASE("mem instant pass: 910B-like random 64-B writes past the L2 are identical") {
    Pair p("ascend910b-like");
    TrafficSpec s = spec(Pattern::Random, MemOp::Write, 4ull << 20, p.chip->cube_cores, 64);
    s.footprint = 4 * p.ref.mem->l2().size_bytes;
    p.run(s);
    p.check_identical();
}

TEST_CASE("mem instant pass: tiny random copies of multi-line requests past the L2 are identical") {
    Pair p("tiny");
    const uint32_t line = p.ref.mem->l2().g.line_bytes;
    // 2.5 lines: each request spans three lines (parts), and the copies evict dirty lines.
    TrafficSpec s = spec(Pattern::Random, MemOp::Copy, 2 * p.ref.mem->l2().size_bytes, p.chip->cube_cores,
                         5 * line / 2);
    s.footprint = 4 * p.ref.mem->l2().size_bytes;
    p.run(s);
    p.check_identical();
    CHECK(p.ref.mem->hbm_totals().writes > 0);  // the case exercises write-backs
}
