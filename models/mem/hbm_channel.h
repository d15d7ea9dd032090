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
    DramAddr da;
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
    [[gnu::always_inline]] void enqueue(HbmReq* r) { (r->write ? m_wq : m_rq).push_back({r->da.row, r->bank_index, r}); }
    // Schedules what can be decided at `now`; appends scheduled requests (done set) to `out`.
    // Returns the tick at which to call again (kNever while the queue is empty).
    uint64_t run(Tick now, std::vector<HbmReq*>& out);
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
    // push_back stays a call here, its growth path being large). Invariant: size() <= capacity.
    class ReqQueue {
    public:
        ReqQueue() { grow(256); }
        [[gnu::always_inline]] void push_back(const HbmQueued& q) {
            if (m_n == m_cap) grow(2 * m_cap);
            m_buf[m_n++] = q;
        }
        // Removes the i-th, keeping the others' order.
        void erase_at(size_t i) {
            std::copy(m_buf.get() + i + 1, m_buf.get() + m_n, m_buf.get() + i);
            --m_n;
        }
        size_t size() const { return m_n; }
        bool empty() const { return m_n == 0; }
        const HbmQueued* data() const { return m_buf.get(); }
        const HbmQueued& operator[](size_t i) const { return m_buf[i]; }
        const HbmQueued* begin() const { return m_buf.get(); }
        const HbmQueued* end() const { return m_buf.get() + m_n; }

    private:
        void grow(size_t cap) {
            std::unique_ptr<HbmQueued[]> b(new HbmQueued[cap]);
            std::copy(m_buf.get(), m_buf.get() + m_n, b.get());
            m_buf = std::move(b);
            m_cap = cap;
        }
        std::unique_ptr<HbmQueued[]> m_buf;
        size_t m_n = 0, m_cap = 0;
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
    [[gnu::always_inline]] inline Plan plan(const HbmReq& r, Ck t) const;
    [[gnu::always_inline]] inline void commit(HbmReq& r, const Plan& pl);
    void refresh_upto(Ck t);
    // wanted_marked: the banks the queued requests want are already marked (the queues have not
    // changed since); set once marked.
    uint32_t pick_refresh_bank(bool& wanted_marked);
    // Per-bank refresh at a round boundary of a long catch-up to `t` (the `boundary`-th in this
    // refresh_upto): once the rounds repeat, counts whole periods of them without replaying them
    // (they leave nothing a later round does not override).
    void skip_rounds(Ck t, uint32_t boundary);

    HbmTiming m_t;
    uint32_t m_burst_bytes;
    static constexpr uint32_t kNoShift = ~0u;
    uint32_t m_burst_shift = kNoShift;  // log2(m_burst_bytes) when a power of two (no divides per request)
    uint32_t m_window;
    const IHbmScheduler& m_sched;
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

}  // namespace sfumato::mem
