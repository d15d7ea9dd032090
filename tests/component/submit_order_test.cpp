// Same-instant order of memory requests (sim/submit_order.h): the requests of one instant reach the
// target after every process of that instant ran, at that instant, by port (round robin), then in
// each client's own order, whatever order SystemC ran the clients in and whichever delta cycle
// they submitted in.
#include "sim/submit_order.h"

#include <catch2/catch.hpp>
#include <systemc>
#include <vector>

#include "sim/sc_time_util.h"

namespace sfumato {
namespace {

struct Accepted {
    uint16_t port;
    uint64_t tag;
    uint64_t tick;
};

// A client on one port: at each of `at` (ns) it submits one request, and `extra` more each one
// delta cycle after the previous (as a pipe woken again at the same instant would).
struct Client : sc_core::sc_module {
    SC_HAS_PROCESS(Client);
    Client(sc_core::sc_module_name n, SubmitOrder& o, uint16_t port, std::vector<uint64_t> at, int extra)
        : sc_core::sc_module(n), m_o(o), m_port(port), m_at(std::move(at)), m_extra(extra) {
        m_reqs.resize(m_at.size() * (1 + m_extra));
        SC_THREAD(run);
    }
    void run() {
        size_t k = 0;
        for (uint64_t t : m_at) {
            sc_core::wait(sc_core::sc_time(static_cast<double>(t), sc_core::SC_NS) -
                          sc_core::sc_time_stamp());
            for (int i = 0; i <= m_extra; ++i) {
                if (i > 0) sc_core::wait(sc_core::SC_ZERO_TIME);
                MemRequest& r = m_reqs[k];
                r.port = m_port;
                r.tag = k++;
                m_o.submit(r);
            }
        }
    }
    SubmitOrder& m_o;
    uint16_t m_port;
    std::vector<uint64_t> m_at;
    int m_extra;
    std::vector<MemRequest> m_reqs;
};

TEST_CASE("submit order: one instant's requests reach the target by port, round robin, after every delta",
          "[sim]") {
    init_time_resolution();
    std::vector<Accepted> got;
    SubmitOrder order(4, [&](MemRequest& r) {
        got.push_back({r.port, r.tag, sc_core::sc_time_stamp().value()});
    });
    // Outside a simulation a request is accepted at once.
    MemRequest early;
    early.port = 3;
    order.submit(early);
    REQUIRE(got.size() == 1);
    got.clear();
    // Constructed (and so first run) in the order 2, 0, 1; port 0 submits twice more, in later
    // delta cycles of the same instant.
    Client c2("c2", order, 2, {10}, 0);
    Client c0("c0", order, 0, {10, 20}, 2);
    Client c1("c1", order, 1, {10, 20}, 0);
    sc_core::sc_start();
    const uint64_t ns = 1000;
    REQUIRE(got.size() == 9);
    // At 10 ns: port 0 (its three requests, in its order), then 1, then 2; all at 10 ns.
    const std::vector<std::pair<uint16_t, uint64_t>> first = {{0, 0}, {0, 1}, {0, 2}, {1, 0}, {2, 0}};
    for (size_t i = 0; i < first.size(); ++i) {
        INFO("request " << i);
        CHECK(got[i].port == first[i].first);
        CHECK(got[i].tag == first[i].second);
        CHECK(got[i].tick == 10 * ns);
    }
    // At 20 ns port 0 won last time: port 1 goes first.
    const std::vector<std::pair<uint16_t, uint64_t>> second = {{1, 1}, {0, 3}, {0, 4}, {0, 5}};
    for (size_t i = 0; i < second.size(); ++i) {
        INFO("request " << i);
        CHECK(got[5 + i].port == second[i].first);
        CHECK(got[5 + i].tag == second[i].second);
        CHECK(got[5 + i].tick == 20 * ns);
    }
    CHECK(order.contended() == 2);
}

}  // namespace
}  // namespace sfumato
