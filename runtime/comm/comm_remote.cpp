// The communicator split over window-synchronised processes (Communicator::distribute): the
// rendezvous of init_rank and host_barrier as messages. A rank's arrival goes to every other
// rank and takes effect one window lookahead later (the soonest anything crosses between chips);
// init_rank's carries the rank's buffer addresses and notify slots, which the other ranks' plans
// address. A rank leaves at the latest effect of the other ranks' arrivals (or at once, if that
// has passed), the same whether the ranks share a process or not.
#include "runtime/comm/communicator.h"
#include "runtime/comm/remote_rendezvous.h"
#include "sim/error.h"

namespace sfumato::comm {

RemoteRendezvous::RemoteRendezvous(Communicator& c, WindowSync& s)
    : m_c(c), m_s(s), m_port(s.bind(this)), m_gen(c.size(), 0) {}

void RemoteRendezvous::deliver(const RemoteMsg& m) {
    const auto& w = m.words;
    const uint32_t n = m_c.size();
    if (w.size() < 3 || w[1] >= n || w[2] >= n) throw ModelError("comm", "a malformed rendezvous message");
    const uint32_t from = static_cast<uint32_t>(w[1]);
    if (w.size() == 6 + 2 * size_t(n)) {
        Communicator::RankState& st = m_c.m_ranks[from];
        for (int i = 0; i < 3; ++i) st.buf[i] = w[3 + i];
        st.data_slot.assign(w.begin() + 6, w.begin() + 6 + n);
        st.ack_slot.assign(w.begin() + 6 + n, w.end());
        st.ready = true;
    } else if (w.size() != 3) {
        throw ModelError("comm", "a malformed rendezvous message");
    }
    Arrivals& a = m_arrivals[{w[2], w[0]}];
    ++a.count;
    a.latest = std::max(a.latest, m.tick);
    m_event.notify(sc_core::sc_time::from_value(m.tick - sc_core::sc_time_stamp().value()));
}

void RemoteRendezvous::wait(uint32_t rank, bool with_state) {
    const uint32_t n = m_c.size();
    const uint64_t gen = m_gen[rank]++;
    std::vector<uint64_t> words = {gen, rank, 0};
    if (with_state) {
        const Communicator::RankState& st = m_c.m_ranks[rank];
        words.insert(words.end(), {st.buf[0], st.buf[1], st.buf[2]});
        words.insert(words.end(), st.data_slot.begin(), st.data_slot.end());
        words.insert(words.end(), st.ack_slot.begin(), st.ack_slot.end());
    }
    const uint64_t now = sc_core::sc_time_stamp().value();
    for (uint32_t q = 0; q < n; ++q) {
        if (q == rank) continue;
        RemoteMsg m;
        m.tick = now + m_s.lookahead_ps();
        m.src = m_c.chip_of(rank);
        m.dst = m_c.chip_of(q);
        m.port = m_port;
        words[2] = q;
        m.words = words;
        m_s.post(std::move(m));
    }
    const auto key = std::make_pair(uint64_t(rank), gen);
    while (m_arrivals[key].count < n - 1) sc_core::wait(m_event);
    const uint64_t latest = m_arrivals[key].latest, t = sc_core::sc_time_stamp().value();
    m_arrivals.erase(key);
    if (latest > t) sc_core::wait(sc_core::sc_time::from_value(latest - t));
}

void Communicator::distribute(WindowSync& sync) {
    for (uint32_t c : m_chip)
        if (c >= sync.endpoints()) throw InputError("communicator: chip " + std::to_string(c) + " is not in the split system");
    m_remote = std::make_unique<RemoteRendezvous>(*this, sync);
}

void Communicator::remote_barrier(uint32_t rank, bool with_state) {
    if (size() > 1) m_remote->wait(rank, with_state);
}

}  // namespace sfumato::comm
