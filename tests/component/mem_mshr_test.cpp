// L2 MSHR exhaustion: misses that find every MSHR of their slice busy wait in a blocked list and
// retry, one per freed MSHR. A released miss may no longer need an MSHR (its line arrived with
// an earlier fill, or a fill for it is pending): it must hand the MSHR on to the next blocked
// miss, or that miss waits forever once nothing else frees one. This lost hand-over deadlocked
// ResNet-50 on ascend910-like (coupled cores reading small weight and bias rows: every core's
// last MTE2 load waited for one request). One slice with one MSHR makes the case exact.
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

struct Client : IMemClient {
    std::vector<MemRequest> reqs;
    std::vector<uint64_t> done_ps;
    void mem_done(MemRequest& r) override { done_ps[r.tag] = r.done_tick.v; }
};

}  // namespace

TEST_CASE("mem mshr: a blocked miss that hits on release hands its MSHR to the next blocked miss") {
    init_time_resolution();
    Config cfg;
    cfg.load_ini(std::string(SFUMATO_SOURCE_DIR) + "/configs/tiny.ini");
    cfg.apply_override("chip.l2.slices=1");
    cfg.apply_override("chip.l2.mshrs=1");
    ChipParams chip(cfg);
    rt::RuntimeParams host(ParamScope(cfg, "host"));
    cfg.check_unused();
    StatGroup root(nullptr, "");
    TraceHub hub;
    MemorySystem mem("mem", chip.mem, &root, &hub, chip.clock(), chip.mem_ports());
    const uint64_t line = mem.l2().g.line_bytes;
    // A misses line 0 and takes the one MSHR; B and D (both line 1) and E (line 2) block behind
    // it. A's fill releases B (miss: takes the MSHR); B's fill releases D, which now hits; D must
    // release E, whose miss then takes the free MSHR.
    Client c;
    const uint64_t addrs[] = {0, line, line, 2 * line};
    c.reqs.resize(4);
    c.done_ps.assign(4, 0);
    for (size_t i = 0; i < 4; ++i) {
        MemRequest& r = c.reqs[i];
        r.addr = addrs[i];
        r.bytes = 32;
        r.client = &c;
        r.tag = i;
    }
    for (MemRequest& r : c.reqs) mem.submit(r);
    sc_core::sc_start();
    for (size_t i = 0; i < 4; ++i) {
        INFO("request " << i);
        CHECK(c.done_ps[i] > 0);
    }
    // Three distinct lines, fetched one after the other through the one MSHR; D hit B's line.
    CHECK(mem.hbm_totals().reads == 3);
    CHECK(c.done_ps[1] > c.done_ps[0]);
    CHECK(c.done_ps[3] > c.done_ps[1]);
    CHECK(mem.l2_misses() == 4);  // D counted as a miss when it first blocked
}
