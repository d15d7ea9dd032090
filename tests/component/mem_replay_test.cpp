// The memory system's replay of stand-ins' traffic (memory_system_replay.cpp): grouped and applied
// set by set (with the all-miss shortcut) it must give exactly what applying it line by line in
// range order gives (set_replay_per_line, the reference). Each TEST_CASE elaborates two identical
// memory systems, drives identical timed traffic into both (dirty lines, full sets, a pending fill
// or two), replays the same ranges into both, one per path, and compares every counter of the
// memory system and the bytes left dirty.
// One SystemC simulation per TEST_CASE (CTest runs each in its own process).
#include <catch2/catch.hpp>
#include <map>
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

// Every counter of a stat group, by path and name.
struct Counters : StatVisitor {
    std::map<std::string, uint64_t> v;
    void visit(const std::string& path, const Counter& s) override {
        // The two sides' groups are named after their modules: keep what follows the name.
        const size_t at = path.find("mem_by_");
        const std::string p = at == std::string::npos ? path : path.substr(path.find_first_of("./", at) + 1);
        v[p + "." + s.name()] = s.value();
    }
    void visit(const std::string&, const Average&) override {}
    void visit(const std::string&, const Histogram&) override {}
    void visit(const std::string&, const Formula&) override {}
};

std::map<std::string, uint64_t> counters(MemorySystem& m) {
    Counters c;
    m.stats().accept(c);
    return c.v;
}

struct Side {
    StatGroup root{nullptr, ""};
    TraceHub hub;
    std::unique_ptr<MemorySystem> mem;
    std::unique_ptr<TrafficGen> gen;
};

struct Pair {
    Config cfg;
    std::unique_ptr<ChipParams> chip;
    Side by_line, by_set;

    explicit Pair(const std::string& preset) {
        init_time_resolution();
        cfg.load_ini(std::string(SFUMATO_SOURCE_DIR) + "/configs/" + preset + ".ini");
        chip = std::make_unique<ChipParams>(cfg);
        rt::RuntimeParams host(ParamScope(cfg, "host"));
        cfg.check_unused();
        by_line.mem = std::make_unique<MemorySystem>("mem_by_line", chip->mem, &by_line.root, &by_line.hub,
                                                     chip->clock(), chip->mem_ports());
        by_set.mem = std::make_unique<MemorySystem>("mem_by_set", chip->mem, &by_set.root, &by_set.hub,
                                                    chip->clock(), chip->mem_ports());
        by_line.mem->set_replay_per_line(true);
    }
    uint64_t l2_bytes() const { return by_line.mem->l2().size_bytes; }
    // Random copies over twice the L2: dirty lines in full and part-full sets.
    void timed_traffic(uint64_t bytes) {
        TrafficSpec s;
        s.pattern = Pattern::Random;
        s.op = MemOp::Copy;
        s.bytes = bytes;
        s.cores = chip->cube_cores;
        s.request_bytes = by_line.mem->l2().g.sector_bytes * 2;
        s.max_outstanding = by_line.mem->noc().max_outstanding;
        s.footprint = 2 * l2_bytes();
        s.dst_base = 2 * l2_bytes();
        for (Side* side : {&by_line, &by_set})
            side->gen =
                std::make_unique<TrafficGen>(side == &by_line ? "gen_by_line" : "gen_by_set", s, *side->mem);
        sc_core::sc_start();
        REQUIRE(by_line.gen->finished());
        REQUIRE(by_set.gen->finished());
    }
    void replay(const std::vector<GmRange>& r) {
        by_line.mem->replay_traffic(r);
        by_set.mem->replay_traffic(r);
        check_identical();
    }
    void check_identical() {
        const auto a = counters(*by_line.mem), b = counters(*by_set.mem);
        CHECK(a.size() == b.size());
        for (const auto& kv : a) {
            INFO(kv.first);
            CHECK(b.count(kv.first) == 1);
            if (b.count(kv.first)) CHECK(b.at(kv.first) == kv.second);
        }
        uint64_t lines = 0;  // the replay applied lines (the comparison is not vacuous)
        for (const auto& kv : a)
            if (kv.first.find("standin_lines") != std::string::npos) lines += kv.second;
        CHECK(lines > 0);
        CHECK(by_line.mem->unwritten_bytes() == by_set.mem->unwritten_bytes());
    }
};

// Hand-overs as a decode step makes them, sized from the L2: a run of weights longer than the L2
// (only its last L2's worth is applied line by line), activations written and read back, partial
// lines at odd offsets, and a second pass over lines the first left resident (hits).
void replay_like_a_step(Pair& p) {
    const uint64_t l2 = p.l2_bytes();
    const uint64_t line = p.by_line.mem->l2().g.line_bytes;
    const uint64_t sector = p.by_line.mem->l2().g.sector_bytes;
    const uint64_t weights = 4 * l2, act = 6 * l2;
    p.replay({{weights, l2 + l2 / 3, false}, {act, l2 / 8, true}, {act, l2 / 8, false}});
    std::vector<GmRange> parts;
    for (uint64_t i = 0; i < 64; ++i)
        parts.push_back({act + i * 7 * line + sector + 3, 2 * sector, i % 3 == 0});
    p.replay(parts);
    p.replay({{weights + l2 / 2, l2 / 2, false}, {act + l2 / 16, l2 / 16, true}, {weights, l2 / 4, false}});
}

}  // namespace

TEST_CASE("mem replay: 910B-like set by set equals line by line after timed traffic") {
    Pair p("ascend910b-like");
    p.timed_traffic(p.l2_bytes() / 64);
    replay_like_a_step(p);
}

TEST_CASE("mem replay: tiny set by set equals line by line with the L2 full of dirty lines") {
    Pair p("tiny");
    p.timed_traffic(2 * p.l2_bytes());
    CHECK(p.by_line.mem->unwritten_bytes() > 0);
    replay_like_a_step(p);
}
