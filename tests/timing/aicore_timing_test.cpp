// Exact cycles of the AI core's per-opcode latency model (cube, MTE1, FixPipe, vector op
// classes, UB bank conflicts, cross-core flags), each derived from the parameters.
#include <catch2/catch.hpp>

#include "isa/asm.h"
#include "models/aicore/core_timing.h"
#include "tests/sim_harness.h"

using namespace sfumato;
using namespace sfumato::test;

namespace {
isa::Instr one(const std::string& text) { return isa::assemble(text).at(0); }
uint64_t cdiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
// Start-up of a mix block's part: 0 = the AIC, 1 and 2 = its AIVs (group 0).
uint64_t startup(Harness& h, int part) {
    const auto& p = h.params();
    return h.chip().cores()[part == 0 ? 0 : p.cube_cores + static_cast<size_t>(part - 1)]->last_startup_cycles();
}
}  // namespace

TEST_CASE("aicore timing: a MAD costs ceil(m/m0)*ceil(k/k0)*ceil(n/n0) steps plus the fill") {
    Harness h;
    const auto& p = h.params();
    const isa::Instr mad = one("mad.fp16 l0c[0x0], l0a[0x0], l0b[0x0], m=48, k=40, n=33");
    auto t = Harness::kernel([&](isa::IInstrSink& s) { s.issue(mad); }, 1, KernelKind::Cube);
    REQUIRE(h.run({t}));
    const uint64_t steps = cdiv(48, p.core.cube_m0) * cdiv(40, p.core.cube_k0_16bit) * cdiv(33, p.core.cube_n0);
    const uint64_t busy = steps * p.core.cube_cycles_per_step + p.core.cube_fill;
    CHECK(t->pipe_busy[static_cast<int>(isa::Pipe::M)] == busy);
    CHECK(t->cycles == t->startup_cycles + p.core.issue_cost(mad) + busy);
}

TEST_CASE("aicore timing: back-to-back int8 MADs stream at one step per cycle, one fill") {
    Harness h;
    const auto& p = h.params();
    const isa::Instr mad = one("mad.int8 l0c[0x0], l0a[0x0], l0b[0x0], m=32, k=64, n=32");
    const int n = 6;
    auto t = Harness::kernel([&](isa::IInstrSink& s) {
        for (int i = 0; i < n; ++i) s.issue(mad);
    }, 1, KernelKind::Cube);
    REQUIRE(h.run({t}));
    const uint64_t steps = cdiv(32, p.core.cube_m0) * cdiv(64, p.core.cube_k0_int8) * cdiv(32, p.core.cube_n0);
    REQUIRE(steps * p.core.cube_cycles_per_step >= p.core.issue_cost(mad));  // issue keeps up
    CHECK(t->cycles == t->startup_cycles + p.core.issue_cost(mad) + n * steps * p.core.cube_cycles_per_step +
                           p.core.cube_fill);
}

TEST_CASE("aicore timing: MTE1 load2d runs at the L1->L0A and L1->L0B rates") {
    Harness h;
    const auto& p = h.params();
    const uint32_t ra = 24, rb = 20;
    const isa::Instr la = one("load2d.fp16 l0a[0x0], l1[0x0], repeat=" + std::to_string(ra));
    const isa::Instr lb = one("load2d.fp16 l0b[0x0], l1[0x4000], repeat=" + std::to_string(rb));
    auto t = Harness::kernel([&](isa::IInstrSink& s) {
        s.issue(la);
        s.issue(lb);
    }, 1, KernelKind::Cube);
    REQUIRE(h.run({t}));
    const uint64_t occ_a = cdiv(ra * isa::kFractalBytes, p.core.mte1_l1_l0a_bpc);
    const uint64_t occ_b = cdiv(rb * isa::kFractalBytes, p.core.mte1_l1_l0b_bpc);
    REQUIRE(occ_a >= p.core.issue_cost(lb));
    CHECK(t->cycles == t->startup_cycles + p.core.issue_cost(la) + occ_a + occ_b + p.core.mte1_startup);
}

TEST_CASE("aicore timing: FixPipe to L1 reads L0C at its rate, then a flag releases MTE1") {
    Harness h;
    const auto& p = h.params();
    const isa::Instr fix = one("fixpipe.fp32 l1[0x0], l0c[0x0], m=32, n=48, srcstride=32, dststride=32, out=fp16");
    auto t = Harness::kernel([&](isa::IInstrSink& s) {
        s.issue(fix);
        s.issue(flag(isa::Opcode::SET_FLAG, isa::Pipe::FIX, isa::Pipe::MTE1, 2));
        s.issue(flag(isa::Opcode::WAIT_FLAG, isa::Pipe::FIX, isa::Pipe::MTE1, 2));
        s.issue(one("load2d.fp16 l0a[0x0], l1[0x0], repeat=4"));
    }, 1, KernelKind::Cube);
    REQUIRE(h.run({t}));
    const uint64_t fix_end = t->startup_cycles + p.core.issue_cost(fix) + cdiv(32 * 48 * 4, p.core.fix_l0c_bpc) +
                             p.core.fix_startup;
    const uint64_t load = cdiv(4 * isa::kFractalBytes, p.core.mte1_l1_l0a_bpc) + p.core.mte1_startup;
    CHECK(t->cycles == fix_end + p.core.flag_latency + load);
}

TEST_CASE("aicore timing: FixPipe to GM and ND2NZ loads go to memory as requests of their GM runs") {
    Harness h;
    const auto& p = h.params();
    // NZ output of fp16: ceil(n / 16) column groups of m rows x 32 B, each group its own run.
    const isa::Instr fix = one("fixpipe.fp32 gm[0x1000], l0c[0x0], m=32, n=48, srcstride=32, dststride=32, out=fp16");
    // ND2NZ: 3 rows of 100 fp16 elements, row stride 128 elements: 3 runs of 200 B.
    const isa::Instr nd = one("copy_gm_to_l1_nd2nz.fp16 l1[0x0], gm[0x20000], n=3, d=100, srcd=128, dstc0=3");
    auto t = Harness::kernel([&](isa::IInstrSink& s) {
        s.issue(fix);
        s.issue(nd);
    }, 1, KernelKind::Cube);
    REQUIRE(h.run({t}));
    // Requests never cross a request_bytes boundary; here every run starts aligned to it.
    const uint64_t rb = p.core.mte_request_bytes;
    const uint64_t fix_reqs = 3 * cdiv(32 * 32, rb);
    uint64_t nd_reqs = 0;
    for (uint64_t r = 0; r < 3; ++r) {
        const uint64_t a = 0x20000 + r * 256, e = a + 200;
        nd_reqs += (e - 1) / rb - a / rb + 1;
    }
    const StatGroup* chip = h.stats().child("chip");
    REQUIRE(chip);
    const StatGroup* core = chip->child("aic0");
    REQUIRE(core);
    auto count = [&](const char* pipe) {
        const auto* c = dynamic_cast<const Counter*>(core->child(pipe)->find("mem_requests"));
        return c ? c->value() : ~0ull;
    };
    CHECK(count("fix") == fix_reqs);
    CHECK(count("mte2") == nd_reqs);
}

TEST_CASE("aicore timing: operands in the same UB banks pay the configured conflict cycles per repeat") {
    // Four banks per group on the tiny preset's 32 KiB UB (bank_rows 16), so that a conflict-free
    // add exists: its destination in another bank of the groups one source reads.
    Harness h({"chip.aicore.ub.bank_rows=16"});
    const auto& p = h.params();
    const uint64_t group_span = uint64_t{p.core.ub_bank_groups} * p.core.ub_bank_bytes;  // the same group again
    const uint64_t bank_span = group_span * p.core.ub_bank_rows;                          // the group's next bank
    REQUIRE(4 * bank_span <= p.core.ub.size);
    REQUIRE(p.core.ub_bank_groups >= 16);  // a repeat's 16 source blocks fit in distinct groups
    const uint16_t r = 12;
    auto t = Harness::kernel([&](isa::IInstrSink& s) {
        // dst, src0, src1 all in one bank of groups 0..7: two reads a group, three accesses a bank.
        s.issue(vadd(0x0, group_span, 2 * group_span, r));
        // Sources in groups 0..7 and 8..15, dst in another bank of groups 0..7: no conflict.
        s.issue(vadd(static_cast<uint32_t>(2 * bank_span), 0x0, 0x100, r));
    });
    REQUIRE(h.run({t}));
    const uint64_t v = r * (p.core.vec_cycles_per_repeat + 2 * p.core.ub_bank_conflict_cycles) + r * p.core.vec_cycles_per_repeat;
    CHECK(t->pipe_busy[static_cast<int>(isa::Pipe::V)] == v + p.core.vec_startup);
    // The cores' statistics count the lost cycles: the first add's, over the vector cores.
    const StatGroup* chip = h.stats().child("chip");
    REQUIRE(chip);
    uint64_t lost = 0;
    for (const StatGroup* g : chip->children())
        if (const auto* c = dynamic_cast<const Counter*>(g->find("ub_bank_conflict_cycles"))) lost += c->value();
    CHECK(lost == r * 2 * p.core.ub_bank_conflict_cycles);
}

TEST_CASE("aicore timing: transcendental and reduction ops use their op class rate") {
    Harness h;
    const auto& p = h.params();
    const uint16_t r = 10;
    auto t = Harness::kernel([&](isa::IInstrSink& s) {
        s.issue(one("vexp.fp16 ub[0x0], ub[0x4100], repeat=10, mask=128"));
        s.issue(one("vredall_sum.fp16 ub[0x0], ub[0x4100], repeat=10, mask=128"));
    });
    REQUIRE(h.run({t}));
    CHECK(t->pipe_busy[static_cast<int>(isa::Pipe::V)] ==
          r * p.core.vec_transcendental_cycles_per_repeat + r * p.core.vec_reduce_cycles_per_repeat + p.core.vec_startup);
}

TEST_CASE("aicore timing: a cross-core flag from the AIC releases both AIVs after its latency") {
    Harness h;
    const auto& p = h.params();
    // A mad long enough that the flag comes after both AIVs reach their wait, whatever order the
    // cores' start-up fetches take at the memory.
    const isa::Instr mad = one("mad.fp16 l0c[0x0], l0a[0x0], l0b[0x0], m=64, k=128, n=64");
    const uint16_t r = 9;
    const isa::Instr wait = one("wait_cross_flag V, 2, 5"), add = vadd(0x0, 0x100, 0x200, r);
    auto t = Harness::kernel([&](isa::IInstrSink& s) {
        if (s.core_kind() == isa::CoreKind::Cube) {
            s.issue(mad);
            s.issue(one("set_cross_flag M, 2, 5"));
        } else {
            s.issue(wait);
            s.issue(add);
        }
    }, 1, KernelKind::Mix);
    REQUIRE(h.run({t}));
    const uint64_t mad_busy = 4 * 8 * 4 * p.core.cube_cycles_per_step + p.core.cube_fill;
    // Each core's body starts after its own start-up; the set waits for the AIC's mad, and the
    // AIVs' adds for the flag (they started their bodies earlier or later: the flag decides).
    const uint64_t set_at = startup(h, 0) + p.core.issue_cost(mad) + mad_busy;
    REQUIRE(set_at + p.core.cross_flag_latency >= std::max(startup(h, 1), startup(h, 2)) + p.core.issue_cost(wait) +
                                                       p.core.issue_cost(add));
    // The add's operands share UB banks on the tiny preset (one bank span): its conflict cycles count.
    const uint64_t add_busy = r * p.core.vec_cycles_per_repeat + ub_conflict_cycles(add, p.core);
    CHECK(t->cycles == set_at + p.core.cross_flag_latency + add_busy + p.core.vec_startup);
    CHECK(t->pipe_busy[static_cast<int>(isa::Pipe::V)] == 2 * (add_busy + p.core.vec_startup));
}

TEST_CASE("aicore timing: the AIC waits for one count from each AIV (mode 2, AIV to AIC)") {
    Harness h;
    const auto& p = h.params();
    auto t = Harness::kernel([&](isa::IInstrSink& s) {
        if (s.core_kind() == isa::CoreKind::Cube) {
            s.issue(one("wait_cross_flag M, 2, 1"));
            s.issue(one("wait_cross_flag M, 2, 1"));
            s.issue(one("mad.fp16 l0c[0x0], l0a[0x0], l0b[0x0], m=16, k=16, n=16"));
        } else {
            // AIV 1 finishes later: it adds more repeats before setting (both long enough that the
            // AIC, whose start-up is the longest of the three, waits for them).
            const uint16_t r = static_cast<uint16_t>(40 + 40 * s.sub_block_idx());
            s.issue(vadd(0x0, 0x100, 0x200, r));
            s.issue(one("set_cross_flag V, 2, 1"));
        }
    }, 1, KernelKind::Mix);
    REQUIRE(h.run({t}));
    // AIV 1's set comes last (its add is the longest; the cores' start-ups differ by a few cycles).
    const isa::Instr add = vadd(0x0, 0x100, 0x200, 80), wait = one("wait_cross_flag M, 2, 1");
    const uint64_t late_set = startup(h, 2) + p.core.issue_cost(add) + 80 * p.core.vec_cycles_per_repeat +
                              ub_conflict_cycles(add, p.core) + p.core.vec_startup;
    INFO("start-ups " << startup(h, 0) << " " << startup(h, 1) << " " << startup(h, 2));
    REQUIRE(late_set > startup(h, 1) + p.core.issue_cost(add) + 40 * p.core.vec_cycles_per_repeat +
                           ub_conflict_cycles(vadd(0x0, 0x100, 0x200, 40), p.core) + p.core.vec_startup);
    REQUIRE(startup(h, 0) + 2 * p.core.issue_cost(wait) < late_set + p.core.cross_flag_latency);  // the AIC waits
    CHECK(t->cycles == late_set + p.core.cross_flag_latency + p.core.cube_cycles_per_step +
                           p.core.cube_fill);
}

TEST_CASE("aicore timing: a scalar unit blocked on a full queue resumes when the slot frees, exactly") {
    // Depth 2: issuing add k needs add k-2 to have left the queue (started). Add 5 thus issues
    // at add 3's start; 1000 scalar cycles later add 6 issues and starts (the pipe is idle by then).
    Harness h({"chip.aicore.queue_depth=2"});
    const auto& p = h.params();
    const uint16_t r = 16;
    const uint32_t work = 1000;
    auto t = Harness::kernel([&](isa::IInstrSink& s) {
        for (int k = 0; k < 6; ++k) s.issue(vadd(0x0, 0x100, 0x200, r));
        s.scalar(work);
        s.issue(vadd(0x0, 0x100, 0x200, r));
    });
    REQUIRE(h.run({t}));
    const uint64_t add = r * p.core.vec_cycles_per_repeat + ub_conflict_cycles(vadd(0x0, 0x100, 0x200, r), p.core);
    const uint64_t issue = p.core.issue_cost(vadd(0x0, 0x100, 0x200, r));
    REQUIRE(add > 2 * issue);  // pipe-bound: the queue fills
    const uint64_t first = t->startup_cycles + issue;  // add 0 issues and starts
    const uint64_t issue5 = first + 3 * add;               // add 3's start frees add 5's slot
    REQUIRE(work > 3 * add);                               // the pipe drains during the scalar work
    const uint64_t start6 = issue5 + work + issue;
    CHECK(t->cycles == start6 + add + p.core.vec_startup);
}
