#include "models/mem/bulk_channel.h"

#include <algorithm>

namespace sfumato::mem {

BulkChannel::BulkChannel(const HbmParams& p, uint64_t refresh_offset_ck)
    : m_t(p.t),
      m_burst_div(p.burst_bytes()),
      m_tck_div(p.t.tck_ps),
      m_bank(p.banks()),
      m_per_bank(p.per_bank_refresh) {
    const uint64_t bb = p.burst_bytes();
    if (bb && (bb & (bb - 1)) == 0) m_burst_shift = static_cast<uint32_t>(__builtin_ctzll(bb));
    // In quarter tCK: four activates per tFAW exactly, and no two closer than tRRD_S.
    m_act_gap = std::max<Ck>({1, 4 * Ck(m_t.rrd_s), m_t.faw});
    m_refi = m_t.refi;
    m_ref_len = m_per_bank ? m_t.rfcsb : m_t.rfc;
    // As the controller: the first window a tREFI (per bank: tREFI / banks) after the channel's offset.
    const Ck period = m_per_bank ? std::max<Ck>(1, m_refi / p.banks()) : m_refi;
    m_ref_first = m_refi ? period + refresh_offset_ck % period : 0;
    for (uint32_t k = 0; k < m_bank.size(); ++k)
        m_bank[k].ref_first = m_ref_first + (m_per_bank ? Ck(k) * m_refi / m_bank.size() : 0);
    m_refi_div = FastDiv32(static_cast<uint32_t>(std::max<Ck>(1, std::min<Ck>(m_refi, 0xffffffffu))));
}

void BulkChannel::drop_before(uint64_t t) {
    m_floor_tick = t;
    const Ck ck = t / m_t.tck_ps;
    m_bus.set_floor(ck);
    m_act.set_floor(4 * ck);
}

Tick BulkChannel::serve(HbmReq& r, Tick at, uint32_t extra_ck) {
    const uint32_t k = r.bank_index;
    Bank& b = m_bank[k];
    const uint64_t last_byte = r.addr + r.bytes - 1;
    const uint32_t bursts = static_cast<uint32_t>(
        m_burst_shift < 64 ? (last_byte >> m_burst_shift) - (r.addr >> m_burst_shift) + 1
                           : m_burst_div.div(last_byte) - m_burst_div.div(r.addr) + 1);
    const Ck step = std::max<Ck>(m_t.ccd_l, m_t.bl);
    const Ck lat = r.write ? m_t.cwl : m_t.cl;
    const Ck dur = (bursts - 1) * step + m_t.bl + extra_ck;
    Ck ck = at.v ? m_tck_div.div(at.v - 1) + 1 : 0;  // the first tCK at or after `at`
    bool hit = false, conflict = false;
    Ck act = 0, act_q = 0, data = 0;
    uint64_t act_windows = 0;  // windows(k, act)
    for (;;) {
        const uint64_t n = windows(k, ck);
        const bool closed = b.open_row == kClosed || n > b.windows;  // a refresh closed it
        hit = !closed && b.open_row == r.da.row;
        conflict = !closed && !hit;
        Ck col_ready;
        if (hit) {
            col_ready = std::max(ck, b.col_ok);
        } else {
            act = ck;
            if (n) act = std::max(act, window_end(k, n));  // the bank is refreshing until then
            // After the bank's latest activate, a conflict precharges the open row first.
            if (conflict && act + m_t.rc > b.last_act) act = std::max(act, b.pre_ok + m_t.rp);
            // A time both the bank (tRC from any other activate) and the activate slots allow.
            // (The slot may start within the tCK before the activate: slots stay packed.)
            for (;;) {
                act_q = m_act.find(4 * act, m_act_gap);
                const Ck a = (act_q + 3) / 4;
                const Ck free = bank_free(b, a);
                if (free == a) {
                    act = a;
                    break;
                }
                act = free;
            }
            const uint64_t na = act_windows = windows(k, act);
            if (na > n) {  // a window began meanwhile
                ck = std::max(act, window_end(k, na));
                continue;
            }
            col_ready = act + m_t.rcd;
        }
        data = m_bus.find(col_ready + lat, dur);
        if (!m_per_bank && m_refi) {
            // All-bank refresh holds the bus: the data may not overlap a window.
            const uint64_t nd = windows(0, data + dur - 1);
            if (nd && window_end(0, nd) > data) {
                ck = window_end(0, nd);
                continue;
            }
        }
        break;
    }
    if (!hit) {
        m_act.reserve(act_q, m_act_gap);
        b.acts[b.next] = act;
        b.next = (b.next + 1) % Bank::kActs;
        b.last_act = std::max(b.last_act, act);
        b.open_row = r.da.row;
        b.pre_ok = act + m_t.ras;
        b.col_ok = act + m_t.rcd;
        b.windows = act_windows;
        ++m_stats.activates;
        if (conflict) ++m_stats.row_conflicts;
        else ++m_stats.row_misses;
        r.act_ck = act;
    } else {
        ++m_stats.row_hits;
    }
    m_bus.reserve(data, dur);
    const Ck col = data + extra_ck - lat;
    const Ck last_col = col + (bursts - 1) * step;
    const Ck end = data + dur;
    b.pre_ok = std::max(b.pre_ok, r.write ? end + m_t.wr : last_col + m_t.rtp);
    b.col_ok = std::max(b.col_ok, last_col + step);
    m_last_ck = std::max(m_last_ck, end);
    if (r.write) {
        ++m_stats.writes;
        m_stats.bytes_written += r.bytes;
    } else {
        ++m_stats.reads;
        m_stats.bytes_read += r.bytes;
    }
    m_stats.busy_ck += uint64_t(bursts) * m_t.bl;
    m_stats.bursts += bursts;
    m_stats.burst_row_hits += bursts - (hit ? 0 : 1);
    r.first_col_ck = col;
    r.done = Tick(end * m_t.tck_ps);
    return r.done;
}

HbmChannelStats BulkChannel::stats() const {
    HbmChannelStats s = m_stats;
    if (m_refi) {
        if (m_per_bank)
            for (uint32_t k = 0; k < m_bank.size(); ++k) s.refreshes += windows(k, m_last_ck);
        else
            s.refreshes = windows(0, m_last_ck);
    }
    return s;
}

}  // namespace sfumato::mem
