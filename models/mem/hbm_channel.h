// One HBM pseudo-channel controller: a request queue, per-bank open-row state and a JEDEC-style
// timing checker, as plain C++ (no SystemC). Event-driven: the owner calls run(now) only when a
// request arrives or at the wake-up tick run() returned, never per cycle. A request (up to one
// L2 line, inside one row) is scheduled as a whole: PRE/ACT if needed, then its column bursts
// back to back, all timed arithmetically against tRCD/tRP/tRAS/tRC/tCL/tCWL/tBL/tCCD_S/L/
// tRRD_S/L/tFAW/tWR/tWTR/tRTP/tRTW and the data bus. A decision is taken just early enough that
// an activate can overlap the previous data transfer. Refresh: all-bank, one tRFC window every
// tREFI (staggered per channel); a request never straddles a window, and a window closes all rows.
// Per-bank refresh (REFSB) instead takes one bank at a time every tREFI / banks, each bank once per
// tREFI, preferring banks no queued request wants: it waits for the bank's precharge to be
// allowed, closes its row and blocks its activates for tRFCSB, while the other banks keep serving
// (a REFSB is not counted against tRRD/tFAW, and due refreshes are taken at the next decision).
// Reads and writes wait in separate queues: reads are served first, and writes are drained in a
// batch once write_high of them wait, down to write_low (or one at a time while no read waits),
// so the bus turns around once per batch instead of once per write.
// The write queue has a capacity (write_queue_depth): the channel reports write_full() and its
// owner holds further writes back (the memory system stalls the evicting L2 access), so a long
// write stream runs at the channel's write rate.
// Simplified: commands of one request are not interleaved with another's; no power-down; a read
// does not snoop the write queue (timing only: data lives in the backing store).
#pragma once
#include <algorithm>
#include <climits>
#include <cstdint>
#include <memory>
#include <vector>

#include "models/mem/fast_div.h"
#include "models/mem/hbm_params.h"
#include "models/mem/i_address_map.h"
#include "models/mem/i_hbm_scheduler.h"
#include "sim/time.h"

namespace sfumato::mem {

// A request as the controller sees it (owned by the memory system, pooled).
struct HbmReq {
    uint64_t addr = 0;
    uint32_t bytes = 0;
    bool write = false;
    DramAddr da;        // da.col is not decoded on the memory system's path (nothing reads it)
    uint32_t bank_index = 0;
    Tick arrive;
    Tick done;          // set when scheduled: end of the last data beat
    uint64_t first_col_ck = 0;  // tCK of its first column command (tests)
    uint64_t act_ck = ~uint64_t(0);  // tCK of its activate, if any (tests)
    void* owner = nullptr;
    uint32_t kind = 0;  // owner's use
    HbmReq* next = nullptr;     // owner's use (a list of writes waiting for queue room)
    void* waiter = nullptr;     // owner's use (what waits for this write to be queued)
    uint32_t waiter_kind = 0;   // owner's use
};

struct HbmChannelStats {
    uint64_t reads = 0, writes = 0, bytes_read = 0, bytes_written = 0;
    uint64_t row_hits = 0, row_misses = 0, row_conflicts = 0;
    uint64_t activates = 0, refreshes = 0;
    uint64_t bursts = 0, burst_row_hits = 0;  // column accesses, and those that found their row open
    uint64_t busy_ck = 0;  // data-bus busy tCK
    uint64_t write_drains = 0;  // batches started by the high watermark
    uint64_t turnarounds = 0;   // read-to-write and write-to-read switches of the data bus
};

class HbmChannel {
public:
    static constexpr uint64_t kNever = ~uint64_t(0);
    HbmChannel(const HbmParams& p, const IHbmScheduler& sched, uint64_t refresh_offset_ck);
    // r's address must be decoded (da, bank_index) before it is queued.
    [[gnu::always_inline]] void enqueue(HbmReq* r) {
        const uint32_t bursts =
            m_burst_shift != kNoShift
                ? static_cast<uint32_t>(((r->addr + r->bytes - 1) >> m_burst_shift) - (r->addr >> m_burst_shift) + 1)
                : static_cast<uint32_t>((r->addr + r->bytes - 1) / m_burst_bytes - r->addr / m_burst_bytes + 1);
        (r->write ? m_wq : m_rq)
            .push_back({r->da.row, static_cast<uint16_t>(r->bank_index), static_cast<uint16_t>(r->da.bg), bursts, r});
    }
    // Schedules what can be decided at `now`; appends scheduled requests (done set) to `out`.
    // Returns the tick at which to call again (kNever while the queue is empty).
    uint64_t run(Tick now, std::vector<HbmReq*>& out);
    // The same, calling scheduled(r) for each scheduled request in turn instead (the memory
    // system's hot path: inline, no list to fill and walk).
    template <class Scheduled>
    [[gnu::always_inline]] inline uint64_t run_each(Tick now, Scheduled&& scheduled);
    // The tick run(now) would return when it would schedule nothing (a request is queued and the
    // next decision is after `now`), else 0: the owner need not call run() then.
    uint64_t decision_after(Tick now) const {
        const bool waiting = !m_rq.empty() || !m_wq.empty();
        return waiting && now.v + m_t.tck_ps <= m_next_decision_ps ? m_next_decision_ps : 0;
    }
    size_t queued() const { return m_rq.size() + m_wq.size(); }
    size_t queued_writes() const { return m_wq.size(); }
    // The write queue holds write_queue_depth writes; enqueue() does not check (the owner does).
    bool write_full() const { return m_wq.size() >= m_write_cap; }
    uint64_t queued_write_bytes() const {
        uint64_t b = 0;
        for (const HbmQueued& q : m_wq) b += q.req->bytes;
        return b;
    }
    // The counted figures plus those that follow from them (see m_stats).
    HbmChannelStats stats() const;
    const HbmTiming& timing() const { return m_t; }
    // Tests: false replays every refresh of a catch-up one by one (the reference for the default,
    // which skips repeating rounds; both give the same state).
    void set_refresh_catch_up(bool on) { m_catch_up = on; }

private:
    // A request queue in arrival order: a growable array whose append is inline (std::vector's
    // push_back stays a call here, its growth path being large). The queue starts at m_head, so
    // taking the oldest (the usual pick) moves nothing; an emptied queue starts again at the
    // front. Invariant: m_head + size() <= capacity.
    class ReqQueue {
    public:
        ReqQueue() { grow(256); }
        [[gnu::always_inline]] void push_back(const HbmQueued& q) {
            if (m_head + m_n == m_cap) make_room();
            m_buf[m_head + m_n++] = q;
        }
        // Removes the i-th, keeping the others' order: the ones before it move up one (few: the
        // scheduler picks among the oldest), so the oldest's removal moves none.
        [[gnu::always_inline]] void erase_at(size_t i) {
            HbmQueued* b = m_buf.get() + m_head;
            for (size_t j = i; j > 0; --j) b[j] = b[j - 1];
            --m_n;
            m_head = m_n ? m_head + 1 : 0;
        }
        size_t size() const { return m_n; }
        bool empty() const { return m_n == 0; }
        const HbmQueued* data() const { return m_buf.get() + m_head; }
        const HbmQueued& operator[](size_t i) const { return m_buf[m_head + i]; }
        const HbmQueued* begin() const { return data(); }
        const HbmQueued* end() const { return data() + m_n; }

    private:
        // The end of the array is reached: back to its front, in a larger one if over half full.
        [[gnu::noinline]] void make_room() {
            if (2 * m_n > m_cap) return grow(2 * m_cap);
            std::copy(m_buf.get() + m_head, m_buf.get() + m_head + m_n, m_buf.get());
            m_head = 0;
        }
        void grow(size_t cap) {
            std::unique_ptr<HbmQueued[]> b(new HbmQueued[cap]);
            std::copy(m_buf.get() + m_head, m_buf.get() + m_head + m_n, b.get());
            m_buf = std::move(b);
            m_cap = cap;
            m_head = 0;
        }
        std::unique_ptr<HbmQueued[]> m_buf;
        size_t m_head = 0, m_n = 0, m_cap = 0;
    };
    // Times are signed tCK counts so that "long ago" needs no flag.
    using Ck = int64_t;
    static constexpr Ck kPast = -(Ck(1) << 40);
    static constexpr Ck kNone = INT64_MAX;
    // act is kNone on a row hit; pre is kNone unless another row is open.
    struct Plan {
        Ck pre = kNone, act = kNone, col0 = 0, last_col = 0, data_end = 0;
        uint32_t bursts = 0;
    };
    // Both read the request's queue entry (e), not the request: `write` is the queue it left.
    [[gnu::always_inline]] inline Plan plan(const HbmQueued& e, bool write, Ck t) const;
    [[gnu::always_inline]] inline void commit(const HbmQueued& e, bool write, const Plan& pl);
    void refresh_upto(Ck t);
    // wanted_marked: the banks the queued requests want are already marked (the queues have not
    // changed since); set once marked.
    // Inline in refresh_upto, its only caller (a call per refresh was a third of its cost).
    [[gnu::always_inline]] inline uint32_t pick_refresh_bank(bool& wanted_marked);
    // Per-bank refresh at a round boundary of a long catch-up to `t` (the `boundary`-th in this
    // refresh_upto): once the rounds repeat, counts whole periods of them without replaying them
    // (they leave nothing a later round does not override).
    void skip_rounds(Ck t, uint32_t boundary);

    HbmTiming m_t;
    FastDiv64 m_tck;  // ps to tCK (run()'s rounding up, without a hardware divide)
    uint32_t m_burst_bytes;
    static constexpr uint32_t kNoShift = ~0u;
    uint32_t m_burst_shift = kNoShift;  // log2(m_burst_bytes) when a power of two (no divides per request)
    uint32_t m_window;
    const IHbmScheduler& m_sched;
    bool m_frfcfs = false;  // m_sched is FR-FCFS: run_each() picks inline (frfcfs_pick)
    ReqQueue m_rq, m_wq;  // reads, writes; arrival order
    uint32_t m_write_high, m_write_low, m_write_cap;
    bool m_draining = false;
    int8_t m_last_dir = -1;  // direction of the last request: -1 none yet, 0 read, 1 write
    std::vector<HbmBank> m_bank;
    std::vector<Ck> m_last_act_bg;
    Ck m_last_act = kPast;
    Ck m_faw[4] = {kPast, kPast, kPast, kPast};
    uint32_t m_faw_pos = 0;
    Ck m_last_col = kPast;
    uint32_t m_last_col_bg = ~0u;
    Ck m_bus_free = 0;
    Ck m_last_wr_end = kPast;
    uint32_t m_last_wr_bg = ~0u;
    Ck m_last_rd_cmd = kPast;
    Ck m_next_decision = 0;
    uint64_t m_next_decision_ps = 0;  // m_next_decision in ps (run()'s early return, no divide)
    Ck m_lookahead;                   // tRP + tRCD + tCL (see run())
    Ck m_next_ref = kNone;
    bool m_per_bank_ref = false;
    Ck m_refi_sb = 0;         // per-bank refresh interval
    uint32_t m_ref_bank = 0;  // where the search for the next bank to refresh starts
    std::vector<uint8_t> m_ref_done, m_bank_wanted;  // per bank: refreshed this round; queued for
    uint32_t m_ref_left = 0;  // banks still to refresh in this round
    bool m_catch_up = true;   // skip repeating rounds of a long refresh catch-up (tests: off replays each)
    static constexpr uint32_t kUnseen = ~0u;
    std::vector<uint32_t> m_round_seen;  // per round start bank: the boundary it was seen at (catch-up)
    Ck m_ref_end = 0;
    // Counted per request: reads, writes, bytes, row hits and conflicts, bursts, turnarounds,
    // refreshes, drains. Left 0 here and derived in stats(): row misses (every request is a hit, a
    // miss or a conflict), activates (one per miss or conflict), burst row hits (every burst but
    // an activate's first) and busy_ck (tBL per burst).
    HbmChannelStats m_stats;
};

// The decision path, inline: the memory system runs it from its own loop (run_each).
inline HbmChannel::Plan HbmChannel::plan(const HbmQueued& e, bool write, Ck t) const {
    const uint32_t k = e.bank;
    const uint32_t bg = e.bg;
    Plan pl;
    Ck col_ready;
    const HbmBank& bk = m_bank[k];
    const uint64_t open = bk.open_row;
    if (open == e.row) {
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
    const Ck lat = write ? m_t.cwl : m_t.cl;
    Ck c = std::max({col_ready, m_last_col + (m_last_col_bg == bg ? m_t.ccd_l : m_t.ccd_s), m_bus_free - lat});
    if (write) c = std::max(c, m_last_rd_cmd + m_t.rtw);
    else c = std::max(c, m_last_wr_end + (m_last_wr_bg == bg ? m_t.wtr_l : m_t.wtr_s));
    pl.bursts = e.bursts;
    const Ck step = std::max<Ck>(m_t.ccd_l, m_t.bl);
    pl.col0 = c;
    pl.last_col = c + (pl.bursts - 1) * step;
    pl.data_end = pl.last_col + lat + m_t.bl;
    return pl;
}

inline void HbmChannel::commit(const HbmQueued& e, bool write, const Plan& pl) {
    HbmReq& r = *e.req;
    const uint32_t k = e.bank;
    const uint32_t bg = e.bg;
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
        bk.open_row = e.row;
        r.act_ck = static_cast<uint64_t>(pl.act);
    } else {
        ++m_stats.row_hits;
    }
    m_last_col = pl.last_col;
    m_last_col_bg = bg;
    m_bus_free = pl.data_end;
    if (write) {
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

template <class Scheduled>
inline uint64_t HbmChannel::run_each(Tick now, Scheduled&& scheduled) {
    if (m_rq.empty() && m_wq.empty()) return kNever;
    // Nothing is decided before m_next_decision: now_ck < m_next_decision (now_ck rounds now up
    // to a tCK) holds exactly when now <= (m_next_decision - 1) tCK, tested without the divide.
    if (now.v + m_t.tck_ps <= m_next_decision_ps) return m_next_decision_ps;
    const Ck now_ck = static_cast<Ck>(m_tck.div(now.v + m_t.tck_ps - 1));
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
        const size_t idx = n == 1   ? 0
                           : m_frfcfs ? frfcfs_pick(q.data(), n, m_bank.data(), now_ck)
                                      : m_sched.pick(q.data(), n, HbmBankView{m_bank.data(), now_ck});
        const HbmQueued e = q[idx];
        const bool write = &q == &m_wq;
        q.erase_at(idx);
        Plan pl;
        if (m_per_bank_ref) {
            // The refreshes due are done (above: m_next_ref > now_ck), and no all-bank window
            // holds the channel (m_ref_end stays 0): the decision is at now_ck.
            pl = plan(e, write, now_ck);
        } else {
            Ck t = now_ck;
            for (;;) {
                if (m_next_ref <= t) refresh_upto(t);  // nothing to do until the next refresh is due
                t = std::max(t, m_ref_end);
                pl = plan(e, write, t);
                if (pl.data_end > m_next_ref) {  // never straddle a refresh window
                    t = m_next_ref;
                    continue;
                }
                break;
            }
        }
        commit(e, write, pl);
        scheduled(e.req);
        // The next decision is due once an activate issued then would deliver data just as the bus
        // frees.
        m_next_decision = std::max(now_ck, pl.data_end - m_lookahead);
        m_next_decision_ps = static_cast<uint64_t>(m_next_decision) * m_t.tck_ps;
        if (m_rq.empty() && m_wq.empty()) return kNever;
        if (now_ck < m_next_decision) return m_next_decision_ps;
    }
}

}  // namespace sfumato::mem
