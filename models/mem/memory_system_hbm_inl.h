// The HBM front end's per-request entry (memory_system_hbm.cpp), inline in its callers: a miss's
// fill goes to its channel from l2_access() without a frame of its own (l2_access has saved the
// registers already; the channel's run is then its tail call).
#pragma once
#include "models/mem/memory_system.h"

namespace sfumato::mem {

namespace hbm_detail {
// The per-request decode, inline in the HBM path (the map's tables without a virtual call). The
// column is not decoded: neither the channels (a request is scheduled by bank, row and bursts)
// nor the statistics or traces read it.
[[gnu::always_inline]] inline void decode_req(const IAddressMap& map, HbmReq& r, uint64_t t) {
    map.decode_fast<false>(r.addr, r.da);
    r.bank_index = r.da.bank_index;
    r.arrive = Tick(t);
}
}  // namespace hbm_detail

// Inline where called (each HBM request arms a wake-up or runs its channel, which may arm one).
[[gnu::always_inline]] inline void MemorySystem::wake_at(uint32_t pc, uint64_t t) {
    if (m_wake[pc] == 0 || t < m_wake[pc]) {
        m_wake[pc] = t;
        push_hbm(t, Ev::CtrlWake, nullptr, pc);
    }
}

[[gnu::always_inline]] inline void MemorySystem::hbm_enqueue(HbmReq& r, uint64_t t) {
    hbm_detail::decode_req(*m_map, r, t);
    HbmChannel& ch = m_channels[r.da.pc];
    ch.enqueue(&r);
    // A channel waiting for its next decision takes the request then: run() would schedule nothing
    // and name that tick, and no write leaves its queue (waiting write-backs stay where they are).
    if (const uint64_t next = ch.decision_after(Tick(t))) wake_at(r.da.pc, next);
    else run_channel(r.da.pc, t);
}

}  // namespace sfumato::mem
