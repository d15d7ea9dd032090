// The HBM front end of the memory system (memory_system.h): address decode, the per-channel
// controllers' queues and wake-ups, and dirty write-backs into the bounded write queues (an
// eviction that finds its queue full waits there, and so does the access behind it).
#include "models/mem/memory_system.h"
#include "models/mem/memory_system_hbm_inl.h"

#include <algorithm>

#include "sim/error.h"
#include "sim/sc_time_util.h"

namespace sfumato::mem {

void MemorySystem::decode(HbmReq& r, uint64_t t) { hbm_detail::decode_req(*m_map, r, t); }

void MemorySystem::run_channel(uint32_t pc, uint64_t t) {
    HbmChannel& ch = m_channels[pc];
    uint64_t next;
    for (;;) {
        // Each scheduled request's completion is pushed as it is scheduled, in the same order as
        // when they were listed first and pushed after: nothing else is pushed in between.
        next = ch.run_each(Tick(t), [this](HbmReq* r) {
            if (r->kind == kFill) push_hbm(r->done.v + m_frontend_ps, Ev::FillDone, r->owner);
            else push_hbm(r->done.v + m_frontend_ps, Ev::WbDone, r);
        });
        // Writes that left the queue make room for waiting write-backs; serve them at once.
        if (!m_wb_waiting || !m_wb_wait[pc].head || !release_writebacks(pc, t)) break;
    }
    if (next != HbmChannel::kNever) wake_at(pc, next);
}

bool MemorySystem::release_writebacks(uint32_t pc, uint64_t t) {
    HbmChannel& ch = m_channels[pc];
    WbWait& wl = m_wb_wait[pc];
    bool moved = false;
    while (wl.head && !ch.write_full()) {
        HbmReq* w = wl.head;
        wl.head = w->next;
        --m_wb_waiting;
        if (!wl.head) wl.tail = nullptr;
        w->next = nullptr;
        w->arrive = Tick(t);
        ch.enqueue(w);
        moved = true;
        void* who = w->waiter;
        const uint32_t kind = w->waiter_kind;
        w->waiter = nullptr;
        w->waiter_kind = kWaitNone;
        if (kind == kWaitWrite) {
            MemRequest& r = *static_cast<MemRequest*>(who);
            push_hbm(t + m_hit_ps,
                     r.target_part                                          ? Ev::PartDone
                     : m_runahead_client && r.client == m_runahead_client ? Ev::RunaheadDone
                                                                            : Ev::ClientDone,
                     &r);
        } else if (kind == kWaitFill) {
            // The miss's fill goes out now; its channel runs from an event (no recursion here).
            HbmReq& f = static_cast<Mshr*>(who)->fill;
            decode(f, t);
            m_channels[f.da.pc].enqueue(&f);
            if (f.da.pc != pc) wake_at(f.da.pc, t);
        }
    }
    return moved;
}

bool MemorySystem::write_back(const L2Tags::Victim& v, uint64_t t, void* waiter, uint32_t waiter_kind) {
    if (m_mt) mt_stop();  // the HBM side's state is read here: one thread from now on
    ++m_writebacks;
    ++m_wb_pending;
    HbmReq* w;
    if (m_wb_free.empty()) {
        m_wb_pool.emplace_back();
        w = &m_wb_pool.back();
        w->kind = kWriteback;
    } else {
        w = m_wb_free.back();
        m_wb_free.pop_back();
    }
    const uint32_t first = static_cast<uint32_t>(__builtin_ctzll(v.dirty));
    const uint32_t last = 63u - static_cast<uint32_t>(__builtin_clzll(v.dirty));
    w->addr = v.line_addr * m_l2.g.line_bytes + uint64_t(first) * m_l2.g.sector_bytes;
    w->bytes = (last - first + 1) * m_l2.g.sector_bytes;
    w->write = true;
    decode(*w, t);
    const uint32_t pc = w->da.pc;
    WbWait& wl = m_wb_wait[pc];
    if (!wl.head && !m_channels[pc].write_full()) {
        m_channels[pc].enqueue(w);
        run_channel(pc, t);
        return true;
    }
    ++m_wb_stalls;
    w->waiter = waiter;
    w->waiter_kind = waiter ? waiter_kind : kWaitNone;
    w->next = nullptr;
    if (wl.tail) wl.tail->next = w;
    else wl.head = w;
    wl.tail = w;
    ++m_wb_waiting;
    return false;
}

uint64_t MemorySystem::unwritten_bytes() const {
    mt_settle();
    uint64_t n = 0;
    for (const Slice& s : m_slices) n += s.tags->dirty_bytes();
    for (size_t pc = 0; pc < m_channels.size(); ++pc) {
        n += m_channels[pc].queued_write_bytes();
        for (const HbmReq* w = m_wb_wait[pc].head; w; w = w->next) n += w->bytes;
    }
    for (const BulkWrites& w : m_bulk_wr)
        for (const HbmReq& h : w.waiting) n += h.bytes;
    return n;
}

}  // namespace sfumato::mem
