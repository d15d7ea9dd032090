// Exact cycle counts of small instruction sequences, derived from the parameters.
#include <catch2/catch.hpp>

#include "models/aicore/core_timing.h"
#include "tests/sim_harness.h"

using namespace sfumato;
using namespace sfumato::test;

TEST_CASE("timing: one vector add costs start-up + issue + repeats + pipeline depth (its execution span)") {
    Harness h;
    const auto& p = h.params();
    const uint16_t repeat = 37;
    auto t = Harness::kernel([&](isa::IInstrSink& s) { s.issue(vadd(0x0, 0x2800, 0x5000, repeat)); });
    REQUIRE(h.run({t}));
    // The operands are 10 KiB apart: their blocks share UB banks, and the conflicts are part of the cost.
    const uint64_t bank = ub_conflict_cycles(vadd(0x0, 0x2800, 0x5000, repeat), p.core);
    const uint64_t expect = t->startup_cycles + p.core.issue_cost(vadd(0x0, 0x2800, 0x5000, repeat)) +
                            repeat * p.core.vec_cycles_per_repeat + bank + p.core.vec_startup;
    CHECK(t->cycles == expect);
    CHECK(t->pipe_busy[static_cast<int>(isa::Pipe::V)] == repeat * p.core.vec_cycles_per_repeat + bank + p.core.vec_startup);
}

TEST_CASE("timing: back-to-back vector adds pipeline, dependent ones pay the depth") {
    // Within one pipe the hardware does not interlock on data: a vector instruction that reads
    // the previous one's result is ordered by pipe_barrier(V), which waits for every earlier
    // instruction of the pipe to complete. So four independent adds overlap their pipeline
    // depth, while a chain of four dependent adds (each reading the last one's dst, a barrier
    // before each) pays the depth once per add.
    Harness h;
    const auto& p = h.params();
    const uint16_t r = 20;
    auto independent = Harness::kernel([&](isa::IInstrSink& s) {
        for (int i = 0; i < 4; ++i) s.issue(vadd(0x0, 0x2800, 0x5000, r));
    });
    isa::Instr barrier;
    barrier.op = isa::Opcode::PIPE_BARRIER;
    barrier.pipe = isa::Pipe::V;
    auto dependent = Harness::kernel([&](isa::IInstrSink& s) {
        s.issue(vadd(0x0, 0x2800, 0x5000, r));
        for (int i = 0; i < 3; ++i) {
            s.issue(barrier);
            s.issue(vadd(0x0, 0x0, 0x5000, r));  // reads the previous add's dst
        }
    });
    REQUIRE(h.run({independent, dependent}));
    // Issue is faster than execution here, so the pipe is throughput-bound: 4 x repeats, one depth.
    const uint64_t issue = p.core.issue_cost(vadd(0x0, 0x2800, 0x5000, r));
    REQUIRE(issue <= r * p.core.vec_cycles_per_repeat);
    const uint64_t occ_a = r * p.core.vec_cycles_per_repeat + ub_conflict_cycles(vadd(0x0, 0x2800, 0x5000, r), p.core);
    const uint64_t occ_b = r * p.core.vec_cycles_per_repeat + ub_conflict_cycles(vadd(0x0, 0x0, 0x5000, r), p.core);
    REQUIRE(p.core.vec_startup > 0);  // otherwise the chain cannot show the depth
    CHECK(independent->cycles == independent->startup_cycles + issue + 4 * occ_a + p.core.vec_startup);
    // Each barrier releases the next add when the previous one completed (its end includes the depth).
    CHECK(dependent->cycles ==
          dependent->startup_cycles + issue + (occ_a + p.core.vec_startup) + 3 * (occ_b + p.core.vec_startup));
}

TEST_CASE("timing: set_flag waits for completion and wait_flag releases the store after the flag latency") {
    // The store's cost below is that of the skeleton's latency + bandwidth memory (chip.gm.*).
    Harness h({}, "tiny-simple-mem");
    const auto& p = h.params();
    const uint16_t r = 16;
    const uint32_t bytes = 256;
    auto t = Harness::kernel([&](isa::IInstrSink& s) {
        s.issue(vadd(0x0, 0x2800, 0x5000, r));
        s.issue(flag(isa::Opcode::SET_FLAG, isa::Pipe::V, isa::Pipe::MTE3, 0));
        s.issue(flag(isa::Opcode::WAIT_FLAG, isa::Pipe::V, isa::Pipe::MTE3, 0));
        s.issue(store(0x100000, 0x0, bytes));
    });
    REQUIRE(h.run({t}));
    const uint64_t bank = ub_conflict_cycles(vadd(0x0, 0x2800, 0x5000, r), p.core);
    const uint64_t vend = t->startup_cycles + p.core.issue_cost(vadd(0x0, 0x2800, 0x5000, r)) + r * p.core.vec_cycles_per_repeat +
                          bank + p.core.vec_startup;
    const uint64_t xfer = std::max((bytes + p.gm.port_write_bpc - 1) / p.gm.port_write_bpc,
                                   (bytes + p.gm.bytes_per_cycle - 1) / p.gm.bytes_per_cycle);
    const uint64_t done = vend + p.core.flag_latency + p.core.mte3_startup + xfer + p.gm.latency;
    CHECK(t->cycles == done);
}

TEST_CASE("timing: a full queue stalls the scalar unit without changing the pipe's schedule") {
    // With a queue of depth 1 the scalar unit blocks on every issue, yet the vector pipe stays
    // throughput-bound: decoupling and blocking never change a cycle count.
    Harness h({"chip.aicore.queue_depth=1"});
    const auto& p = h.params();
    auto a = Harness::kernel([&](isa::IInstrSink& s) {
        for (int k = 0; k < 10; ++k) s.issue(vadd(0x0, 0x2800, 0x5000, 8));
    });
    REQUIRE(h.run({a}));
    const uint64_t bank = ub_conflict_cycles(vadd(0x0, 0x2800, 0x5000, 8), p.core);
    CHECK(a->cycles == a->startup_cycles + p.core.issue_cost(vadd(0x0, 0x2800, 0x5000, 8)) +
                           10 * (8 * p.core.vec_cycles_per_repeat + bank) + p.core.vec_startup);
}
