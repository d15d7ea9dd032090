#include "sim/window_sync.h"

#include <algorithm>
#include <systemc>

#include "sim/error.h"
#include "sim/run_horizon.h"

namespace sfumato {

std::vector<uint32_t> block_partition(uint32_t endpoints, uint32_t ranks) {
    std::vector<uint32_t> r(endpoints);
    for (uint32_t e = 0; e < endpoints; ++e) r[e] = static_cast<uint32_t>(uint64_t(e) * ranks / endpoints);
    return r;
}

WindowSync::WindowSync(IRankTransport& t, std::vector<uint32_t> rank_of, uint64_t lookahead_ps)
    : m_t(t), m_rank_of(std::move(rank_of)), m_lookahead(lookahead_ps), m_seq(m_rank_of.size(), 0) {
    if (m_lookahead < 2) throw ModelError("window sync", "the lookahead must be at least 2 ps");
    for (uint32_t r : m_rank_of)
        if (r >= m_t.size()) throw ModelError("window sync", "an endpoint on rank " + std::to_string(r) + " of " + std::to_string(m_t.size()));
}

uint16_t WindowSync::bind(IRemotePort* p) {
    m_ports.push_back(p);
    return static_cast<uint16_t>(m_ports.size() - 1);
}

void WindowSync::post(RemoteMsg m) {
    const uint64_t now = sc_core::sc_time_stamp().value();
    if (m.src >= m_rank_of.size() || m.dst >= m_rank_of.size() || m.port >= m_ports.size())
        throw ModelError("window sync", "a message from endpoint " + std::to_string(m.src) + " to " + std::to_string(m.dst) +
                                            " (port " + std::to_string(m.port) + ")");
    if (m.tick < now + m_lookahead)
        throw ModelError("window sync", "a message from endpoint " + std::to_string(m.src) + " to " + std::to_string(m.dst) +
                                            " takes effect " + std::to_string(m.tick - std::min(m.tick, now)) +
                                            " ps after it is sent, less than the lookahead (" + std::to_string(m_lookahead) + " ps)");
    m.seq = m_seq[m.src]++;
    m_outbox.push_back(std::move(m));
}

void WindowSync::deliver_inbox() {
    std::sort(m_inbox.begin(), m_inbox.end(), [](const RemoteMsg& a, const RemoteMsg& b) {
        if (a.tick != b.tick) return a.tick < b.tick;
        if (a.src != b.src) return a.src < b.src;
        return a.seq < b.seq;
    });
    for (const RemoteMsg& m : m_inbox) m_ports[m.port]->deliver(m);
    m_inbox.clear();
}

void WindowSync::start() {
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
    exchange();
}

WindowSync::Step WindowSync::step(bool local_done, bool local_failed) {
    deliver_inbox();
    const uint64_t now = sc_core::sc_time_stamp().value();
    uint64_t next = kNever;
    if (!local_failed && sc_core::sc_pending_activity()) next = now + sc_core::sc_time_to_pending_activity().value();
    std::vector<uint64_t> v = {next, local_done ? 1u : 0u, local_failed ? 0u : 1u};
    m_t.all_min(v);
    if (v[2] == 0) return Step::Failed;
    if (v[1] == 1) return Step::AllDone;
    if (v[0] == kNever) return Step::Stalled;
    // Events in [next, end) run now; a message posted in the window takes effect at end or later.
    const uint64_t end = std::max(v[0], now) + m_lookahead;
    run_horizon() = end - 1;  // messages posted in the window take effect at `end`
    sc_core::sc_start(sc_core::sc_time::from_value(end - 1 - now));
    run_horizon() = ~uint64_t(0);
    ++m_windows;
    exchange();
    return Step::Ran;
}

// A message on the wire: tick, src, dst, seq, port << 16 | kind, word count, words.
void WindowSync::exchange() {
    std::vector<std::vector<uint64_t>> out(ranks());
    for (const RemoteMsg& m : m_outbox) {
        auto& o = out[m_rank_of[m.dst]];
        o.insert(o.end(), {m.tick, m.src, m.dst, m.seq, (uint64_t(m.port) << 16) | m.kind, m.words.size()});
        o.insert(o.end(), m.words.begin(), m.words.end());
    }
    m_messages += m_outbox.size();
    m_outbox.clear();
    const auto in = m_t.exchange(out);
    for (const auto& buf : in) {
        for (size_t i = 0; i + 6 <= buf.size();) {
            RemoteMsg m;
            m.tick = buf[i];
            m.src = static_cast<uint32_t>(buf[i + 1]);
            m.dst = static_cast<uint32_t>(buf[i + 2]);
            m.seq = buf[i + 3];
            m.port = static_cast<uint16_t>(buf[i + 4] >> 16);
            m.kind = static_cast<uint16_t>(buf[i + 4] & 0xffff);
            const uint64_t n = buf[i + 5];
            i += 6;
            if (n > buf.size() - i) throw ModelError("window sync", "a truncated message from another rank");
            m.words.assign(buf.begin() + static_cast<std::ptrdiff_t>(i), buf.begin() + static_cast<std::ptrdiff_t>(i + n));
            i += n;
            m_inbox.push_back(std::move(m));
        }
    }
}

}  // namespace sfumato
