// The parts of ServeCluster (runtime/serve/cluster.h) that its sources share: the host
// programs' meeting points, a prefill instance's hand-off and a decode instance's arrivals.
// Private to runtime/serve (cluster.cpp, kv_ship.cpp).
#pragma once

#include <algorithm>
#include <limits>
#include <map>
#include <systemc>
#include <vector>

#include "runtime/serve/cluster.h"
#include "sim/sc_time_util.h"

namespace sfumato::serve {

// The host programs' meeting points (SystemC host threads of one simulation).
struct ServeCluster::Shared {
    sc_core::sc_event exported, met, delivered;
    std::map<uint32_t, uint64_t> handle;  // chip -> its weights' handle
    size_t arrived = 0, total = 0;
    std::map<uint32_t, uint64_t> physical, saved;  // per chip, once every instance placed its model
    void barrier() {
        if (++arrived == total) {
            met.notify(sc_core::SC_ZERO_TIME);
            return;
        }
        sc_core::wait(met);
    }
};

// A prefill instance's hand-off (disaggregation): the KV transfer to a decode instance.
class ServeCluster::Handoff : public IHandoff {
public:
    Handoff(ServeCluster& c, size_t instance) : m_c(c), m_i(instance) {}
    void step_starting(const std::vector<StepItem>& items) override { m_c.step_starting(m_i, items); }
    void prefilled(size_t id, double now_s, const RequestResult& so_far, const std::vector<int64_t>& blocks) override {
        (void)blocks;  // its KV went layer by layer during its steps (step_starting)
        m_c.hand_off(m_i, id, now_s, so_far);
    }

private:
    ServeCluster& m_c;
    size_t m_i;
};

// A decode instance's arrivals: the requests whose KV landed on its chip. Their arrival times
// are the transfers', known only when the last copy lands, so an idle decode instance waits for
// a delivery until every prefill instance has finished and no transfer is under way.
class ServeCluster::DecodePort : public IArrivals {
public:
    DecodePort(ServeCluster& c, size_t d) : m_c(c), m_d(d) {}
    void deliver(size_t id) { m_inbox.push_back(id); }
    void take(double now_s, std::vector<size_t>& out) override {
        (void)now_s;
        for (size_t id : m_inbox) {
            const Request& q = m_c.m_trace.requests[id];
            m_c.m_dec_pending[m_d] -= q.output_tokens - 1;
            out.push_back(id);
        }
        m_inbox.clear();
    }
    double next(double now_s) override {
        return m_inbox.empty() ? std::numeric_limits<double>::infinity() : now_s;
    }
    bool wait(double& now_s) override {
        const size_t prefill = static_cast<size_t>(m_c.m_s.prefill_instances);
        while (m_inbox.empty() && (m_c.m_prefill_done < prefill || m_c.m_in_flight > 0))
            sc_core::wait(m_c.m_sh->delivered);
        if (m_inbox.empty()) return false;
        now_s = std::max(now_s, static_cast<double>(now_tick().v - m_c.m_origin_ps) * 1e-12);
        return true;
    }
    const RequestResult* carried(size_t id) const override {
        auto it = m_c.m_carried.find(id);
        return it == m_c.m_carried.end() ? nullptr : &it->second;
    }

private:
    ServeCluster& m_c;
    size_t m_d;
    std::vector<size_t> m_inbox;
};

}  // namespace sfumato::serve
