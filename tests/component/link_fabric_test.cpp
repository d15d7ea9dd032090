// The link fabric (models/link/fabric.h) on its own, with memories that answer at once: one peer
// copy takes the serialisation of its packets at the wire bandwidth plus the latencies, counters
// add up, and two copies that share a link share it fairly (they finish together, at twice the
// time one alone would take on that link), never faster than the link's bandwidth.
#include <catch2/catch.hpp>
#include <memory>
#include <systemc>

#include "models/link/fabric.h"
#include "sim/config.h"
#include "sim/failure.h"
#include "sim/host_thread.h"
#include "sim/sc_time_util.h"

using namespace sfumato;

namespace {

// Memory that completes every access at the time it is submitted.
class InstantMem : public IMemTarget {
public:
    void submit(MemRequest& r) override {
        r.done_tick = now_tick();
        r.client->mem_done(r);
    }
};

class NullNotify : public INotifySink {
public:
    void notify_arrived(uint32_t) override {}
};

class Done : public IDmaClient {
public:
    void dma_done(uint64_t cookie) override {
        at[cookie] = now_tick().v;
        ev.notify(sc_core::SC_ZERO_TIME);
    }
    uint64_t at[4] = {0, 0, 0, 0};
    sc_core::sc_event ev;
};

constexpr uint32_t kLine = 512, kPacket = 256, kHeader = 16;
constexpr double kGbps = 2.0, kLatencyNs = 100.0;

struct Rig {
    Config cfg;
    std::unique_ptr<SystemParams> sp;
    StatGroup root{nullptr, ""};
    std::unique_ptr<Fabric> fabric;
    InstantMem mem[3];
    NullNotify notify;
    Done done;
    Rig() {
        for (const char* s : {"system.chips_per_server=3", "system.topology=custom", "system.links=0-1,1-2",
                              "system.nic.per_chip=0", "system.link.gbps=2", "system.link.latency_ns=100",
                              "system.link.packet_bytes=256", "system.link.header_bytes=16",
                              "system.peer_dma.window_bytes=1MiB"})
            cfg.apply_override(s);
        sp = std::make_unique<SystemParams>(cfg);
        cfg.check_unused();
        init_time_resolution();
        fabric = std::make_unique<Fabric>("links", *sp, build_topology(*sp), root, nullptr);
        for (uint32_t c = 0; c < 3; ++c) fabric->attach(c, mem[c], 0, 1, kLine, nullptr, notify);
    }
    uint32_t channel(const std::string& name) const {
        const auto& ch = fabric->topology().channels;
        for (uint32_t i = 0; i < ch.size(); ++i)
            if (ch[i].name == name) return i;
        FAIL("no channel " << name);
        return 0;
    }
    // Starts copies (src chip -> dst chip, bytes) at time 0 and runs until all are done.
    void run(const std::vector<std::tuple<uint32_t, uint32_t, uint64_t>>& copies) {
        HostThread host("host", [&] {
            for (size_t i = 0; i < copies.size(); ++i) {
                MemcpyDesc d;
                d.dir = CopyDir::P2P;
                d.dev_src = 0x10000;
                d.dev_dst = 0x80000 + 0x100000 * i;
                d.bytes = std::get<2>(copies[i]);
                d.peer = std::get<1>(copies[i]);
                fabric->start_peer_copy(std::get<0>(copies[i]), d, done, i);
            }
            for (;;) {
                bool all = true;
                for (size_t i = 0; i < copies.size(); ++i) all = all && done.at[i] != 0;
                if (all) break;
                sc_core::wait(done.ev);
            }
        });
        sc_core::sc_start();
        rethrow_failure();
    }
};

// ps to send one full line as packets on the wire (rounded per packet, as the channel does).
uint64_t line_ps() {
    const uint32_t wire = kLine + (kLine + kPacket - 1) / kPacket * kHeader;
    return static_cast<uint64_t>(wire * (1000.0 / kGbps) + 0.5);
}

}  // namespace

TEST_CASE("fabric: one copy over two links takes serialisation plus latencies, and shared links are shared fairly",
          "[links]") {
    Rig rig;
    const uint64_t lines = 64, bytes = lines * kLine;
    // Copy 0 (chip 0 -> chip 2) crosses c0->c1 and c1->c2; copy 1 (chip 1 -> chip 2) shares c1->c2.
    rig.run({{0, 2, bytes}, {1, 2, bytes}});
    const uint64_t lat = static_cast<uint64_t>(kLatencyNs * 1000);
    const uint32_t shared = rig.channel("c1->c2"), first = rig.channel("c0->c1");
    const auto s = rig.fabric->counters(shared), f = rig.fabric->counters(first);
    // Counters: payload, packets (two 256 B packets per 512 B line), wire bytes, busy time.
    CHECK(s.payload_bytes == 2 * bytes);
    CHECK(f.payload_bytes == bytes);
    CHECK(s.packets == 2 * lines);
    CHECK(s.wire_bytes == 2 * lines * (kLine + 2 * kHeader));
    CHECK(s.busy_ps == 2 * lines * line_ps());
    // The shared link is never faster than its bandwidth: both copies are done no earlier than
    // its busy time; shared fairly (packet by packet), they finish within a few packets of each
    // other, close to twice what one copy alone needs on it (first come, first served would
    // finish copy 1 at half the time).
    const uint64_t end = std::max(rig.done.at[0], rig.done.at[1]);
    CHECK(end >= s.busy_ps);
    const uint64_t gap = rig.done.at[0] > rig.done.at[1] ? rig.done.at[0] - rig.done.at[1] : rig.done.at[1] - rig.done.at[0];
    // Copy 1 has the shared link to itself until copy 0's first packet arrives over c0->c1 (one
    // packet time and a latency: at most 2 packets' head start), then they alternate (one more
    // packet), and copy 0's credits take one more link latency to return.
    CHECK(gap <= 3 * line_ps() + 2 * lat);
    // Alone, copy 1 would need lines * line_ps() + latency + credit latency; shared, about twice.
    const uint64_t alone = lines * line_ps() + 2 * lat;
    CHECK(static_cast<double>(rig.done.at[1]) >= 1.9 * static_cast<double>(alone - 2 * lat));
    CHECK(rig.done.at[1] <= 2 * alone + 4 * line_ps());
}

TEST_CASE("fabric: a lone copy is done after its packets' serialisation, the latency and the credit's return",
          "[links]") {
    Rig rig;
    const uint64_t lines = 40;
    rig.run({{1, 2, lines * kLine}});
    const uint64_t lat = static_cast<uint64_t>(kLatencyNs * 1000);
    // Back to back on c1->c2 (the window holds the whole copy), the last packet arrives one
    // latency after it is sent and its credit returns one route latency after it is written.
    CHECK(rig.done.at[0] == lines * line_ps() + 2 * lat);
    CHECK(rig.fabric->counters(rig.channel("c1->c2")).busy_ps == lines * line_ps());
    CHECK(rig.fabric->counters(rig.channel("c0->c1")).payload_bytes == 0);
}
