// The window-synchronised engine (sim/window_sync.h) on its loopback transport: a message takes
// effect exactly at its tick, messages of one tick are delivered in (source, sequence) order,
// windows start at the next pending activity (idle time is skipped), and a message sooner than
// the lookahead is refused.
#include <catch2/catch.hpp>
#include <systemc>
#include <vector>

#include "sim/error.h"
#include "sim/sc_time_util.h"
#include "sim/window_sync.h"

namespace sfumato {
namespace {

constexpr uint64_t kLookahead = 300;  // ps
constexpr uint64_t kSendAt = 1000, kFar = 5000;

struct Receiver : sc_core::sc_module, IRemotePort {
    SC_HAS_PROCESS(Receiver);
    explicit Receiver(sc_core::sc_module_name n) : sc_core::sc_module(n) {
        SC_METHOD(fire);
        sensitive << m_ev;
        dont_initialize();
    }
    void deliver(const RemoteMsg& m) override {
        const uint64_t now = sc_core::sc_time_stamp().value();
        CHECK(now < m.tick);  // delivered before it takes effect
        order.push_back(m.src);
        pending.push_back(m.tick);
        m_ev.notify(sc_core::sc_time::from_value(m.tick - now));
    }
    void fire() {
        const uint64_t now = sc_core::sc_time_stamp().value();
        for (uint64_t t : pending)
            if (t == now) fired.push_back(now);
        if (!pending.empty() && pending.back() > now) m_ev.notify(sc_core::sc_time::from_value(pending.back() - now));
    }
    std::vector<uint64_t> pending, fired;
    std::vector<uint32_t> order;
    sc_core::sc_event m_ev;
};

struct Sender : sc_core::sc_module {
    SC_HAS_PROCESS(Sender);
    Sender(sc_core::sc_module_name n, WindowSync& s, uint16_t port) : sc_core::sc_module(n), m_s(s), m_port(port) {
        SC_THREAD(run);
    }
    void send(uint32_t src, uint64_t tick) {
        RemoteMsg m;
        m.tick = tick;
        m.src = src;
        m.dst = 0;
        m.port = m_port;
        m_s.post(std::move(m));
    }
    void run() {
        sc_core::wait(sc_core::sc_time::from_value(kSendAt));
        const uint64_t now = sc_core::sc_time_stamp().value();
        send(1, now + kLookahead);  // posted first, from endpoint 1
        send(0, now + kLookahead);  // same tick from endpoint 0: delivered first
        send(0, now + kFar);
        try {
            send(0, now + kLookahead - 1);
        } catch (const ModelError&) {
            refused = true;
        }
        done = true;
    }
    WindowSync& m_s;
    uint16_t m_port;
    bool done = false, refused = false;
};

TEST_CASE("window sync: messages take effect at their ticks in (source, sequence) order, idle time is skipped") {
    init_time_resolution();
    LoopbackTransport t;
    WindowSync sync(t, {0, 0}, kLookahead);
    Receiver r("receiver");
    const uint16_t port = sync.bind(&r);
    Sender s("sender", sync, port);
    sync.start();
    WindowSync::Step st;
    while ((st = sync.step(s.done && r.fired.size() == 3, false)) == WindowSync::Step::Ran) {
    }
    CHECK(st == WindowSync::Step::AllDone);
    CHECK(s.refused);
    CHECK(r.order == std::vector<uint32_t>{0, 1, 0});
    CHECK(r.fired == std::vector<uint64_t>{kSendAt + kLookahead, kSendAt + kLookahead, kSendAt + kFar});
    CHECK(sync.messages() == 3);
    // Windows open at the next pending activity: kSendAt (the sender posts), kSendAt + kLookahead
    // (the first two take effect) and kSendAt + kFar; windows back to back from time 0 would be
    // (kSendAt + kFar) / kLookahead + 1.
    CHECK(sync.windows() == 3);
}

TEST_CASE("window sync: chips go to ranks in contiguous blocks") {
    CHECK(block_partition(8, 3) == std::vector<uint32_t>{0, 0, 0, 1, 1, 1, 2, 2});
    CHECK(block_partition(4, 4) == std::vector<uint32_t>{0, 1, 2, 3});
    CHECK(block_partition(16, 1) == std::vector<uint32_t>(16, 0));
}

}  // namespace
}  // namespace sfumato
