#include "sim/submit_order.h"

#include <algorithm>
#include <systemc>
#include <utility>

namespace sfumato {

namespace detail {

// One per simulation: flushes the SubmitOrders that staged requests, in their construction
// order, once every other process of the instant ran. It looks in the update phase of the delta
// cycle in which the first request was staged: with no delta notification pending then (the
// project has no other primitive channels, so nothing else can create activity at this time
// after that), the instant is over and it flushes right there, saving the delta cycle of its
// own that the method below would take. Otherwise that method takes over: it runs in a later
// delta of the instant, re-arming itself by delta notification while anything else is pending
// at the current time. One for all SubmitOrders, so that they never wait for each other.
class InstantEnd : public sc_core::sc_module {
public:
    SC_HAS_PROCESS(InstantEnd);
    explicit InstantEnd(sc_core::sc_module_name name) : sc_core::sc_module(name), m_update(*this) {
        SC_METHOD(run);
        sensitive << m_ev;
        dont_initialize();
    }
    void add(SubmitOrder* s) { m_all.push_back(s); }
    void remove(SubmitOrder* s) {
        m_all.erase(std::remove(m_all.begin(), m_all.end(), s), m_all.end());
        m_dirty.erase(std::remove(m_dirty.begin(), m_dirty.end(), s), m_dirty.end());
    }
    void want(SubmitOrder* s) {
        if (m_dirty.empty()) m_update.request_update();
        m_dirty.push_back(s);
    }
    // The earliest deferred activation (SubmitOrder::set_deferred) among this instant's targets
    // other than `except`, while their end hooks run.
    uint64_t earliest_deferred(const SubmitOrder* except) const {
        uint64_t t = ~uint64_t(0);
        for (const SubmitOrder* s : m_run)
            if (s != except && s->m_deferred) t = std::min(t, *s->m_deferred);
        return t;
    }
    size_t index(const SubmitOrder* s) const {
        return static_cast<size_t>(std::find(m_all.begin(), m_all.end(), s) - m_all.begin());
    }

private:
    // The update-phase look (a primitive channel of its own: a module cannot be one).
    class Update : public sc_core::sc_prim_channel {
    public:
        explicit Update(InstantEnd& end) : sc_core::sc_prim_channel("update"), m_end(end) {}
        // In the update phase the evaluation is over: what is pending at this time is delta
        // notifications (sc_pending_activity_at_current_time() sees them).
        void update() override { m_end.run(); }

    private:
        InstantEnd& m_end;
    };
    void run() {
        if (sc_core::sc_pending_activity_at_current_time()) {
            m_ev.notify(sc_core::SC_ZERO_TIME);
            return;
        }
        m_run.swap(m_dirty);
        // Each target's requests go to that target only, so the order among targets changes
        // nothing; a fixed one keeps runs reproducible all the same.
        if (m_run.size() > 1)
            std::sort(m_run.begin(), m_run.end(), [this](auto* a, auto* b) { return index(a) < index(b); });
        for (SubmitOrder* s : m_run) s->flush();
        // Then the end hooks, once every target has its instant's requests: a hook looks at the
        // kernel's next activity, which the others' hand-overs may have moved.
        for (SubmitOrder* s : m_run) s->instant_over();
        m_run.clear();
    }
    Update m_update;
    sc_core::sc_event m_ev;
    std::vector<SubmitOrder*> m_all, m_dirty, m_run;
};

}  // namespace detail

namespace {

struct InstantEndRef {
    sc_core::sc_simcontext* sim = nullptr;
    detail::InstantEnd* end = nullptr;  // owned by no one: it lives as long as its simulation
};

detail::InstantEnd& instant_end() {
    static InstantEndRef ref;
    sc_core::sc_simcontext* sim = sc_core::sc_get_curr_simcontext();
    if (ref.sim != sim || !ref.end) {
        ref.sim = sim;
        ref.end = new detail::InstantEnd(sc_core::sc_gen_unique_name("instant_end"));
    }
    return *ref.end;
}

}  // namespace

SubmitOrder::SubmitOrder(uint32_t ports, std::function<void(MemRequest&)> accept)
    : m_end(&instant_end()), m_ports(std::max<uint32_t>(ports, 1)), m_accept(std::move(accept)) {
    m_end->add(this);
}

SubmitOrder::~SubmitOrder() { m_end->remove(this); }

void SubmitOrder::submit(MemRequest& r) {
    if (sc_core::sc_get_status() != sc_core::SC_RUNNING) {
        m_accept(r);
        return;
    }
    if (!m_listed) {
        m_listed = true;
        m_end->want(this);
    }
    m_staged.push_back(&r);
}

bool SubmitOrder::want_end() {
    if (sc_core::sc_get_status() != sc_core::SC_RUNNING || !m_end_hook) return false;
    m_want_end = true;
    if (!m_listed) {
        m_listed = true;
        m_end->want(this);
    }
    return true;
}

uint64_t SubmitOrder::others_deferred() const { return m_end->earliest_deferred(this); }

void SubmitOrder::instant_over() {
    if (!m_want_end) return;
    m_want_end = false;
    m_end_hook();
}

void SubmitOrder::flush() {
    m_listed = false;
    if (!m_staged.empty()) hand_over(m_staged);
}

void SubmitOrder::direct_to_instant() {
    m_moving.swap(m_direct);
    for (MemRequest* r : m_moving) submit(*r);
    m_moving.clear();
}

void SubmitOrder::hand_over(std::vector<MemRequest*>& from) {
    if (from.size() == 1) {  // nothing to order, and no port contended
        MemRequest& r = *from.front();
        from.clear();  // before accept, as below: a later submit starts a new batch
        m_accept(r);
        return;
    }
    // The batch is taken out first (into m_batch with its keys, `from` emptied): a request the
    // target accepts may not submit through here, but then a submit never appends to the list
    // being handed over. Keys: ports from m_first on, then the ones before it (a port beyond
    // `ports`, which the target rejects, last), then the requester, then the arrival (low 32 bits).
    const uint64_t first = m_first, ports = m_ports;
    m_batch.clear();
    for (size_t i = 0; i < from.size(); ++i) {
        MemRequest* q = from[i];
        const uint64_t port = q->port;
        const uint64_t r = port >= ports ? port : port >= first ? port - first : port + ports - first;
        m_batch.push_back({r << 40 | static_cast<uint64_t>(q->who) << 32 | static_cast<uint32_t>(i), q});
    }
    from.clear();
    if (m_batch.size() > 1) {
        std::sort(m_batch.begin(), m_batch.end(), [](const Staged& a, const Staged& b) { return a.key < b.key; });
        // Round robin: when ports contended, the one after the winner comes first next time (so
        // ports without requests, such as a system's link ports on a chip, change nothing).
        const uint32_t winner = m_batch.front().req->port;
        if (winner < m_ports && m_batch.back().req->port != winner) {
            m_first = (winner + 1) % m_ports;
            ++m_contended;
        }
    }
    for (const Staged& s : m_batch) m_accept(*s.req);
    m_batch.clear();
}

}  // namespace sfumato
