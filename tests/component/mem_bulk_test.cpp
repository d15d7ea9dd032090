// The bulk memory service (chip.mem.service = bulk, models/mem/memory_system_bulk.cpp) against
// the exact one: the same traffic through one memory system of each, side by side in one
// simulation (tiny preset, small footprints). The bound on the bandwidth error is the one
// docs/speed.md states ("Bulk memory mode"); the L2 and HBM byte counts, which follow from the
// tag state alone, must agree exactly; two bulk runs must agree to the tick; and the bulk
// service must not beat the HBM's peak. A client's bursts (sim/mem_if.h) are served as its
// requests one by one would be.
#include <catch2/catch.hpp>
#include <cmath>
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

// docs/speed.md, "Bulk memory mode": bulk bandwidth within this fraction of exact on membench
// patterns (sequential, strided and random reads, writes and copies).
constexpr double kBulkBound = 0.15;

struct Side {
    Config cfg;
    std::unique_ptr<ChipParams> chip;
    StatGroup root{nullptr, ""};
    std::unique_ptr<MemorySystem> mem;
    std::unique_ptr<TrafficGen> gen;
    Side(const std::string& name, const char* service, Pattern p, MemOp op, uint64_t bytes, uint32_t cores = 0,
         bool bursts = true) {
        cfg.load_ini(std::string(SFUMATO_SOURCE_DIR) + "/configs/tiny.ini");
        cfg.set_raw("chip.mem.service", service, "test");
        chip = std::make_unique<ChipParams>(cfg);
        rt::RuntimeParams host(ParamScope(cfg, "host"));
        cfg.check_unused();
        mem = std::make_unique<MemorySystem>(("mem_" + name).c_str(), chip->mem, &root, nullptr, chip->clock(),
                                             chip->mem_ports());
        TrafficSpec s;
        s.pattern = p;
        s.op = op;
        s.bytes = bytes;
        s.cores = cores ? cores : chip->cube_cores;
        s.bursts = bursts;
        s.request_bytes = p == Pattern::Random ? 64 : mem->l2().g.line_bytes;
        s.stride = 4096;
        s.max_outstanding = mem->noc().max_outstanding;
        s.footprint = mem->hbm().capacity_bytes / 2;
        s.dst_base = mem->hbm().capacity_bytes / 2;
        gen = std::make_unique<TrafficGen>(("gen_" + name).c_str(), s, *mem);
        mem->set_runahead_client(gen.get());
    }
    // Bytes the client moved per ns (membench's accepted_gbps).
    double gbps() const {
        return static_cast<double>(gen->bytes_moved()) / (static_cast<double>(gen->end_tick().v) / 1000.0);
    }
};

}  // namespace

TEST_CASE("mem bulk: bandwidth within the stated bound of exact, same L2 and HBM traffic, deterministic, under the peak") {
    init_time_resolution();
    struct Case {
        const char* name;
        Pattern p;
        MemOp op;
    };
    const Case cases[] = {{"seq_read", Pattern::Seq, MemOp::Read},       {"random_read", Pattern::Random, MemOp::Read},
                          {"stride_read", Pattern::Stride, MemOp::Read}, {"seq_copy", Pattern::Seq, MemOp::Copy},
                          {"random_copy", Pattern::Random, MemOp::Copy}};
    // Past the tiny L2 (so that copies write back to HBM), still a few ms of CPU per side.
    std::vector<std::unique_ptr<Side>> exact, bulk, again;
    for (const Case& c : cases) {
        exact.push_back(std::make_unique<Side>(std::string(c.name) + "_e", "exact", c.p, c.op, 2u << 20));
        bulk.push_back(std::make_unique<Side>(std::string(c.name) + "_b", "bulk", c.p, c.op, 2u << 20));
        again.push_back(std::make_unique<Side>(std::string(c.name) + "_b2", "bulk", c.p, c.op, 2u << 20));
    }
    CHECK(!exact[0]->mem->bulk());
    CHECK(bulk[0]->mem->bulk());
    sc_core::sc_start();
    for (size_t i = 0; i < std::size(cases); ++i) {
        INFO(cases[i].name);
        const Side& e = *exact[i];
        const Side& b = *bulk[i];
        REQUIRE(e.gen->finished());
        REQUIRE(b.gen->finished());
        REQUIRE(again[i]->gen->finished());
        // Hits and misses come from the tag state, looked up line by line in both; only the
        // order of the lines in flight together differs (acceptance against arrival), which
        // moves a random pattern's counts by a few lines (the stated bound: 0.1 % of accesses).
        const uint64_t accesses = e.mem->l2_hits() + e.mem->l2_misses();
        CHECK(b.mem->l2_hits() + b.mem->l2_misses() == accesses);
        const uint64_t d_hits = b.mem->l2_hits() > e.mem->l2_hits() ? b.mem->l2_hits() - e.mem->l2_hits()
                                                                    : e.mem->l2_hits() - b.mem->l2_hits();
        if (cases[i].p == Pattern::Random) {
            CHECK(d_hits * 1000 <= accesses);
        } else {
            CHECK(d_hits == 0);
            CHECK(b.mem->hbm_totals().bytes_read == e.mem->hbm_totals().bytes_read);
        }
        // Same inputs, same cycles.
        CHECK(again[i]->gen->end_tick() == b.gen->end_tick());
        CHECK(again[i]->mem->hbm_totals().row_hits == b.mem->hbm_totals().row_hits);
        const double ge = e.gbps(), gb = b.gbps();
        INFO("exact " << ge << " GB/s, bulk " << gb << " GB/s");
        CHECK(std::abs(gb / ge - 1.0) <= kBulkBound);
        // Reads all come from the HBM (the footprint is cold): no faster than its peak.
        if (cases[i].op == MemOp::Read) CHECK(gb <= b.mem->peak_gbps());
    }
}

TEST_CASE("mem bulk: one client's bursts are served as its requests one by one, with one completion per burst") {
    init_time_resolution();
    struct Case {
        const char* name;
        Pattern p;
        MemOp op;
        uint64_t bytes;
    };
    // One core: the bursts' requests meet the ports, slices, tags and channels in the same order as the
    // requests one by one (no other client interleaves). The write fits in the L2 (no write-backs).
    const Case cases[] = {{"seq_read", Pattern::Seq, MemOp::Read, 1u << 20},
                          {"random_read", Pattern::Random, MemOp::Read, 256u << 10},
                          {"stride_read", Pattern::Stride, MemOp::Read, 256u << 10},
                          {"seq_write", Pattern::Seq, MemOp::Write, 64u << 10}};
    std::vector<std::unique_ptr<Side>> one, burst;
    for (const Case& c : cases) {
        one.push_back(std::make_unique<Side>(std::string(c.name) + "_1", "bulk", c.p, c.op, c.bytes, 1, false));
        burst.push_back(std::make_unique<Side>(std::string(c.name) + "_n", "bulk", c.p, c.op, c.bytes, 1, true));
    }
    sc_core::sc_start();
    for (size_t i = 0; i < std::size(cases); ++i) {
        INFO(cases[i].name);
        const Side& a = *one[i];
        const Side& b = *burst[i];
        REQUIRE(a.gen->finished());
        REQUIRE(b.gen->finished());
        CHECK(b.gen->bytes_moved() == a.gen->bytes_moved());
        CHECK(b.gen->end_tick() == a.gen->end_tick());
        CHECK(b.mem->l2_hits() == a.mem->l2_hits());
        CHECK(b.mem->l2_misses() == a.mem->l2_misses());
        CHECK(b.mem->hbm_totals().row_hits == a.mem->hbm_totals().row_hits);
        CHECK(b.mem->hbm_totals().bytes_read == a.mem->hbm_totals().bytes_read);
        CHECK(b.mem->read_latency().samples() == a.mem->read_latency().samples());
        CHECK(b.mem->read_latency().buckets() == a.mem->read_latency().buckets());
        // The same samples summed in another order (completion against issue order).
        CHECK(b.mem->read_latency().mean() == Approx(a.mem->read_latency().mean()).epsilon(1e-12));
        // One completion per burst of max_outstanding requests, against one per request.
        const uint64_t requests = cases[i].bytes / (cases[i].p == Pattern::Random ? 64 : a.mem->l2().g.line_bytes);
        const uint64_t k = a.mem->noc().max_outstanding;
        CHECK(a.gen->completions() == requests);
        CHECK(b.gen->completions() == (requests + k - 1) / k);
    }
}
