#include "models/mem/hbm_channel.h"

#include <algorithm>

#include "models/mem/policy_registry.h"

namespace sfumato::mem {

namespace {

// First-come first-served: the oldest request.
class Fcfs : public IHbmScheduler {
public:
    size_t pick(const HbmQueued*, size_t, const HbmBankView&) const override { return 0; }
};

// First-ready FCFS: the oldest row hit; else the oldest request whose bank can take its next
// command (activate, or precharge of the other row) now; else the oldest.
class FrFcfs : public IHbmScheduler {
public:
    size_t pick(const HbmQueued* q, size_t n, const HbmBankView& b) const override {
        size_t ready = n;
        for (size_t i = 0; i < n; ++i) {
            const HbmBank& bk = b.bank[q[i].bank];
            if (bk.open_row == q[i].row) return i;
            if (ready == n && (bk.open_row == kClosed ? bk.act_ok : bk.pre_ok) <= b.now) ready = i;
        }
        return ready == n ? 0 : ready;
    }
};

using SchedRegistry = PolicyRegistry<IHbmScheduler>;
SFUMATO_REGISTER_POLICY(SchedRegistry, "fcfs", [] { return std::unique_ptr<IHbmScheduler>(new Fcfs); });
SFUMATO_REGISTER_POLICY(SchedRegistry, "frfcfs", [] { return std::unique_ptr<IHbmScheduler>(new FrFcfs); });

}  // namespace

std::unique_ptr<IHbmScheduler> make_hbm_scheduler(const std::string& name, const std::string& key) {
    return SchedRegistry::create(name, key);
}

HbmChannel::HbmChannel(const HbmParams& p, const IHbmScheduler& sched, uint64_t refresh_offset_ck)
    : m_t(p.t),
      m_burst_bytes(p.burst_bytes()),
      m_window(p.queue_window),
      m_sched(sched),
      m_write_high(p.write_high),
      m_write_low(p.write_low),
      m_write_cap(p.write_queue_depth),
      m_bank(p.banks(), HbmBank{IHbmScheduler::kClosed, 0, 0, 0}),
      m_last_act_bg(p.bank_groups, kPast),
      m_ref_done(p.banks(), 0),
      m_bank_wanted(p.banks(), 0) {
    m_lookahead = m_t.rp + m_t.rcd + m_t.cl;
    if (is_pow2(m_burst_bytes)) m_burst_shift = log2u(m_burst_bytes);
    m_per_bank_ref = p.per_bank_refresh;
    if (m_t.refi && m_per_bank_ref) {
        m_refi_sb = std::max<Ck>(1, static_cast<Ck>(m_t.refi / p.banks()));
        m_next_ref = m_refi_sb + static_cast<Ck>(refresh_offset_ck % static_cast<uint64_t>(m_refi_sb));
    } else if (m_t.refi) {
        m_next_ref = static_cast<Ck>(m_t.refi + refresh_offset_ck % m_t.refi);
    }
}

void HbmChannel::refresh_upto(Ck t) {
    if (m_per_bank_ref) {
        bool wanted = false;  // the queues do not change here: their banks are marked once
        const Ck round = Ck(m_bank.size()) * m_refi_sb;
        uint32_t boundaries = 0;  // round boundaries passed in this call
        while (m_next_ref <= t) {
            // A long catch-up (two rounds or more still due) skips whole periods of rounds.
            if (m_ref_left == 0 && m_catch_up && t - m_next_ref >= 2 * round) skip_rounds(t, boundaries++);
            const uint32_t k = pick_refresh_bank(wanted);
            // The bank precharges (if open) as soon as allowed, then refreshes for tRFCSB.
            Ck start = m_next_ref;
            HbmBank& bk = m_bank[k];
            if (bk.open_row != IHbmScheduler::kClosed) start = std::max(start, bk.pre_ok) + m_t.rp;
            bk.open_row = IHbmScheduler::kClosed;
            bk.act_ok = std::max(bk.act_ok, start + m_t.rfcsb);
            m_next_ref += m_refi_sb;
            ++m_stats.refreshes;
        }
        return;
    }
    // Every window closes all rows and holds every bank until its end, so of several windows due
    // at once only the last leaves a trace (the ends grow): the others are counted, not replayed.
    if (m_next_ref <= t && m_t.refi && m_catch_up) {
        const uint64_t skip = static_cast<uint64_t>((t - m_next_ref) / m_t.refi);
        m_next_ref += static_cast<Ck>(skip * m_t.refi);
        m_stats.refreshes += skip;
    }
    while (m_next_ref <= t) {
        m_ref_end = m_next_ref + m_t.rfc;
        for (HbmBank& bk : m_bank) {
            bk.open_row = IHbmScheduler::kClosed;
            bk.act_ok = std::max(bk.act_ok, m_ref_end);
        }
        m_next_ref += m_t.refi;
        ++m_stats.refreshes;
    }
}

void HbmChannel::skip_rounds(Ck t, uint32_t boundary) {
    // Within one refresh_upto() the queues do not change, so which bank each refresh picks depends
    // only on where the round starts (m_ref_bank, at a boundary every bank is still to do): the
    // rounds follow each other periodically once a start repeats. With every bank closed (true
    // after one round), a refresh's only trace is its bank's activate block, which that bank's
    // refresh in any later round overrides (later slot, same tRFCSB). So whole periods of rounds
    // can be counted without being replayed, as long as a full round is replayed after them: the
    // state is the same as replaying each. An idle stretch of N refreshes then costs at most a few
    // rounds of steps instead of N.
    const uint32_t banks = static_cast<uint32_t>(m_bank.size());
    if (boundary == 0) m_round_seen.assign(banks, kUnseen);  // what earlier calls saw does not count
    for (const HbmBank& bk : m_bank)
        if (bk.open_row != IHbmScheduler::kClosed) return;  // rounds close them: replay until then
    uint32_t& seen = m_round_seen[m_ref_bank];
    if (seen == kUnseen) {
        seen = boundary;
        return;
    }
    const uint64_t period = uint64_t(boundary - seen) * banks;  // refreshes per period of rounds
    const uint64_t due = static_cast<uint64_t>((t - m_next_ref) / m_refi_sb) + 1;
    const uint64_t periods = (due - banks) / period;  // leaving at least one round to replay
    m_next_ref += static_cast<Ck>(periods * period) * m_refi_sb;
    m_stats.refreshes += periods * period;
    std::fill(m_round_seen.begin(), m_round_seen.end(), kUnseen);
}

uint32_t HbmChannel::pick_refresh_bank(bool& wanted_marked) {
    // Each bank once per round (tREFI); within a round, a bank no queued request wants goes first
    // (REFSB names its bank, so the controller may refresh idle banks while others stream).
    const uint32_t banks = static_cast<uint32_t>(m_bank.size());
    const uint32_t wrap = banks - 1;  // banks is a power of two (hbm_params requires it)
    if (m_ref_left == 0) {
        std::fill(m_ref_done.begin(), m_ref_done.end(), 0);
        m_ref_left = banks;
    }
    // The first bank not yet refreshed this round (from where the last pick left off) goes unless
    // a queued request wants it. Few requests are queued at a time, so looking for that bank among
    // them costs less than marking every wanted bank; the scan below marks them when it is wanted.
    uint32_t k = m_ref_bank;
    while (m_ref_done[k]) k = (k + 1) & wrap;
    bool wanted;
    if (wanted_marked) {
        wanted = m_bank_wanted[k];
    } else {
        const auto wants = [&](const ReqQueue& q) {
            const size_t n = std::min<size_t>(q.size(), m_window);
            for (size_t i = 0; i < n; ++i)
                if (q[i].bank == k) return true;
            return false;
        };
        wanted = wants(m_rq) || wants(m_wq);
    }
    if (!wanted) {
        m_ref_done[k] = 1;
        --m_ref_left;
        m_ref_bank = (k + 1) & wrap;
        return k;
    }
    if (!wanted_marked) {
        std::fill(m_bank_wanted.begin(), m_bank_wanted.end(), 0);
        const auto mark = [&](const ReqQueue& q) {
            const size_t n = std::min<size_t>(q.size(), m_window);
            for (size_t i = 0; i < n; ++i) m_bank_wanted[q[i].bank] = 1;
        };
        mark(m_rq);
        mark(m_wq);
        wanted_marked = true;
    }
    uint32_t pick = banks;
    for (uint32_t i = 0; i < banks; ++i) {
        const uint32_t k = (m_ref_bank + i) & wrap;
        if (m_ref_done[k]) continue;
        if (pick == banks) pick = k;
        if (!m_bank_wanted[k]) {
            pick = k;
            break;
        }
    }
    m_ref_done[pick] = 1;
    --m_ref_left;
    m_ref_bank = (pick + 1) & wrap;
    return pick;
}

inline HbmChannel::Plan HbmChannel::plan(const HbmReq& r, Ck t) const {
    const uint32_t k = r.bank_index;
    const uint32_t bg = r.da.bg;
    Plan pl;
    Ck col_ready;
    const HbmBank& bk = m_bank[k];
    const uint64_t open = bk.open_row;
    if (open == r.da.row) {
        col_ready = std::max(t, bk.col_ok);
    } else {
        Ck act = std::max(t, bk.act_ok);
        if (open != IHbmScheduler::kClosed) {
            pl.pre = std::max(t, bk.pre_ok);
            act = std::max(act, pl.pre + m_t.rp);
        }
        act = std::max({act, m_last_act + m_t.rrd_s, m_last_act_bg[bg] + m_t.rrd_l, m_faw[m_faw_pos] + m_t.faw});
        pl.act = act;
        col_ready = act + m_t.rcd;
    }
    const Ck lat = r.write ? m_t.cwl : m_t.cl;
    Ck c = std::max({col_ready, m_last_col + (m_last_col_bg == bg ? m_t.ccd_l : m_t.ccd_s), m_bus_free - lat});
    if (r.write) c = std::max(c, m_last_rd_cmd + m_t.rtw);
    else c = std::max(c, m_last_wr_end + (m_last_wr_bg == bg ? m_t.wtr_l : m_t.wtr_s));
    pl.bursts = m_burst_shift != kNoShift
                    ? static_cast<uint32_t>(((r.addr + r.bytes - 1) >> m_burst_shift) - (r.addr >> m_burst_shift) + 1)
                    : static_cast<uint32_t>((r.addr + r.bytes - 1) / m_burst_bytes - r.addr / m_burst_bytes + 1);
    const Ck step = std::max<Ck>(m_t.ccd_l, m_t.bl);
    pl.col0 = c;
    pl.last_col = c + (pl.bursts - 1) * step;
    pl.data_end = pl.last_col + lat + m_t.bl;
    return pl;
}

inline void HbmChannel::commit(HbmReq& r, const Plan& pl) {
    const uint32_t k = r.bank_index;
    const uint32_t bg = r.da.bg;
    HbmBank& bk = m_bank[k];
    if (pl.act != kNone) {
        if (pl.pre != kNone) ++m_stats.row_conflicts;
        m_faw[m_faw_pos] = pl.act;
        m_faw_pos = (m_faw_pos + 1) & 3;
        m_last_act = pl.act;
        m_last_act_bg[bg] = pl.act;
        bk.act_ok = pl.act + m_t.rc;
        bk.pre_ok = pl.act + m_t.ras;
        bk.col_ok = pl.act + m_t.rcd;
        bk.open_row = r.da.row;
        r.act_ck = static_cast<uint64_t>(pl.act);
    } else {
        ++m_stats.row_hits;
    }
    m_last_col = pl.last_col;
    m_last_col_bg = bg;
    m_bus_free = pl.data_end;
    if (r.write) {
        bk.pre_ok = std::max(bk.pre_ok, pl.data_end + m_t.wr);
        m_last_wr_end = pl.data_end;
        m_last_wr_bg = bg;
        ++m_stats.writes;
        m_stats.bytes_written += r.bytes;
        if (m_last_dir == 0) ++m_stats.turnarounds;
        m_last_dir = 1;
    } else {
        bk.pre_ok = std::max(bk.pre_ok, pl.last_col + m_t.rtp);
        m_last_rd_cmd = pl.last_col;
        ++m_stats.reads;
        m_stats.bytes_read += r.bytes;
        if (m_last_dir == 1) ++m_stats.turnarounds;
        m_last_dir = 0;
    }
    m_stats.bursts += pl.bursts;
    r.first_col_ck = static_cast<uint64_t>(pl.col0);
    r.done = Tick(static_cast<uint64_t>(pl.data_end) * m_t.tck_ps);
}

HbmChannelStats HbmChannel::stats() const {
    HbmChannelStats s = m_stats;
    s.activates = s.reads + s.writes - s.row_hits;
    s.row_misses = s.activates - s.row_conflicts;
    s.burst_row_hits = s.bursts - s.activates;
    s.busy_ck = s.bursts * m_t.bl;
    return s;
}

uint64_t HbmChannel::run(Tick now, std::vector<HbmReq*>& out) {
    if (m_rq.empty() && m_wq.empty()) return kNever;
    // Nothing is decided before m_next_decision: now_ck < m_next_decision (now_ck rounds now up
    // to a tCK) holds exactly when now <= (m_next_decision - 1) tCK, tested without the divide.
    if (now.v + m_t.tck_ps <= m_next_decision_ps) return m_next_decision_ps;
    const Ck now_ck = static_cast<Ck>((now.v + m_t.tck_ps - 1) / m_t.tck_ps);
    for (;;) {
        // Write drain: starts at the high watermark, ends at the low one; reads go first otherwise,
        // and a write is served alone only while no read waits.
        if (m_draining && m_wq.size() <= m_write_low) m_draining = false;
        if (!m_draining && m_wq.size() >= m_write_high) {
            m_draining = true;
            ++m_stats.write_drains;
        }
        ReqQueue& q = (m_draining || m_rq.empty()) ? m_wq : m_rq;
        // Per-bank refreshes due now pick their banks while every waiting request is still queued.
        if (m_per_bank_ref && m_next_ref <= now_ck) refresh_upto(now_ck);
        // A queue of one is often all there is: its only pick is 0.
        const size_t n = std::min<size_t>(q.size(), m_window);
        const size_t idx = n == 1 ? 0 : m_sched.pick(q.data(), n, HbmBankView{m_bank.data(), now_ck});
        HbmReq* r = q[idx].req;
        q.erase_at(idx);
        Ck t = now_ck;
        Plan pl;
        for (;;) {
            if (m_next_ref <= t) refresh_upto(t);  // nothing to do until the next refresh is due
            t = std::max(t, m_ref_end);
            pl = plan(*r, t);
            if (!m_per_bank_ref && pl.data_end > m_next_ref) {  // never straddle a refresh window
                t = m_next_ref;
                continue;
            }
            break;
        }
        commit(*r, pl);
        out.push_back(r);
        // The next decision is due once an activate issued then would deliver data just as the bus
        // frees.
        m_next_decision = std::max(now_ck, pl.data_end - m_lookahead);
        m_next_decision_ps = static_cast<uint64_t>(m_next_decision) * m_t.tck_ps;
        if (m_rq.empty() && m_wq.empty()) return kNever;
        if (now_ck < m_next_decision) return m_next_decision_ps;
    }
}

}  // namespace sfumato::mem
