// One HBM pseudo-channel as the bulk memory service sees it (chip.mem.service = bulk,
// memory_system_bulk.cpp): each request is scheduled once, when it is handed over, from the same
// timing parameters as the controller (hbm_channel.h), without a queue or events. Requests come
// in acceptance order, which is not their arrival order, so the data bus and the activate slots
// are busy calendars (busy_calendar.h): a request takes the earliest gap that fits at or after
// the time its bank allows, which stands for the controller's picking of ready requests over a
// window (FR-FCFS) without the window. Per bank: the open row (of the request handed over last),
// tRC from each of its last few activates (an earlier gap can take a later-handed request), tRCD,
// and for a row conflict after the bank's latest activate tRAS, tRP and tRTP/tWR.
// Activates: one slot of max(tRRD_S, tFAW / 4) each, in quarter tCK (the long-run rate tRRD_S and
// tFAW allow).
// Refresh: each bank's windows are fixed in time (all-bank: every tREFI for tRFC, closing every
// row and the bus; per-bank: bank k at k tREFI / banks within each tREFI, for tRFCSB), and an
// access after a window finds its row closed. Simplified against the controller: no tCCD_L/S
// or tRRD_L between requests, a write batch's bus turnaround charged once each way.
#pragma once
#include <cstdint>
#include <vector>

#include "models/mem/busy_calendar.h"
#include "models/mem/fast_div.h"
#include "models/mem/hbm_channel.h"
#include "models/mem/hbm_params.h"

namespace sfumato::mem {

class BulkChannel {
public:
    BulkChannel(const HbmParams& p, uint64_t refresh_offset_ck);
    // Schedules r (decoded: da, bank_index), arriving at tick `at`, no earlier than any request
    // handed over before it allows; `extra_ck` more bus time before its data (a turnaround).
    // Sets r.done (end of its data) and r.first_col_ck; returns r.done.
    Tick serve(HbmReq& r, Tick at, uint32_t extra_ck = 0);
    // No later request arrives before tick `t`: calendar entries ending by then are dropped.
    // (Dropping them only saves memory and walks: a search from t never looks at an entry ending
    // by t. So it is done once per microsecond of simulated time, not per request.)
    void set_floor(uint64_t t) {
        if (t - m_floor_tick >= kFloorEveryPs || t < m_floor_tick) drop_before(t);
    }
    HbmChannelStats stats() const;
    // Hints the host cache to load what serve() reads for bank k (its state, the calendars' ends).
    void prefetch(uint32_t k) const {
        const char* b = reinterpret_cast<const char*>(&m_bank[k]);
        __builtin_prefetch(b, 1);
        __builtin_prefetch(b + sizeof(Bank) - 1, 1);
        m_bus.prefetch_tail();
        m_act.prefetch_tail();
    }
    void note_drain() {
        ++m_stats.write_drains;
        m_stats.turnarounds += 2;
    }

private:
    static constexpr uint64_t kFloorEveryPs = 1000000;
    void drop_before(uint64_t t);
    using Ck = uint64_t;
    static constexpr uint64_t kClosed = ~uint64_t(0);
    // Two host cache lines exactly (prefetch() brings both).
    struct alignas(64) Bank {
        uint64_t open_row = kClosed;
        Ck pre_ok = 0, col_ok = 0;
        uint64_t windows = 0;  // refresh windows of this bank started before its row opened
        Ck last_act = 0;       // the latest activate in time
        // The last kActs activates (as handed over): each holds the bank for tRC (open, then
        // precharge); an activate may go between them (kNoAct: none).
        static constexpr uint32_t kActs = 4;
        static constexpr Ck kNoAct = ~Ck(0);
        Ck acts[kActs] = {kNoAct, kNoAct, kNoAct, kNoAct};
        uint32_t next = 0;
        Ck ref_first = 0;  // the start of its first refresh window
        // windows()'s last answer, `win_n` for every tCK in [win_lo, win_hi) (none yet: empty):
        // a bank's requests come close in time, most within one tREFI of the one before.
        mutable Ck win_lo = 0, win_hi = 0;
        mutable uint64_t win_n = 0;
    };
    static_assert(sizeof(Bank) == 128, "a bank in two host cache lines");
    // The earliest t' >= t at which bank b can activate, tRC from each of its recent activates.
    Ck bank_free(const Bank& b, Ck t) const {
        for (bool moved = true; moved;) {
            moved = false;
            for (Ck a : b.acts)
                if (a != Bank::kNoAct && t < a + m_t.rc && a < t + m_t.rc) {
                    t = a + m_t.rc;
                    moved = true;
                }
        }
        return t;
    }
    // Refresh windows of bank k started at or before `ck`, and the end of the n-th (n >= 1).
    // (A multiply for the division while ck - first and tREFI fit 32 bits: the first 2^32 tCK.)
    uint64_t windows(uint32_t k, Ck ck) const {
        if (!m_refi) return 0;
        const Bank& b = m_bank[k];
        if (ck - b.win_lo < b.win_hi - b.win_lo) return b.win_n;  // win_lo <= ck < win_hi
        const Ck first = b.ref_first;
        if (ck < first) {
            b.win_lo = 0;
            b.win_hi = first;
            return b.win_n = 0;
        }
        const Ck d = ck - first;
        const uint64_t n = ((d | m_refi) >> 32 ? d / m_refi : m_refi_div.div(d)) + 1;
        b.win_lo = first + (n - 1) * m_refi;
        b.win_hi = b.win_lo + m_refi;
        return b.win_n = n;
    }
    Ck window_end(uint32_t k, uint64_t n) const { return m_bank[k].ref_first + (n - 1) * m_refi + m_ref_len; }

    HbmTiming m_t;
    FastDiv64 m_burst_div, m_tck_div;  // by the burst's bytes, by tCK in ps
    uint32_t m_burst_shift = 64;       // log2 of the burst's bytes when a power of two (64: not)
    std::vector<Bank> m_bank;
    BusyCalendar m_bus, m_act;  // the data bus in tCK, activate slots in quarter tCK
    Ck m_act_gap;
    bool m_per_bank;
    Ck m_refi, m_ref_first, m_ref_len;
    FastDiv32 m_refi_div;  // by m_refi
    Ck m_last_ck = 0;  // the latest data end (refresh counts)
    uint64_t m_floor_tick = ~uint64_t(0);  // the tick of the last set_floor
    HbmChannelStats m_stats;
};

}  // namespace sfumato::mem
