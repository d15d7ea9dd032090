// Exact task-scheduler timing, derived from the chip.ts.* and host.* parameters.
#include <catch2/catch.hpp>

#include "tests/component/ts_fixture.h"

using namespace sfumato;
using namespace sfumato::test;
using rt::Status;

namespace {

std::vector<std::string> with_dispatch(std::vector<std::string> overrides) {
    // Not the defaults, to see they matter.
    overrides.insert(overrides.begin(), {"chip.ts.block_dispatch_cycles=16", "chip.ts.core_start_cycles=24",
                                         "chip.ts.core_done_cycles=10"});
    return overrides;
}

struct Rig : RtRig {
    ClockDomain clock = tiny_info().clock;
    explicit Rig(std::vector<std::string> overrides = {}) : RtRig(with_dispatch(std::move(overrides))) {}
    uint64_t cyc(const char* key) const { return clock.ticks(param(cfg, key)); }
    void run(std::function<void(rt::Context&)> program) { REQUIRE(run_program(std::move(program))); }
};

}  // namespace

TEST_CASE("ts timing: one kernel on an idle chip") {
    Rig r;
    const uint32_t blocks = tiny_info().vector_cores;
    const uint64_t block_cycles = 5000;
    std::shared_ptr<Task> k;
    r.run([&](rt::Context& c) {
        REQUIRE(c.launch(fixed_kernel("k", blocks, block_cycles), rt::kDefaultStream) == Status::Ok);
        REQUIRE(c.stream_synchronize(rt::kDefaultStream) == Status::Ok);
        k = c.tasks()[0].task;
    });
    CHECK(k->issue_tick.v == param(r.cfg, "host.launch_overhead_ns") * 1000);
    CHECK(k->start_tick.v == k->issue_tick.v + r.cyc("chip.ts.doorbell_cycles"));
    // The dispatcher takes dispatch_cycles for the task, then block_dispatch + core_start for
    // each (one-core) block in turn; the last block ends block_cycles after it starts, its report
    // takes core_done (the earlier ones were handled in the meantime: they end further apart).
    REQUIRE(param(r.cfg, "chip.ts.core_done_cycles") <=
            param(r.cfg, "chip.ts.block_dispatch_cycles") + param(r.cfg, "chip.ts.core_start_cycles"));
    CHECK(k->end_tick.v == k->start_tick.v + r.cyc("chip.ts.dispatch_cycles") +
                               blocks * (r.cyc("chip.ts.block_dispatch_cycles") + r.cyc("chip.ts.core_start_cycles")) +
                               r.clock.ticks(block_cycles) + r.cyc("chip.ts.core_done_cycles") +
                               r.cyc("chip.ts.completion_cycles"));
    // Its execution span (Task::cycles) runs from the first block's start to the last block's end:
    // the later blocks' dispatch and the block itself, without the task's dispatch and reports.
    CHECK(k->cycles == (blocks - 1) * (param(r.cfg, "chip.ts.block_dispatch_cycles") + param(r.cfg, "chip.ts.core_start_cycles")) +
                           block_cycles);
}

TEST_CASE("ts timing: an urgent kernel goes before queued low-priority kernels") {
    // No completion latency: the next low kernel reaches its queue head at the very moment the
    // cores free, so only priority decides who gets them.
    Rig r({"chip.ts.completion_cycles=0"});
    const uint32_t all = tiny_info().vector_cores;
    const uint64_t block_cycles = 100000;  // long enough that every launch lands while the first runs
    std::vector<std::shared_ptr<Task>> low;
    std::shared_ptr<Task> urgent;
    r.run([&](rt::Context& c) {
        rt::StreamId lo, hi;
        REQUIRE(c.stream_create(&lo, 5) == Status::Ok);
        REQUIRE(c.stream_create(&hi, 0) == Status::Ok);
        for (int i = 0; i < 3; ++i) REQUIRE(c.launch(fixed_kernel("low", all, block_cycles), lo) == Status::Ok);
        REQUIRE(c.launch(fixed_kernel("urgent", all, block_cycles), hi) == Status::Ok);
        REQUIRE(c.device_synchronize() == Status::Ok);
        for (int i = 0; i < 3; ++i) low.push_back(c.tasks()[static_cast<size_t>(i)].task);
        urgent = c.tasks()[3].task;
    });
    REQUIRE(urgent->issue_tick < low[0]->end_tick);  // submitted while the first low kernel runs
    // Its cores free when the first low kernel's last block is retired (its end minus the
    // completion latency); the scheduler takes the urgent kernel then, before the queued low kernels.
    const uint64_t cores_free = low[0]->end_tick.v - r.cyc("chip.ts.completion_cycles");
    CHECK(urgent->start_tick.v == cores_free);
    CHECK(low[1]->start_tick > urgent->start_tick);
    CHECK(low[1]->start_tick.v >= urgent->end_tick.v - r.cyc("chip.ts.completion_cycles"));
}

TEST_CASE("ts timing: memcpy and event tasks") {
    Rig r;
    const uint64_t bytes = 1 << 20;
    std::shared_ptr<Task> copy, rec;
    r.run([&](rt::Context& c) {
        rt::DevPtr d;
        void* h;
        rt::EventId e;
        REQUIRE(c.malloc(&d, bytes) == Status::Ok);
        REQUIRE(c.host_malloc(&h, bytes, true) == Status::Ok);
        REQUIRE(c.event_create(&e) == Status::Ok);
        REQUIRE(c.memcpy_h2d(d, h, bytes, rt::kDefaultStream, true) == Status::Ok);
        REQUIRE(c.event_record(e, rt::kDefaultStream) == Status::Ok);
        REQUIRE(c.event_synchronize(e) == Status::Ok);
        copy = c.tasks()[0].task;
        rec = c.tasks()[1].task;
    });
    MemcpyDesc m;
    m.bytes = bytes;
    m.pinned = true;
    CHECK(copy->start_tick.v == copy->issue_tick.v + r.cyc("chip.ts.doorbell_cycles"));
    CHECK(copy->end_tick.v == copy->start_tick.v + r.cyc("chip.ts.dispatch_cycles") + r.dev->dma().copy_ps(m) +
                                  r.cyc("chip.ts.completion_cycles"));
    // The record was visible long before: it starts when the copy completes.
    CHECK(rec->start_tick == copy->end_tick);
    CHECK(rec->end_tick.v == rec->start_tick.v + r.cyc("chip.ts.event_cycles"));
}
