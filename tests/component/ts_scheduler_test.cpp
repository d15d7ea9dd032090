// Task scheduler behaviour through the runtime, on cores with fixed block times.
#include <catch2/catch.hpp>

#include "tests/component/ts_fixture.h"

using namespace sfumato;
using namespace sfumato::test;
using rt::Status;

namespace {

struct Rig : RtRig {
    void run(std::function<void(rt::Context&)> program) { REQUIRE(run_program(std::move(program))); }
    uint64_t dur(const Task& t) const { return t.end_tick.v - t.start_tick.v; }
};

}  // namespace

TEST_CASE("ts: two half-chip kernels on two streams overlap") {
    Rig r;
    const uint32_t half = tiny_info().vector_cores / 2;
    std::shared_ptr<Task> a, b;
    r.run([&](rt::Context& c) {
        rt::StreamId s1, s2;
        REQUIRE(c.stream_create(&s1, 0) == Status::Ok);
        REQUIRE(c.stream_create(&s2, 0) == Status::Ok);
        REQUIRE(c.launch(fixed_kernel("a", half, 100000), s1) == Status::Ok);
        REQUIRE(c.launch(fixed_kernel("b", half, 100000), s2) == Status::Ok);
        REQUIRE(c.device_synchronize() == Status::Ok);
        a = c.tasks()[0].task;
        b = c.tasks()[1].task;
    });
    const uint64_t e2e = std::max(a->end_tick, b->end_tick).v - std::min(a->start_tick, b->start_tick).v;
    // Overlapped, b runs one launch overhead behind a (the host's second launch), so both end
    // within the longer one plus that offset; serialised they would take the sum.
    const uint64_t launch_ps = param(r.cfg, "host.launch_overhead_ns") * 1000;
    REQUIRE(launch_ps < std::min(r.dur(*a), r.dur(*b)));
    CHECK(e2e <= std::max(r.dur(*a), r.dur(*b)) + launch_ps);
    CHECK(b->start_tick < a->end_tick);
}

TEST_CASE("ts: two full-chip kernels on two streams serialise") {
    Rig r;
    const uint32_t all = tiny_info().vector_cores;
    std::shared_ptr<Task> a, b;
    r.run([&](rt::Context& c) {
        rt::StreamId s1, s2;
        REQUIRE(c.stream_create(&s1, 0) == Status::Ok);
        REQUIRE(c.stream_create(&s2, 0) == Status::Ok);
        REQUIRE(c.launch(fixed_kernel("a", all, 100000), s1) == Status::Ok);
        REQUIRE(c.launch(fixed_kernel("b", all, 100000), s2) == Status::Ok);
        REQUIRE(c.device_synchronize() == Status::Ok);
        a = c.tasks()[0].task;
        b = c.tasks()[1].task;
    });
    const uint64_t e2e = std::max(a->end_tick, b->end_tick).v - std::min(a->start_tick, b->start_tick).v;
    // b is taken only once a's blocks ended (a's end minus its completion latency).
    const uint64_t completion_ps = tiny_info().clock.ticks(param(r.cfg, "chip.ts.completion_cycles"));
    CHECK(b->start_tick.v >= a->end_tick.v - completion_ps);
    CHECK(e2e >= r.dur(*a) + r.dur(*b) - completion_ps);
}

TEST_CASE("ts: more blocks than cores run in waves") {
    Rig r;
    const uint32_t cores = tiny_info().vector_cores;
    const uint64_t block = 50000;
    std::shared_ptr<Task> k;
    r.run([&](rt::Context& c) {
        REQUIRE(c.launch(fixed_kernel("waves", 3 * cores, block), rt::kDefaultStream) == Status::Ok);
        REQUIRE(c.stream_synchronize(rt::kDefaultStream) == Status::Ok);
        k = c.tasks()[0].task;
    });
    // Three waves of `block` cycles each, plus dispatch gaps: at least 3 blocks long, well under 4.
    const uint64_t cycles = tiny_info().clock.cycles_in(r.dur(*k));
    CHECK(cycles >= 3 * block);
    CHECK(cycles < 4 * block);
    const auto* occ = r.dev->ts().stats().find("aiv0_occupancy");
    REQUIRE(occ);
    CHECK(r.dev->ts().core_busy_cycles(false, 0) == 3 * block);
}

TEST_CASE("ts: a stream waiting on an event starts after the recorded task ends") {
    Rig r;
    std::shared_ptr<Task> a, b;
    r.run([&](rt::Context& c) {
        rt::StreamId s1, s2;
        rt::EventId e;
        REQUIRE(c.stream_create(&s1, 0) == Status::Ok);
        REQUIRE(c.stream_create(&s2, 0) == Status::Ok);
        REQUIRE(c.event_create(&e) == Status::Ok);
        REQUIRE(c.launch(fixed_kernel("a", 1, 200000), s1) == Status::Ok);
        REQUIRE(c.event_record(e, s1) == Status::Ok);
        REQUIRE(c.stream_wait_event(s2, e) == Status::Ok);
        REQUIRE(c.launch(fixed_kernel("b", 1, 1000), s2) == Status::Ok);
        REQUIRE(c.event_query(e) == Status::NotReady);
        REQUIRE(c.device_synchronize() == Status::Ok);
        REQUIRE(c.event_query(e) == Status::Ok);
        a = c.tasks()[0].task;
        b = c.tasks()[3].task;
    });
    CHECK(b->start_tick >= a->end_tick);
}

TEST_CASE("ts: a wait on an event never recorded is reported instead of hanging") {
    init_time_resolution();
    Config cfg;
    TestDevice dev(cfg);
    Host host("host", [&] {
        const uint32_t q = dev.open_queue(0);
        auto t = std::make_shared<Task>();
        t->kind = TaskKind::EventWait;
        t->event = dev.create_event();
        t->event_seq = 1;  // a record that never comes
        t->id = 7;
        dev.submit(q, t);
        sc_core::wait(t->done_event);
    });
    sc_core::sc_start();
    CHECK_FALSE(host.finished);
    REQUIRE(dev.ts().pending_tasks() == 1);
    const auto report = dev.ts().pending_report();
    REQUIRE(report.size() == 1);
    CHECK_THAT(report[0], Catch::Contains("task 7 (wait) waits on event slot 0 record #1"));
}

TEST_CASE("ts: host callbacks run in stream order") {
    Rig r;
    std::vector<int> order;
    r.run([&](rt::Context& c) {
        REQUIRE(c.launch(fixed_kernel("a", 1, 1000000), rt::kDefaultStream) == Status::Ok);
        REQUIRE(c.launch_host_func(rt::kDefaultStream, [&] { order.push_back(1); }) == Status::Ok);
        REQUIRE(c.launch(fixed_kernel("b", 1, 1000), rt::kDefaultStream) == Status::Ok);
        REQUIRE(c.launch_host_func(rt::kDefaultStream, [&] { order.push_back(2); }) == Status::Ok);
        CHECK(order.empty());
        REQUIRE(c.stream_synchronize(rt::kDefaultStream) == Status::Ok);
    });
    CHECK(order == std::vector<int>{1, 2});
    CHECK(r.dev->ts().stats().find("tasks") != nullptr);
}
