// The L2 flush behind `sfumato kernel --l2 cold`: dirty lines are written back to HBM (in
// simulated time, through the write queues) and every line is invalidated, so the next reads
// miss. Expectations from the tiny preset's parameters.
#include <catch2/catch.hpp>

#include "tests/sim_harness.h"

using namespace sfumato;
using namespace sfumato::test;

namespace {
// The L2's count of one requester's misses or hits (the MTEs' data, not the cores' code fetches).
uint64_t mte2_count(mem::MemorySystem& m, const char* what) {
    const auto* c = dynamic_cast<const Counter*>(m.stats().child("l2")->child("mte2")->find(what));
    REQUIRE(c);
    return static_cast<uint64_t>(c->value());
}
}  // namespace

TEST_CASE("mem flush: dirty lines reach HBM, every line is invalidated, later reads miss") {
    Harness h;
    mem::MemorySystem* m = h.chip().memory_system();
    REQUIRE(m);
    const uint32_t bytes = 16 * 1024, line = m->l2().g.line_bytes;
    REQUIRE(bytes <= h.params().core.ub.size);
    const uint64_t gm = 1 << 20;
    auto store_k = Harness::kernel([&](isa::IInstrSink& s) { s.issue(store(gm, 0, bytes)); });
    auto load_k = Harness::kernel([&](isa::IInstrSink& s) { s.issue(load(0, gm, bytes)); });
    uint64_t dirty = 0, written_before = 0, flush_ps = 0, misses_before = 0, hits_before = 0;
    REQUIRE(h.run_host([&] {
        h.submit_and_wait(store_k);
        dirty = m->unwritten_bytes();
        written_before = m->hbm_totals().bytes_written;
        const uint64_t t0 = now_tick().v;
        h.chip().flush_caches();
        flush_ps = now_tick().v - t0;
        misses_before = mte2_count(*m, "misses");
        hits_before = mte2_count(*m, "hits");
        h.submit_and_wait(load_k);
    }));
    // The store left its bytes dirty in the write-back L2 (none had to leave yet).
    CHECK(dirty == bytes);
    CHECK(written_before == 0);
    // The flush wrote exactly them back and took at least their time at the HBM peak.
    CHECK(m->hbm_totals().bytes_written == bytes);
    CHECK(m->unwritten_bytes() == 0);
    CHECK(static_cast<double>(flush_ps) >= bytes * 1000.0 / m->peak_gbps());
    // Everything was invalidated: each line of the reload misses, none hits (the load kernel's
    // code fetch and page-table walk at start-up miss too: they are the core's, not the MTE2's).
    CHECK(mte2_count(*m, "misses") - misses_before == bytes / line);
    CHECK(mte2_count(*m, "hits") == hits_before);
    const auto* fl = dynamic_cast<const Counter*>(m->stats().child("l2")->find("flushes"));
    REQUIRE(fl);
    CHECK(fl->value() == 1);
}

TEST_CASE("mem flush: a chip without a cache (the skeleton memory) flushes as a no-op") {
    Harness h({}, "tiny-simple-mem");
    REQUIRE(h.chip().memory_system() == nullptr);
    uint64_t t0 = 0, t1 = 0;
    REQUIRE(h.run_host([&] {
        t0 = now_tick().v;
        h.chip().flush_caches();
        t1 = now_tick().v;
    }));
    CHECK(t1 == t0);
}
