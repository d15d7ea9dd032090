// Cross-core flags of a split (910B-like) part: counters 0..kMaxCrossFlag shared between cores.
// set_cross_flag increments, wait_cross_flag blocks while the counter is 0 and then decrements.
// Three modes (HARDWARE.md): 0 = one counter per flag id shared by all cores of the setter's
// kind; 1 = one counter per flag id shared by the AIVs of one group (one AIC and its AIVs);
// 2 = AIC <-> AIV of one group: an AIC's set increments each of its AIVs' counters, an AIV's set
// increments its AIC's counter. A set becomes visible `latency` cycles later. Plain C++ (the
// cores call it from their processes); waiters are woken through their core.
// Instructions with xflag.all (the Ascend C layer's) count as the chip does (isa/instr.h): each
// core's own counter, and barrier sets that count once all their participants have set, each
// participant's k-th set matched with the others' k-th; the count becomes visible `latency`
// cycles after the last of them.
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "isa/instr.h"
#include "isa/instr_sink.h"
#include "sim/time.h"
#include "sim/trace.h"

namespace sfumato {

class AiCore;

class CrossFlags {
public:
    CrossFlags(uint32_t groups, uint32_t aiv_per_aic, uint32_t latency);

    // Where a count came from, for the trace's flow arrows.
    struct Origin {
        TrackId track = 0;
        Tick tick;
        bool valid = false;
    };
    // A set by `core` at cycle `at` from trace track `track` (wakes every core waiting on a
    // cross flag).
    void set(const AiCore& core, const isa::Instr& in, Cycle at, TrackId track = 0);
    // A wait by `core` at cycle `now`: true if it consumed a count (its origin in `from`);
    // otherwise `ready` is the cycle a pending count becomes visible (0 when the counter is
    // empty and the core is registered to be woken).
    bool try_wait(AiCore& core, const isa::Instr& in, Cycle now, Cycle& ready, Origin* from = nullptr);
    // The counter a wait of `core` would consume (for deadlock reports).
    uint32_t count(const AiCore& core, const isa::Instr& in) const;

private:
    struct Count {
        uint64_t ready;  // the cycle it becomes visible
        Origin origin;
    };
    struct Counter {
        std::deque<Count> ready;  // one entry per count
    };
    size_t key(isa::CoreKind kind, uint32_t group, uint32_t slot, uint8_t mode, uint8_t id) const;
    size_t wait_key(const AiCore& core, const isa::Instr& in) const;
    // The core's own counter of flag `id` (the mode-2 counters are per core).
    size_t own_key(const AiCore& core, uint8_t id) const;
    void set_all(const AiCore& core, const isa::Instr& in, const Count& c);
    void wake();

    // A barrier's pending sets: (launch, kind, group or ~0 for mode 0, mode, id) -> the sets of
    // each participant (by own key of flag 0) not yet matched.
    using BarrierKey = std::tuple<uint64_t, int, uint32_t, uint8_t, uint8_t>;
    std::map<BarrierKey, std::map<size_t, std::deque<Count>>> m_arrivals;

    uint32_t m_groups, m_aiv, m_latency;
    std::vector<Counter> m_counters;
    std::vector<AiCore*> m_waiters;
};

}  // namespace sfumato
