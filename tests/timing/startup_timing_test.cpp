// Exact cycles of kernel start-up, derived from the parameters: the scheduler's serial dispatch
// and completion reports, each core's code fetch through its TLB and instruction cache, its
// initialisation and argument loads through the data cache, call-site fetches on the first issue
// of an opcode, scalar stores and the write-back of dirty lines at the block's end. The
// tiny-simple-mem preset (tiny with the skeleton memory: latency + bytes / port rate, no L2)
// makes every miss an arithmetic figure; its shared bandwidth is raised so cores starting a few
// cycles apart never queue behind each other there.
#include <catch2/catch.hpp>

#include "models/aicore/core_timing.h"
#include "runtime/kernel/api.h"
#include "tests/sim_harness.h"

using namespace sfumato;
using namespace sfumato::test;

namespace {

uint64_t cdiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

const std::vector<std::string> kSimple = {"chip.gm.bytes_per_cycle=65536"};
const char* const kPreset = "tiny-simple-mem";

std::vector<std::string> simple(std::vector<std::string> more = {}) {
    std::vector<std::string> v = kSimple;
    v.insert(v.end(), more.begin(), more.end());
    return v;
}

// Figures of the skeleton memory for one request on an idle port.
struct Mem {
    const ChipParams& p;
    uint64_t read(uint64_t bytes) const { return cdiv(bytes, p.gm.port_read_bpc) + p.gm.latency; }
    uint64_t write(uint64_t bytes) const { return cdiv(bytes, p.gm.port_write_bpc) + p.gm.latency; }
    uint64_t walk() const { return p.core.smem.tlb_miss_cycles + p.core.smem.tlb_walk_levels * read(8); }
    // A core's start-up for a kernel with estimated code, cold caches and `args` bytes of
    // arguments in the system region (one page with the code and the page table).
    uint64_t startup(uint32_t args) const {
        const auto& s = p.core.smem;
        const uint64_t lines = cdiv(s.code_entry_bytes, s.icache_line_bytes);
        uint64_t c = walk() + lines * read(s.icache_line_bytes) + s.init_cycles;
        if (args > 0) c += read(s.dcache_line_bytes) + cdiv(args, 8) * s.dcache_hit_cycles;  // one line
        return c;
    }
    // Dispatch of the task, then of `blocks` blocks of `cores` cores each.
    uint64_t dispatch(uint32_t blocks, uint32_t cores) const {
        return p.ts.dispatch_cycles + blocks * (p.ts.block_dispatch_cycles + cores * p.ts.core_start_cycles);
    }
    uint64_t report(uint32_t cores) const { return cores * p.ts.core_done_cycles + p.ts.completion_cycles; }
};

std::shared_ptr<Task> empty_kernel(uint32_t blocks, KernelKind kind, uint32_t args_bytes) {
    auto t = Harness::kernel([](isa::IInstrSink&) {}, blocks, kind);
    t->kernel.type = "Empty";
    t->kernel.code_bytes = 0;  // estimated: the entry code only
    t->kernel.args_bytes = args_bytes;
    return t;
}

// Dispatch to completion report in device cycles, between the clock edges (as summary.json has it).
uint64_t task_duration(const Harness& h, const Task& t) {
    const ClockDomain clk = h.params().clock();
    return clk.ceil_cycle(t.end_tick).v - clk.ceil_cycle(t.start_tick).v;
}

}  // namespace

TEST_CASE("startup timing: an empty vector kernel on one core is dispatch, start-up and report") {
    Harness h(simple(), kPreset);
    const Mem m{h.params()};
    auto t = empty_kernel(1, KernelKind::Vector, 16);
    REQUIRE(h.run({t}));
    CHECK(task_duration(h, *t) == m.dispatch(1, 1) + m.startup(16) + m.report(1));
    // The execution span (Task::cycles) is the core's part alone: its start-up.
    CHECK(t->cycles == m.startup(16));
    CHECK(t->startup_cycles == m.startup(16));
}

TEST_CASE("startup timing: the task duration grows with the blocks: serial dispatch, every core pays its start-up") {
    // Vector blocks on tiny's 4 AIVs: the last block starts (block_dispatch + core_start) after
    // the one before; each core fetches its own code (its own TLB and caches).
    Harness h(simple({"chip.ts.core_start_cycles=300", "chip.ts.core_done_cycles=40"}), kPreset);
    const Mem m{h.params()};
    REQUIRE(h.params().ts.core_done_cycles <= h.params().ts.block_dispatch_cycles + h.params().ts.core_start_cycles);
    std::vector<std::shared_ptr<Task>> ts;
    for (uint32_t b = 1; b <= h.params().vector_cores(); ++b) ts.push_back(empty_kernel(b, KernelKind::Vector, 16));
    // One after another on one queue: each kernel starts on an idle chip.
    HostThread host("host", [&] {
        const uint32_t q = h.chip().open_queue(0);
        for (auto& t : ts) {
            h.chip().submit(q, t);
            while (!t->done) sc_core::wait(t->done_event);
        }
    });
    sc_core::sc_start();
    rethrow_failure();
    REQUIRE(host.finished());
    for (uint32_t b = 1; b <= ts.size(); ++b) {
        INFO("blocks " << b);
        CHECK(task_duration(h, *ts[b - 1]) == m.dispatch(b, 1) + m.startup(16) + m.report(1));
        // The execution span runs from the first block's start to the last one's end.
        CHECK(ts[b - 1]->cycles == m.dispatch(b, 1) - m.dispatch(1, 1) + m.startup(16));
    }
}

TEST_CASE("startup timing: a mix block starts once all three of its cores are started, and reports for three") {
    Harness h(simple({"chip.ts.core_start_cycles=300"}), kPreset);
    const Mem m{h.params()};
    const uint32_t cores = 1 + h.params().aiv_per_aic;
    auto t = empty_kernel(h.params().cube_cores, KernelKind::Mix, 40);
    REQUIRE(h.run({t}));
    // The three cores of a block start in the same cycle; the skeleton memory takes one request
    // per cycle device-wide, so their first page-table reads leave 0, 1 and 2 cycles apart, and
    // they stay that far apart: the block ends (cores - 1) cycles after one core would.
    CHECK(task_duration(h, *t) == m.dispatch(h.params().cube_cores, cores) + m.startup(40) + (cores - 1) + m.report(cores));
}

TEST_CASE("startup timing: a second wave of the same launch finds the code, translation and arguments cached") {
    Harness h(simple(), kPreset);
    const Mem m{h.params()};
    const auto& p = h.params();
    // Two waves on one AIV... of every AIV: block i + cores runs where block i ran.
    const uint32_t cores = p.vector_cores();
    auto t = empty_kernel(2 * cores, KernelKind::Vector, 16);
    REQUIRE(h.run({t}));
    const uint64_t warm = p.core.smem.init_cycles + 2 * p.core.smem.dcache_hit_cycles;
    const AiCore& last = *h.chip().cores()[p.cube_cores + cores - 1];
    CHECK(last.last_startup_cycles() == warm);
    const AiCore& first = *h.chip().cores()[p.cube_cores];
    CHECK(first.last_startup_cycles() == warm);
    // A new launch of the same kernel starts cold again.
    REQUIRE(m.startup(16) > warm);
}

TEST_CASE("startup timing: a new launch of the same kernel starts with cold caches") {
    Harness h(simple(), kPreset);
    const Mem m{h.params()};
    auto a = empty_kernel(1, KernelKind::Vector, 16), b = empty_kernel(1, KernelKind::Vector, 16);
    HostThread host("host", [&] {
        const uint32_t q = h.chip().open_queue(0);
        h.chip().submit(q, a);
        while (!a->done) sc_core::wait(a->done_event);
        h.chip().submit(q, b);
        while (!b->done) sc_core::wait(b->done_event);
    });
    sc_core::sc_start();
    rethrow_failure();
    REQUIRE(host.finished());
    CHECK(task_duration(h, *a) == m.dispatch(1, 1) + m.startup(16) + m.report(1));
    CHECK(task_duration(h, *b) == task_duration(h, *a));
}

TEST_CASE("startup timing: the first issue of an opcode fetches its call site, later ones find it cached") {
    Harness h(simple(), kPreset);
    const Mem m{h.params()};
    const auto& p = h.params();
    const auto& s = p.core.smem;
    const isa::Instr v = vadd(0, 0x100, 0x200, 1);
    isa::Instr d = isa::make_instr(isa::Opcode::VMULS);
    d.dst = {0x400, isa::Pos::UB};
    d.src0 = {0x400, isa::Pos::UB};
    d.vec.repeat = 1;
    auto t = Harness::kernel([&](isa::IInstrSink& sink) {
        sink.issue(v);
        sink.issue(d);
        sink.issue(v);
    });
    t->kernel.type = "Sites";
    t->kernel.code_bytes = 0;
    REQUIRE(h.run({t}));
    // The sites follow the entry code: the first lands in a new line (a miss), the second in the
    // same line (a hit) as long as the entry ends on a line boundary.
    REQUIRE(s.code_entry_bytes % s.icache_line_bytes == 0);
    REQUIRE(2 * s.code_site_bytes <= s.icache_line_bytes);
    const AiCore& core = *h.chip().cores()[p.cube_cores];
    CHECK(core.last_startup_cycles() == m.startup(0));
    // The vector pipe: v, d, v back to back once issued; the third issue is the last.
    const uint64_t issue_end = m.startup(0) + m.read(s.icache_line_bytes) + 2 * p.core.issue_cost(v) + p.core.issue_cost(d);
    // One repeat each (plus its UB bank conflicts: on one bank span the add's operands share banks).
    const uint64_t v_time = p.core.vec_cycles_per_repeat + ub_conflict_cycles(v, p.core);
    REQUIRE(p.core.issue_cost(v) >= v_time);  // issue-bound: the last vadd starts when issued
    REQUIRE(p.core.issue_cost(v) >= p.core.vec_cycles_per_repeat + ub_conflict_cycles(d, p.core));
    const uint64_t end = issue_end + v_time + p.core.vec_startup;
    CHECK(task_duration(h, *t) == m.dispatch(1, 1) + end + m.report(1));
}

TEST_CASE("startup timing: a scalar store misses the TLB and data cache, and its dirty line is written back at the end") {
    Harness h(simple(), kPreset);
    const Mem m{h.params()};
    const auto& p = h.params();
    const auto& s = p.core.smem;
    const uint64_t addr = 16ull << 20;  // user memory: another page than the system region
    REQUIRE(addr / s.tlb_page_bytes != 0);
    auto t = Harness::kernel([&](isa::IInstrSink& sink) {
        kernel::KernelContext ctx(sink);
        kernel::GlobalTensor<float> g;
        g.SetGlobalBuffer(ctx, addr, 16);
        g.SetValue(0, 2.5f);
        g.SetValue(1, 3.5f);
    });
    t->kernel.type = "Store";
    t->kernel.code_bytes = s.code_entry_bytes;  // declared: fetched whole at start-up, no site fetches
    REQUIRE(h.run({t}));
    isa::Instr st = isa::make_instr(isa::Opcode::ST_GM);
    const uint64_t body = 2 * p.core.issue_cost(st) + m.walk() + m.read(s.dcache_line_bytes) + 2 * s.dcache_hit_cycles;
    const uint64_t flush = m.write(s.dcache_line_bytes);
    CHECK(task_duration(h, *t) == m.dispatch(1, 1) + m.startup(0) + body + flush + m.report(1));
    float back[2];
    h.chip().gm()->read(addr, back, sizeof back);
    CHECK(back[0] == 2.5f);
    CHECK(back[1] == 3.5f);
}

TEST_CASE("startup timing: a kernel of one-repeat adds is bound by the scalar unit's issue, and its scalar busy shows it") {
    Harness h;
    const auto& p = h.params();
    const isa::Instr v = vadd(0x0, 0x100, 0x200, 1);
    const uint64_t n = 200, cost = p.core.issue_cost(v);
    const uint64_t run = p.core.vec_cycles_per_repeat + ub_conflict_cycles(v, p.core);  // its bank conflicts included
    REQUIRE(cost > run);  // issuing an add takes longer than running it
    auto t = Harness::kernel([&](isa::IInstrSink& s) {
        for (uint64_t i = 0; i < n; ++i) s.issue(v);
    });
    REQUIRE(h.run({t}));
    // Each add starts when it is issued; the last one ends a repeat and the pipeline depth later.
    CHECK(t->cycles == t->startup_cycles + n * cost + run + p.core.vec_startup);
    // The scalar unit was busy initialising and issuing (the code fetch is a stall, not work).
    CHECK(t->pipe_busy[static_cast<int>(isa::Pipe::S)] == p.core.smem.init_cycles + n * cost);
    const double body = static_cast<double>(n * cost);
    CHECK(static_cast<double>(t->pipe_busy[static_cast<int>(isa::Pipe::S)] - p.core.smem.init_cycles) / body == 1.0);
}
