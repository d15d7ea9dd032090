// Timing re-use's stand-ins on the simulated chip (runtime/reuse/timing_reuse.h): a stand-in's
// span must reproduce its template's. A stand-in block charges its share of the template's span
// after its own start-up (code fetch, initialisation, argument loads), which differs from the
// template's: here the template is the kernel's first launch, whose code the cores fetched from
// HBM, while the stand-ins find it in the L2. Subtracting the template's start-up instead of the
// block's own made every stand-in shorter than its template by the difference.
#include <catch2/catch.hpp>

#include "models/power/energy_attributor.h"
#include "runtime/reuse/timing_reuse.h"
#include "tests/sim_harness.h"

using namespace sfumato;

namespace {

// One wave of vector blocks (one per vector core), each streaming `bytes` from GM through UB and
// back: every block starts delta after the one before and runs about equally long, as the stand-in
// assumes of its template.
KernelDesc stream_kernel(uint64_t in, uint64_t out, uint32_t blocks, uint32_t bytes) {
    KernelDesc k;
    k.name = k.type = "standin_stream";
    k.reuse_key = "standin_stream";  // a host program's key: every launch is the same identity
    k.block_dim = blocks;
    k.kind = KernelKind::Vector;
    k.code_bytes = test::Harness::kCodeBytes;
    k.body = [in, out, bytes](isa::IInstrSink& s) {
        const uint64_t off = uint64_t{s.block_idx()} * bytes;
        isa::Instr ld = isa::make_instr(isa::Opcode::COPY_GM_TO_UB);
        ld.src0 = {in + off, isa::Pos::GM};
        ld.dst = {0, isa::Pos::UB};
        ld.copy = {1, bytes, 0, 0};
        s.issue(ld);
        s.issue(test::flag(isa::Opcode::SET_FLAG, isa::Pipe::MTE2, isa::Pipe::MTE3, 0));
        s.issue(test::flag(isa::Opcode::WAIT_FLAG, isa::Pipe::MTE2, isa::Pipe::MTE3, 0));
        s.issue(test::store(out + off, 0, bytes));
    };
    return k;
}

// Four launches of the same streaming kernel under re-use `on`: every repeat takes the first
// (cold-code) launch's time. The tasks in launch order, and the service's counters.
reuse::ReuseCounters four_launches_reused(test::Harness& h, uint32_t blocks, uint32_t bytes,
                                          std::vector<std::shared_ptr<Task>>& tasks) {
    reuse::ReuseCounters c;
    REQUIRE(h.run_host([&] {
        rt::Runtime rt(h.chip(), h.host_params(), h.trace(), &h.root());
        reuse::ReuseOptions o;
        o.mode = reuse::ReuseMode::On;
        o.block_dispatch_cycles = h.params().ts.block_dispatch_cycles;
        o.core_start_cycles = h.params().ts.core_start_cycles;
        reuse::TimingReuse service(rt.context(), rt.device_info(), o);
        const uint64_t in = rt.malloc(uint64_t{blocks} * bytes), out = rt.malloc(uint64_t{blocks} * bytes);
        for (int i = 0; i < 4; ++i) tasks.push_back(rt.launch(stream_kernel(in, out, blocks, bytes), rt.default_stream()));
        rt.synchronize_device();
        c = service.counters();
    }));
    return c;
}

}  // namespace

TEST_CASE("timing re-use: a stand-in's span equals its template's whatever its own start-up", "[reuse][timing]") {
    test::Harness h({}, "tiny", false);
    const DeviceInfo& dev = h.chip().info();
    const uint32_t blocks = dev.vector_cores;  // one wave
    const uint32_t bytes = 16 * 1024;
    std::vector<std::shared_ptr<Task>> tasks;
    const reuse::ReuseCounters c = four_launches_reused(h, blocks, bytes, tasks);
    REQUIRE(c.reused == 3);
    const Task& tmpl = *tasks[0];
    for (size_t i = 1; i < tasks.size(); ++i) {
        const Task& t = *tasks[i];
        INFO("launch " << i << ": span " << t.cycles << " cycles, start-up " << t.startup_cycles
                       << "; template span " << tmpl.cycles << ", start-up " << tmpl.startup_cycles);
        // The case the defect needs: the stand-in's own start-up is shorter than its template's
        // (its code is in the L2 by now).
        REQUIRE(t.startup_cycles < tmpl.startup_cycles);
        // One wave: the stand-in's blocks start delta apart and each ends its template block's
        // time after its start, so the last one ends the template's span after the first began.
        CHECK(t.cycles == tmpl.cycles);
    }
    // The measured part of the error bound (each stand-in's difference from its template) is 0.
    CHECK(c.error_bound_known == false);  // `on` never checks an identity
    CHECK(c.error_bound_cycles == 0);
}

TEST_CASE("timing re-use: a stand-in is charged its template's dynamic energy", "[reuse][timing][energy]") {
    // The stand-ins issue one scalar wait each and move no data; charged, their priced events are
    // their template's (but the time-driven ones: active core cycles, HBM refreshes), and the
    // kernels' events with what ran outside them still add up to the run's.
    test::Harness h({}, "tiny", false);
    const DeviceInfo& dev = h.chip().info();
    const uint32_t blocks = dev.vector_cores;
    const uint32_t bytes = 16 * 1024;
    std::vector<std::shared_ptr<Task>> tasks;
    const reuse::ReuseCounters c = four_launches_reused(h, blocks, bytes, tasks);
    REQUIRE(c.reused == 3);
    CHECK(c.energy_charged == 3);
    CHECK(c.energy_complete());
    power::EnergyAttributor& a = h.chip().energy();
    const uint64_t end = now_tick().v;
    a.finish(end);
    auto time_driven = [](power::Event e) {
        return e == power::Event::AicActive || e == power::Event::AivActive || e == power::Event::HbmRefreshes;
    };
    power::Events tmpl, sum = a.outside_events();
    REQUIRE(a.kernel_activity(*tasks[0], tmpl));
    // The template moved data and kept its pipes busy; a stand-in alone does neither.
    REQUIRE(tmpl[power::Event::UbGmBytes] > 0);
    REQUIRE(tmpl[power::Event::HbmReadBytes] > 0);
    for (size_t i = 0; i < tasks.size(); ++i) {
        power::Events e;
        REQUIRE(a.kernel_activity(*tasks[i], e));
        for (size_t k = 0; k < power::kNumEvents; ++k) {
            sum.n[k] += e.n[k];
            const auto ev = static_cast<power::Event>(k);
            if (i == 0 || time_driven(ev)) continue;
            INFO("launch " << i << ", " << power::event_name(ev));
            CHECK(e.n[k] == Approx(tmpl.n[k]).margin(1e-9));
        }
    }
    const power::Events run = a.run_events(static_cast<double>(end) * 1e-12 * a.model().shape().clock_hz);
    for (size_t k = 0; k < power::kNumEvents; ++k) {
        INFO(power::event_name(static_cast<power::Event>(k)));
        CHECK(sum.n[k] == Approx(run.n[k]).epsilon(1e-9).margin(1e-6));
    }
    CHECK(a.charged()[power::Event::HbmReadBytes] > 0);
}
