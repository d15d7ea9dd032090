// Runtime API behaviour: errors, host-time costs, memcpy timing, shared memory between contexts.
#include <catch2/catch.hpp>

#include "tests/component/ts_fixture.h"

using namespace sfumato;
using namespace sfumato::test;
using rt::Status;

namespace {

struct Rig : RtRig {
    explicit Rig(double pinned_gbps = 25.0, double pageable_gbps = 10.0) : RtRig({}, pinned_gbps, pageable_gbps) {}
    bool run(std::function<void(rt::Context&)> program) { return run_program(std::move(program)); }
};

}  // namespace

TEST_CASE("rt: misuse is reported as errors") {
    Rig r;
    REQUIRE(r.run([&](rt::Context& c) {
        rt::DevPtr p = 0;
        CHECK(c.malloc(&p, 0) == Status::InvalidValue);
        REQUIRE(c.malloc(&p, 4096) == Status::Ok);
        CHECK(p != 0);
        CHECK(c.free(p + 64) == Status::BadPointer);
        CHECK_THAT(c.last_error(), Catch::Contains("interior"));
        CHECK(c.free(0xdead'0000) == Status::BadPointer);
        REQUIRE(c.free(p) == Status::Ok);
        CHECK(c.free(p) == Status::BadPointer);  // double free
        CHECK_THAT(c.last_error(), Catch::Contains("double free"));

        rt::StreamId s;
        REQUIRE(c.stream_create(&s, 1) == Status::Ok);
        REQUIRE(c.stream_destroy(s) == Status::Ok);
        CHECK(c.launch(fixed_kernel("k", 1, 10), s) == Status::InvalidStream);
        CHECK(c.stream_synchronize(s) == Status::InvalidStream);
        CHECK(c.stream_destroy(s) == Status::InvalidStream);
        CHECK(c.stream_destroy(rt::kDefaultStream) == Status::InvalidStream);
        CHECK(c.launch(fixed_kernel("k", 0, 10), rt::kDefaultStream) == Status::InvalidValue);
        CHECK_THAT(c.last_error(), Catch::Contains("block_dim 0"));

        rt::DevPtr d;
        REQUIRE(c.malloc(&d, 1024) == Status::Ok);
        void* h;
        REQUIRE(c.host_malloc(&h, 4096, true) == Status::Ok);
        CHECK(c.memcpy_h2d(d, h, 4096) == Status::BadPointer);  // overruns the 1 KiB block
        CHECK(c.memcpy_d2h(h, d + (1 << 20), 16) == Status::BadPointer);
        CHECK(c.memcpy_h2d(d, h, 1024) == Status::Ok);
        CHECK(c.host_free(h) == Status::Ok);
        CHECK(c.host_free(h) == Status::BadPointer);

        rt::EventId e;
        REQUIRE(c.event_create(&e) == Status::Ok);
        uint64_t ps;
        CHECK(c.event_elapsed(&ps, e, e) == Status::InvalidEvent);  // never recorded
        REQUIRE(c.event_destroy(e) == Status::Ok);
        CHECK(c.event_record(e, rt::kDefaultStream) == Status::InvalidEvent);
        CHECK(c.import_handle(12345, &d) == Status::InvalidHandle);
    }));
}

TEST_CASE("rt: 1000 back-to-back tiny kernels take at least 1000 launch overheads") {
    Rig r;
    uint64_t elapsed = 0;
    REQUIRE(r.run([&](rt::Context& c) {
        const uint64_t t0 = now_tick().v;
        for (int i = 0; i < 1000; ++i) REQUIRE(c.launch(fixed_kernel("tiny", 1, 1), rt::kDefaultStream) == Status::Ok);
        REQUIRE(c.stream_synchronize(rt::kDefaultStream) == Status::Ok);
        elapsed = now_tick().v - t0;
    }));
    const uint64_t launch_ps = param(r.cfg, "host.launch_overhead_ns") * 1000;
    CHECK(elapsed >= 1000 * launch_ps);
    CHECK(r.rtdev->contexts()[0]->tasks().size() == 1000);
}

TEST_CASE("rt: memcpy of 256 MiB: pinned at the link rate and pageable slower") {
    const double pinned_gbps = 25.0, pageable_gbps = 8.0;
    Rig r(pinned_gbps, pageable_gbps);
    const uint64_t bytes = 256ull << 20;
    uint64_t pinned_ps = 0, pageable_ps = 0, event_ps = 0;
    REQUIRE(r.run([&](rt::Context& c) {
        rt::DevPtr d;
        REQUIRE(c.malloc(&d, bytes) == Status::Ok);
        void *hp, *hq;
        REQUIRE(c.host_malloc(&hp, bytes, true) == Status::Ok);
        REQUIRE(c.host_malloc(&hq, bytes, false) == Status::Ok);
        rt::EventId e0, e1;
        REQUIRE(c.event_create(&e0) == Status::Ok);
        REQUIRE(c.event_create(&e1) == Status::Ok);
        uint64_t t0 = now_tick().v;
        REQUIRE(c.event_record(e0, rt::kDefaultStream) == Status::Ok);
        REQUIRE(c.memcpy_h2d(d, hp, bytes, rt::kDefaultStream, true) == Status::Ok);
        REQUIRE(c.event_record(e1, rt::kDefaultStream) == Status::Ok);
        REQUIRE(c.event_synchronize(e1) == Status::Ok);
        pinned_ps = now_tick().v - t0;
        REQUIRE(c.event_elapsed(&event_ps, e0, e1) == Status::Ok);
        t0 = now_tick().v;
        REQUIRE(c.memcpy_h2d(d, hq, bytes) == Status::Ok);
        pageable_ps = now_tick().v - t0;
    }));
    // What the link parameters imply: bytes / bandwidth.
    const double ideal_ps = static_cast<double>(bytes) * 1000.0 / pinned_gbps;
    CHECK(static_cast<double>(pinned_ps) == Approx(ideal_ps).epsilon(0.05));
    CHECK(static_cast<double>(event_ps) == Approx(ideal_ps).epsilon(0.05));
    CHECK(static_cast<double>(pageable_ps) == Approx(ideal_ps * pinned_gbps / pageable_gbps).epsilon(0.05));
}

TEST_CASE("rt: weights shared between two contexts are held once") {
    Rig r;
    const uint64_t weights = 64ull << 20;
    rt::Context& owner = r.rtdev->open_context();
    rt::Context& user = r.rtdev->open_context();
    bool done = false;
    Host host("host", [&] {
        rt::DevPtr w, mine;
        uint64_t handle;
        REQUIRE(owner.malloc(&w, weights) == Status::Ok);
        const uint64_t physical_one = r.rtdev->physical_bytes();
        REQUIRE(owner.export_handle(w, &handle) == Status::Ok);
        REQUIRE(user.import_handle(handle, &mine) == Status::Ok);
        CHECK(mine == w);
        CHECK(r.rtdev->physical_bytes() == physical_one);  // no second copy
        CHECK(user.imported_bytes() == owner.memory_stats().in_use);
        CHECK(r.rtdev->shares().saved_bytes() == owner.memory_stats().in_use);
        const auto* saved = dynamic_cast<const Formula*>(r.rtdev->stats().find("shared_saved_bytes"));
        REQUIRE(saved);
        CHECK(saved->value() == static_cast<double>(owner.memory_stats().in_use));
        // Without sharing, the importer would hold its own copy: physical would double.
        CHECK(r.rtdev->physical_bytes() + r.rtdev->shares().saved_bytes() >= 2 * weights);
        // The importer uses it (a device-to-device copy into its own buffer).
        rt::DevPtr act;
        REQUIRE(user.malloc(&act, 4096) == Status::Ok);
        CHECK(user.memcpy_d2d(act, mine, 4096) == Status::Ok);
        // The owner frees: the block lives on while imported, then goes with the last close.
        REQUIRE(owner.free(w) == Status::Ok);
        CHECK(owner.free(w) == Status::DoubleFree);
        CHECK(user.memcpy_d2d(act, mine, 4096) == Status::Ok);
        REQUIRE(user.free(mine) == Status::Ok);
        CHECK(owner.memory_stats().in_use == 0);
        CHECK(r.rtdev->shares().live_handles() == 0);
        CHECK(user.memcpy_d2d(act, mine, 4096) == Status::BadPointer);
        done = true;
    });
    sc_core::sc_start();
    CHECK(done);
}

// Context::memcpy_peer_batch (one host call, a peer copy per segment; the disaggregated KV
// transfers use it) checks its stream, its peer and every segment before posting any copy: a bad
// call posts nothing and names the segment. The peer here is a second runtime device over the
// same test chip (its own allocations); these calls never reach the links.
TEST_CASE("rt: memcpy_peer_batch checks every segment before posting any") {
    Rig r;
    rt::Device peer(*r.dev, r.dev->host_params());
    rt::Context& there = peer.open_context();
    REQUIRE(r.run([&](rt::Context& c) {
        rt::DevPtr src = 0, dst = 0, local = 0;
        REQUIRE(c.malloc(&src, 8192) == Status::Ok);
        REQUIRE(c.malloc(&local, 8192) == Status::Ok);
        REQUIRE(there.malloc(&dst, 8192) == Status::Ok);
        using Seg = rt::Context::PeerSegment;
        const size_t posted = c.tasks().size();
        struct Bad {
            std::vector<Seg> segs;
            rt::StreamId stream;
            bool self;
            Status status;
            const char* says;
        } cases[] = {
            {{}, rt::kDefaultStream, false, Status::InvalidValue, "no segment"},
            {{{dst, src, 64}}, 977, false, Status::InvalidStream, "stream 977 is not live"},
            {{{local, src, 64}}, rt::kDefaultStream, true, Status::InvalidValue, "the peer is this device"},
            {{{dst, src, 64}, {dst + 64, src + 64, 0}},
             rt::kDefaultStream,
             false,
             Status::InvalidValue,
             "segment 1: 0 bytes"},
            // Past the end of the source block.
            {{{dst, src, 64}, {dst + 64, src + 8192 - 32, 64}},
             rt::kDefaultStream,
             false,
             Status::BadPointer,
             "segment 1: source"},
            // A size that wraps the address space around (src + bytes < src).
            {{{dst, src + 64, ~uint64_t{0} - 32}},
             rt::kDefaultStream,
             false,
             Status::BadPointer,
             "segment 0: source"},
            // A destination this device holds but the peer does not; one past the peer's block.
            {{{local, src, 64}}, rt::kDefaultStream, false, Status::BadPointer, "segment 0: destination"},
            {{{dst, src, 64}, {dst + 8192 - 63, src, 64}},
             rt::kDefaultStream,
             false,
             Status::BadPointer,
             "segment 1: destination"},
        };
        for (const Bad& b : cases) {
            INFO(b.says);
            CHECK(c.memcpy_peer_batch(b.self ? *r.rtdev : peer, b.segs, b.stream) == b.status);
            CHECK_THAT(c.last_error(), Catch::Contains(b.says));
            CHECK(c.tasks().size() == posted);  // nothing half-posted
        }
    }));
}
