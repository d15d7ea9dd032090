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
        return frfcfs_pick(q, n, b.bank, b.now);
    }
};

using SchedRegistry = PolicyRegistry<IHbmScheduler>;
SFUMATO_REGISTER_POLICY(SchedRegistry, "fcfs", [] { return std::unique_ptr<IHbmScheduler>(new Fcfs); });
SFUMATO_REGISTER_POLICY(SchedRegistry, "frfcfs", [] { return std::unique_ptr<IHbmScheduler>(new FrFcfs); });

}  // namespace

bool is_frfcfs(const IHbmScheduler& s) { return dynamic_cast<const FrFcfs*>(&s) != nullptr; }

std::unique_ptr<IHbmScheduler> make_hbm_scheduler(const std::string& name, const std::string& key) {
    return SchedRegistry::create(name, key);
}

HbmChannel::HbmChannel(const HbmParams& p, const IHbmScheduler& sched, uint64_t refresh_offset_ck)
    : m_t(p.t),
      m_tck(p.t.tck_ps),
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
    m_frfcfs = is_frfcfs(sched);
    if (is_pow2(m_burst_bytes)) m_burst_shift = log2u(m_burst_bytes);
    m_per_bank_ref = p.per_bank_refresh;
    if (m_t.refi && m_per_bank_ref) {
        m_refi_sb = std::max<Ck>(1, static_cast<Ck>(m_t.refi / p.banks()));
        m_next_ref = m_refi_sb + static_cast<Ck>(refresh_offset_ck % static_cast<uint64_t>(m_refi_sb));
    } else if (m_t.refi) {
        m_next_ref = static_cast<Ck>(m_t.refi + refresh_offset_ck % m_t.refi);
    }
}

inline uint32_t HbmChannel::pick_refresh_bank(bool& wanted_marked) {
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

HbmChannelStats HbmChannel::stats() const {
    HbmChannelStats s = m_stats;
    s.activates = s.reads + s.writes - s.row_hits;
    s.row_misses = s.activates - s.row_conflicts;
    s.burst_row_hits = s.bursts - s.activates;
    s.busy_ck = s.bursts * m_t.bl;
    return s;
}

uint64_t HbmChannel::run(Tick now, std::vector<HbmReq*>& out) {
    return run_each(now, [&out](HbmReq* r) { out.push_back(r); });
}

}  // namespace sfumato::mem
