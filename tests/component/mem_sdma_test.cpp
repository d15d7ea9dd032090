// SDMA engines and the host link: copy times follow the link parameters, pageable memory is
// slower than pinned, device-to-device copies move real data through the memory system.
// One SystemC simulation per TEST_CASE (CTest runs each in its own process).
#include <catch2/catch.hpp>
#include <systemc>

#include "models/chip/chip_params.h"
#include "models/dma/sdma.h"
#include "models/mem/memory_system.h"
#include "runtime/rt/runtime.h"
#include "sim/sc_time_util.h"
#include "sim/sparse_memory.h"

using namespace sfumato;

namespace {

struct Done : IDmaClient {
    std::vector<std::pair<uint64_t, uint64_t>> at;  // (cookie, tick)
    void dma_done(uint64_t cookie) override { at.push_back({cookie, now_tick().v}); }
};

struct Starter : sc_core::sc_module {
    SC_HAS_PROCESS(Starter);
    Starter(sc_core::sc_module_name n, std::function<void()> f) : sc_module(n), m_f(std::move(f)) { SC_METHOD(go); }
    void go() { m_f(); }
    std::function<void()> m_f;
};

struct Rig {
    Config cfg;
    std::unique_ptr<ChipParams> chip;
    StatGroup root{nullptr, ""};
    std::unique_ptr<mem::MemorySystem> mem;
    std::unique_ptr<SparseMemory> gm;
    std::unique_ptr<SdmaEngines> dma;
    Done done;
    Rig() {
        init_time_resolution();
        cfg.load_ini(std::string(SFUMATO_SOURCE_DIR) + "/configs/tiny.ini");
        chip = std::make_unique<ChipParams>(cfg);
        rt::RuntimeParams host(ParamScope(cfg, "host"));
        cfg.check_unused();
        mem = std::make_unique<mem::MemorySystem>("mem", chip->mem, &root, nullptr, chip->clock(), chip->mem_system_ports());
        gm = std::make_unique<SparseMemory>(chip->gm_capacity());
        dma = std::make_unique<SdmaEngines>("sdma", chip->sdma, *mem, chip->mem_ports(), chip->mem.l2.g.line_bytes, gm.get(), root);
    }
};

}  // namespace

TEST_CASE("mem sdma: host-to-device copies take the link time and pageable memory is slower") {
    Rig r;
    const uint64_t bytes = 1 << 20;
    std::vector<uint8_t> src(bytes);
    for (size_t i = 0; i < bytes; ++i) src[i] = static_cast<uint8_t>(i * 7);
    MemcpyDesc pinned;
    pinned.dir = CopyDir::H2D;
    pinned.dev_dst = 0;
    pinned.host_src = src.data();
    pinned.bytes = bytes;
    MemcpyDesc pageable = pinned;
    pageable.pinned = false;
    pageable.dev_dst = 64ull << 20;
    // One copy at a time so the shared link is not split between them.
    Starter s("s", [&] { r.dma->start(pinned, r.done, 1); });
    sc_core::sc_start();
    REQUIRE(r.done.at.size() == 1);
    const uint64_t t_pinned = r.done.at[0].second;
    const double link_ps = bytes * 1000.0 / r.chip->host_link.gbps;
    const double lat_ps = r.chip->host_link.latency_ns * 1000.0;
    CHECK(t_pinned >= link_ps + lat_ps);
    // The copy ends when its last chunk, off the link, is written into L2 (the 1 MiB fits the
    // empty L2: no eviction waits): the NoC latency, the chunk at the port's write rate and the
    // slice's latency. Each chunk's link time is rounded to the ps (at most 1 ps per chunk).
    const auto& m = r.chip->mem;
    const uint64_t chunk = m.l2.g.line_bytes;
    REQUIRE(bytes <= m.l2.size_bytes);
    const uint64_t tail_ps = r.chip->clock().ticks(m.noc.latency + (chunk + m.noc.l2_write_bytes_per_cycle - 1) / m.noc.l2_write_bytes_per_cycle +
                                                   m.l2.hit_latency);
    INFO("pinned copy " << t_pinned << " ps, link " << link_ps << " + latency " << lat_ps << " + tail " << tail_ps);
    CHECK(static_cast<double>(t_pinned) <= link_ps + lat_ps + static_cast<double>(bytes / chunk + tail_ps));
    r.dma->start(pageable, r.done, 2);
    sc_core::sc_start();
    REQUIRE(r.done.at.size() == 2);
    const uint64_t t_pageable = r.done.at[1].second - t_pinned;
    CHECK(t_pageable >= bytes * 1000.0 / r.chip->host_link.pageable_gbps);
    CHECK(t_pageable > t_pinned);
    std::vector<uint8_t> back(bytes);
    r.gm->read(0, back.data(), bytes);
    CHECK(back == src);
}

TEST_CASE("mem sdma: device-to-device copies go through the memory system and move the data") {
    Rig r;
    const uint64_t bytes = 256 << 10;
    std::vector<uint8_t> src(bytes);
    for (size_t i = 0; i < bytes; ++i) src[i] = static_cast<uint8_t>(i * 13 + 1);
    r.gm->write(4096, src.data(), bytes);
    MemcpyDesc d2d;
    d2d.dir = CopyDir::D2D;
    d2d.dev_src = 4096;
    d2d.dev_dst = 32ull << 20;
    d2d.bytes = bytes;
    Starter s("s", [&] { r.dma->start(d2d, r.done, 7); });
    sc_core::sc_start();
    REQUIRE(r.done.at.size() == 1);
    std::vector<uint8_t> back(bytes);
    r.gm->read(32ull << 20, back.data(), bytes);
    CHECK(back == src);
    const auto* sdma = r.mem->stats().child("l2")->child("sdma");
    REQUIRE(sdma);
    CHECK(static_cast<const Counter*>(sdma->find("bytes"))->value() == 2 * bytes);
    // The source comes from HBM (the destination may stay in the write-back L2): never faster
    // than the HBM peak allows.
    CHECK(static_cast<double>(r.done.at[0].second) >= bytes * 1000.0 / mem::hbm_peak_gbps(r.mem->hbm()));
}
