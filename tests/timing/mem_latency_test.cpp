// Memory-system latencies through NoC, L2 and HBM, derived from the tiny preset's parameters.
// One SystemC simulation per TEST_CASE (CTest runs each in its own process).
#include <algorithm>
#include <catch2/catch.hpp>
#include <systemc>

#include "models/chip/chip_params.h"
#include "models/mem/memory_system.h"
#include "runtime/rt/runtime.h"
#include "sim/config.h"
#include "sim/sc_time_util.h"

using namespace sfumato;
using namespace sfumato::mem;

namespace {

struct Probe : IMemClient {
    std::vector<std::pair<uint64_t, uint64_t>> done;  // (addr, latency ps)
    void mem_done(MemRequest& r) override { done.push_back({r.addr, r.done_tick.v - r.issue_tick.v}); }
};

// Issues one request at a given time from an SC_METHOD.
struct Driver : sc_core::sc_module {
    SC_HAS_PROCESS(Driver);
    Driver(sc_core::sc_module_name n, IMemTarget& t, Probe& p) : sc_module(n), m_t(t), m_p(p) {
        SC_METHOD(step);
        sensitive << m_ev;
        dont_initialize();
    }
    void at(uint64_t tick, uint64_t addr, uint32_t bytes) { m_plan.push_back({tick, addr, bytes}); }
    void start_of_simulation() override {
        m_reqs.resize(m_plan.size());
        if (!m_plan.empty()) m_ev.notify(to_sc_time(Tick(m_plan[0].tick)));
    }
    void step() {
        const auto& p = m_plan[m_i];
        MemRequest& r = m_reqs[m_i];
        r.addr = p.addr;
        r.bytes = p.bytes;
        r.client = &m_p;
        r.issue_tick = now_tick();
        m_t.submit(r);
        if (++m_i < m_plan.size()) m_ev.notify(to_sc_time(Tick(m_plan[m_i].tick - now_tick().v)));
    }
    struct Plan {
        uint64_t tick, addr;
        uint32_t bytes;
    };
    IMemTarget& m_t;
    Probe& m_p;
    std::vector<Plan> m_plan;
    std::vector<MemRequest> m_reqs;
    size_t m_i = 0;
    sc_core::sc_event m_ev;
};

struct Bench {
    Config cfg;
    std::unique_ptr<ChipParams> chip;
    StatGroup root{nullptr, ""};
    ClockDomain clk;
    std::unique_ptr<MemorySystem> mem;
    std::unique_ptr<IAddressMap> map;
    Probe probe;
    std::unique_ptr<Driver> drv;
    Bench() {
        init_time_resolution();
        cfg.load_ini(std::string(SFUMATO_SOURCE_DIR) + "/configs/tiny.ini");
        cfg.set_raw("chip.hbm.tREFI", "0", "test");  // no refresh window in the way
        cfg.set_raw("chip.hbm.address_map", "bitfield", "test");  // rows above banks, no XOR
        chip = std::make_unique<ChipParams>(cfg);
        rt::RuntimeParams host(ParamScope(cfg, "host"));
        cfg.check_unused();
        clk = chip->clock();
        mem = std::make_unique<MemorySystem>("mem", chip->mem, &root, nullptr, clk, chip->mem_ports());
        map = make_address_map(mem->hbm(), "chip.hbm.address_map");
        drv = std::make_unique<Driver>("drv", *mem, probe);
    }
    // An address with the given coordinates in pseudo-channel 0.
    uint64_t addr(uint32_t bg, uint32_t bank, uint64_t row, uint32_t col) {
        const auto& p = mem->hbm();
        for (uint64_t a = 0; a < uint64_t(p.total_pcs()) * p.banks() * p.row_bytes; a += p.burst_bytes()) {
            DramAddr d = map->decode(a);
            if (d.pc == 0 && d.bg == bg && d.bank == bank && d.col == col && d.row == 0)
                return a + row * (uint64_t(p.total_pcs()) * p.banks() * p.row_bytes);
        }
        FAIL("no such address");
        return 0;
    }
    uint64_t ck(uint64_t c) const { return c * mem->hbm().t.tck_ps; }
    uint64_t cyc(uint64_t c) const { return clk.ticks(c); }
    // Latency outside the DRAM core for a miss of `bytes` that arrives at an idle slice.
    uint64_t path(uint32_t bytes) const {
        const auto& n = mem->noc();
        const auto& l2 = mem->l2();
        const uint64_t tck = mem->hbm().t.tck_ps;
        const uint64_t arrive = cyc(n.latency);
        const uint64_t aligned = (arrive + tck - 1) / tck * tck;  // the controller acts on tCK edges
        const uint64_t frontend =
            static_cast<uint64_t>(std::stod(cfg.effective().at("chip.hbm.frontend_latency_ns")) * 1000.0);
        return aligned + frontend + cyc(l2.hit_latency) +
               cyc((bytes + n.gm_bytes_per_cycle - 1) / n.gm_bytes_per_cycle);
    }
};

}  // namespace

TEST_CASE("mem timing: closed bank and row hit and row conflict through the whole memory system") {
    Bench b;
    const auto& t = b.mem->hbm().t;
    const uint32_t sector = b.mem->l2().g.sector_bytes;
    const uint64_t gap = 1000000;  // 1 us: every constraint has expired between requests
    const uint64_t a0 = b.addr(0, 0, 1, 0);
    const uint64_t a1 = b.addr(0, 0, 1, 8);   // same row, another L2 line
    const uint64_t a2 = b.addr(0, 0, 2, 0);   // same bank, another row
    b.drv->at(0, a0, sector);
    b.drv->at(gap, a1, sector);
    b.drv->at(2 * gap, a2, sector);
    sc_core::sc_start();
    REQUIRE(b.probe.done.size() == 3);
    CHECK(b.probe.done[0].second == b.path(sector) + b.ck(t.rcd + t.cl + t.bl));
    CHECK(b.probe.done[1].second == b.path(sector) + b.ck(t.cl + t.bl));
    CHECK(b.probe.done[2].second == b.path(sector) + b.ck(t.rp + t.rcd + t.cl + t.bl));
}

TEST_CASE("mem timing: an L2 hit costs the NoC and the slice's hit latency") {
    Bench b;
    const uint32_t sector = b.mem->l2().g.sector_bytes;
    const uint64_t a = b.addr(1, 1, 3, 0);
    b.drv->at(0, a, sector);
    b.drv->at(1000000, a, sector);
    sc_core::sc_start();
    REQUIRE(b.probe.done.size() == 2);
    CHECK(b.probe.done[1].second == b.cyc(b.mem->noc().latency) + b.cyc(b.mem->l2().hit_latency));
    CHECK(b.mem->l2_hits() == 1);
    CHECK(b.mem->l2_misses() == 1);
}

TEST_CASE("mem timing: a second miss to a line in flight merges into its MSHR") {
    Bench b;
    const uint32_t sector = b.mem->l2().g.sector_bytes;
    const uint64_t a = b.addr(2, 0, 4, 0);
    b.drv->at(0, a, sector);
    b.drv->at(b.cyc(1), a, sector);  // arrives while the first fill is outstanding
    sc_core::sc_start();
    REQUIRE(b.probe.done.size() == 2);
    const auto* st = b.mem->stats().child("l2")->child("mte2");
    REQUIRE(st);
    CHECK(static_cast<const Counter*>(st->find("mshr_merges"))->value() == 1);
    CHECK(b.mem->hbm_totals().reads == 1);
    // Only the request that brought the line from HBM takes the core's miss path (the GM port);
    // the merged one is served from the slice as a hit when the fill lands, so it completes
    // before the first (which it followed by one cycle) by the first's GM-port serialisation.
    const uint32_t gm = b.mem->noc().gm_bytes_per_cycle;
    const uint64_t first = std::max(b.probe.done[0].second, b.probe.done[1].second);
    const uint64_t merged = std::min(b.probe.done[0].second, b.probe.done[1].second);
    CHECK(merged + b.cyc(1) + b.cyc((sector + gm - 1) / gm) == first);
}
