// The L2 side of the memory system (memory_system.h): per-core NoC ports into the slices, the
// tag lookup of a request (hits, write-allocate, misses merged in MSHRs or blocked until one
// frees), fills landing from HBM, and the flush that writes back and invalidates every line.
// Atomic adds (MTE3 or FixPipe with atomic set) are done by the slice: the line's sectors must be
// valid (a miss fetches them from HBM like a read, through an MSHR), the slice reads, adds and
// writes them (its port busy twice as long, plus atomic_cycles), and the line turns dirty; no data
// returns to the core. Simplified: no per-line lock between atomics to one line beyond the slice's
// serial port, and the adder never stalls on the data type.
#include "models/mem/memory_system.h"
#include "models/mem/memory_system_hbm_inl.h"

#include <algorithm>

#include "sim/error.h"
#include "sim/sc_time_util.h"

namespace sfumato::mem {

void MemorySystem::submit_line(MemRequest& r, uint64_t now) {
    Port& p = m_port[r.port];
    // A whole line's serialisation times are kept (m_bulk_line_*): most requests are one.
    const bool whole = r.bytes == m_l2.g.line_bytes;
    uint64_t start;
    if (r.write) {
        start = std::max(now, p.wr_free);
        p.wr_free = start + (whole ? m_bulk_line_wr : ser(r.bytes, m_wr_rate));
    } else {
        start = std::max(now, p.rd_free);
        p.rd_free = start + (whole ? m_bulk_line_rd : ser(r.bytes, m_rd_rate));
    }
    const uint64_t arrive = start + m_noc_ps;
    const uint64_t line = line_of(r.addr);
    const uint32_t si = slice_of(line);
    Slice& s = m_slices[si];
    const uint32_t set = s.tags->set_of(line);
    s.tags->prefetch_ahead_set(set);  // the lookup runs a few events later: have the set in cache by then
    const uint64_t at = std::max(arrive, s.free);
    // The slice's port serves one request at a time, each for at least a cycle.
    s.free = at + (whole ? m_bulk_line_slice : ser(r.bytes, m_slice_rate)) * (r.atomic_add ? 2 : 1);  // an atomic reads and writes
    r.next = nullptr;
    // The arrival carries the slice and the set (l2_arrival).
    push(at, Ev::Arrival, &r, si | set << m_arrival_shift);
}

void MemorySystem::l2_access(MemRequest& r, uint64_t t, uint32_t how) {
    const uint64_t line = line_of(r.addr);
    const uint32_t si = slice_of(line);
    l2_access(r, t, how, si, m_slices[si].tags->set_of(line));
}

void MemorySystem::l2_access(MemRequest& r, uint64_t t, uint32_t how, uint32_t si, uint32_t set) {
    const bool retry = how != kFirstAccess;
    const uint64_t line = line_of(r.addr);
    Slice& s = m_slices[si];
    const uint64_t mask = r.bytes == m_l2.g.line_bytes ? m_line_mask : sector_mask(r.addr, r.bytes);
    ReqStats& st = *m_req[static_cast<size_t>(r.who)];
    if (!retry) {
        ++st.accesses;
        st.bytes += r.bytes;
        if (m_trace && m_trace->on(TraceLevel::Mem)) trace_tick(t);
        ++m_trace_accesses;
    }
    // One look at the set: a hit, or a miss that allocates its way at once when it will have
    // one now. A plain write always does (write-allocate: its sectors valid and dirty from the
    // start); a read or an atomic when it will take an MSHR: none busy with the line and one
    // free. Neither depends on the tags, and nothing reads them between the lookup and the
    // allocation it used to make after these checks, so deciding first changes nothing.
    const bool plain_write = r.write && !r.atomic_add;
    const uint32_t h = mshr_hash(line);
    Mshr* pend = !plain_write && s.busy_hash[h] ? find_mshr(s, line) : nullptr;
    const bool reserve = plain_write || (!pend && !s.free_mshrs.empty());
    L2Tags::Victim v;
    const L2Tags::Access a = s.tags->access(line, set, reserve, mask, plain_write ? mask : 0, v);
    if (plain_write) {
        if (a.kind == L2Tags::kHit) {
            ++st.hits;
            ++m_trace_hits;
            s.tags->add_dirty(a.slot, mask);
        } else {
            ++st.misses;
            // The data is in the line; the write completes once the victim is queued.
            if (a.kind == L2Tags::kEvicted && evicted(s, st, v) && !write_back(v, t, &r, kWaitWrite)) return;
        }
        complete(r, t + m_hit_ps);
        return;
    }
    // A line whose fill is outstanding already shows the fill's sectors valid (set when the miss
    // reserved the way, while the line was in cache); they do not count until the fill lands.
    uint64_t have = 0;
    if (a.kind == L2Tags::kHit) {
        have = s.tags->valid(a.slot);
        if (pend && !pend->stolen) have &= ~pend->fetch_mask;
        if ((have & mask) == mask) {
            if (!retry) {
                ++st.hits;
                ++m_trace_hits;
            }
            if (r.atomic_add) s.tags->add_dirty(a.slot, mask);
            complete(r, t + m_hit_ps + (r.atomic_add ? m_atomic_ps : 0));
            if (how == kReleased) release_blocked(s, t);  // it did not need the MSHR it was given
            return;
        }
    }
    if (!retry) ++st.misses;
    if (pend) {
        if (!retry) ++st.merges;
        pend->tail->next = &r;
        pend->tail = &r;
        r.next = nullptr;
        if (how == kReleased) release_blocked(s, t);
        return;
    }
    r.next = nullptr;
    if (s.free_mshrs.empty()) {  // (no way was reserved)
        if (how == kReleased) {
            // Its MSHR was taken meanwhile: back to the head of the line (the next free releases it).
            r.next = s.blocked_head;
            s.blocked_head = &r;
            if (!s.blocked_tail) s.blocked_tail = &r;
        } else {
            if (s.blocked_tail) s.blocked_tail->next = &r;
            else s.blocked_head = &r;
            s.blocked_tail = &r;
        }
        return;
    }
    Mshr& m = *s.free_mshrs.back();
    s.free_mshrs.pop_back();
    ++s.busy_hash[h];
    s.mshr_line[m.index] = line;
    m.stolen = false;
    m.line_addr = line;
    m.fetch_mask = mask & ~have;
    m.valid_after = have | m.fetch_mask;
    m.slot = a.slot;
    m.head = m.tail = &r;
    bool fill_waits = false;
    if (a.kind == L2Tags::kHit) s.tags->add_valid(a.slot, m.fetch_mask);  // a way reserved now has them
    else if (a.kind == L2Tags::kEvicted && evicted(s, st, v)) fill_waits = !write_back(v, t, &m, kWaitFill);
    const uint32_t first = static_cast<uint32_t>(__builtin_ctzll(m.fetch_mask));
    const uint32_t last = 63u - static_cast<uint32_t>(__builtin_clzll(m.fetch_mask));
    m.fill.addr = line * m_l2.g.line_bytes + uint64_t(first) * m_l2.g.sector_bytes;
    m.fill.bytes = (last - first + 1) * m_l2.g.sector_bytes;
    m.fill.write = false;
    if (fill_waits) return;
    if (m_mt) return mt_handoff(m.fill, t);
    hbm_enqueue(m.fill, t);
}

bool MemorySystem::evicted(Slice& s, ReqStats& st, const L2Tags::Victim& v) {
    ++st.evictions;
    note_eviction(s, v);
    return v.dirty != 0;
}

MemorySystem::Mshr* MemorySystem::find_mshr(Slice& s, uint64_t line) {
    const uint64_t* l = s.mshr_line.data();
    for (size_t i = 0, n = s.mshr_line.size(); i < n; ++i)
        if (l[i] == line) return &s.mshrs[i];
    return nullptr;
}

void MemorySystem::note_eviction(Slice& s, const L2Tags::Victim& v) {
    if (!s.busy_hash[mshr_hash(v.line_addr)]) return;
    if (Mshr* m = find_mshr(s, v.line_addr)) m->stolen = true;  // its fill must re-allocate
}

// Inlined into fill_done and fill_done_all, its only callers.
[[gnu::always_inline]] inline void MemorySystem::finish_miss(MemRequest& r, uint64_t t) {
    // The data reaches the core through its GM port after the slice's return latency.
    Port& p = m_port[r.port];
    const uint64_t ready = t + m_hit_ps;
    const uint64_t start = std::max(ready, p.gm_free);
    p.gm_free = start + (r.bytes == m_l2.g.line_bytes ? m_bulk_line_gm : ser(r.bytes, m_gm_rate));
    complete(r, p.gm_free);
}

void MemorySystem::wb_done(HbmReq& r, uint64_t t) {
    if (m_trace && m_trace->on(TraceLevel::Mem)) {
        trace_tick(t);
        m_trace_bytes[r.da.pc / m_hbm.pseudo_channels] += r.bytes;
    }
    m_wb_free.push_back(&r);
    if (--m_wb_pending == 0) m_wb_drained.notify(sc_core::SC_ZERO_TIME);
}

void MemorySystem::fill_done(Mshr& m, uint64_t t) {
    if (m_trace && m_trace->on(TraceLevel::Mem)) {
        trace_tick(t);
        m_trace_bytes[m.fill.da.pc / m_hbm.pseudo_channels] += m.fill.bytes;
    }
    Slice& s = m_slices[m.slice];
    MemRequest* w = m.head;
    s.mshr_line[m.index] = kNoLine;
    --s.busy_hash[mshr_hash(m.line_addr)];
    // Mostly the request that allocated the MSHR alone, in its reserved way: it brought the line
    // from HBM, and its data takes its core's miss path (finish_miss). Its sectors are among the
    // fill's (valid_after). (Its completion is pushed before a blocked miss's retry, as below;
    // completing does not touch the slice.)
    if (!m.stolen && !w->next && !w->atomic_add) [[likely]] {
        s.free_mshrs.push_back(&m);
        if (!s.blocked_head) return finish_miss(*w, t);
        finish_miss(*w, t);
        return release_blocked(s, t);
    }
    fill_done_all(m, s, t);
}

void MemorySystem::fill_done_all(Mshr& m, Slice& s, uint64_t t) {
    MemRequest* w = m.head;
    // The fill's sectors were marked valid when the way was reserved; the tag array is touched
    // again only if that way was taken meanwhile (the line is then found or allocated anew).
    uint64_t valid = m.valid_after;
    uint32_t line_slot = m.slot;
    if (m.stolen) {
        line_slot = s.tags->find(m.line_addr, false);
        if (line_slot == L2Tags::kNone) {
            L2Tags::Victim v;
            line_slot = s.tags->allocate(m.line_addr, v);
            if (v.evicted && evicted(s, *m_req[static_cast<size_t>(w->who)], v))
                write_back(v, t, nullptr, kWaitNone);  // nothing waits on it
        }
        s.tags->add_valid(line_slot, m.fetch_mask);
        valid = s.tags->valid(line_slot);
    }
    s.free_mshrs.push_back(&m);
    // The head (the request that allocated the MSHR) brought the line from HBM: its data takes
    // its core's miss path (finish_miss). A request merged into the fill issued no HBM access of
    // its own: once the line has landed it is served from the slice as a hit (its read-port time
    // was taken at submit).
    // The head's sectors are among the fill's and the line's own (valid_after), unless the way
    // was taken meanwhile: its mask need not be looked at then.
    bool head = true;
    while (w) {
        MemRequest* nx = w->next;
        w->next = nullptr;
        if (head && !m.stolen && !w->atomic_add) {
            finish_miss(*w, t);
            head = false;
            w = nx;
            continue;
        }
        const uint64_t mask = sector_mask(w->addr, w->bytes);
        if ((valid & mask) != mask) {
            push(t, Ev::L2Access, w, kRetryAfterFill);  // needs sectors this fill did not bring
        } else if (w->atomic_add) {  // the slice adds into the line; nothing returns to the core
            s.tags->add_dirty(line_slot, mask);
            complete(*w, t + m_hit_ps + m_atomic_ps);
        } else if (head) {
            finish_miss(*w, t);
        } else {
            complete(*w, t + m_hit_ps);
        }
        head = false;
        w = nx;
    }
    release_blocked(s, t);
}

void MemorySystem::release_blocked(Slice& s, uint64_t t) {
    // One MSHR freed: one blocked miss retries. Should it hit or merge by then, it hands the MSHR
    // on (l2_access), so no miss stays blocked while an MSHR is free.
    MemRequest* b = s.blocked_head;
    if (!b) return;
    s.blocked_head = b->next;
    if (!s.blocked_head) s.blocked_tail = nullptr;
    b->next = nullptr;
    push(t, Ev::L2Access, b, kReleased);
}

void MemorySystem::flush_l2() {
    for (const Slice& s : m_slices)
        if (s.free_mshrs.size() != s.mshrs.size() || s.blocked_head)
            throw ModelError(name(), "L2 flush while misses are outstanding (flush an idle device)");
    const uint64_t t = now_tick().v;
    ++m_flushes;
    if (m_bulk) {  // every write-back goes out now; one event when the last is written
        m_bulk_now = t;
        m_bulk_floor = t - std::min(t, m_runahead_ps);
        uint64_t end = 0;
        for (Slice& s : m_slices)
            m_flushed_lines += s.tags->invalidate_all([&](uint64_t line, uint64_t dirty) {
                bulk_write_back(L2Tags::Victim{line, dirty, true}, t);
                end = std::max(end, m_bulk_write_end);  // batches drained on the way
            });
        for (uint32_t pc = 0; pc < m_bulk_wr.size(); ++pc)
            if (!m_bulk_wr[pc].waiting.empty()) end = std::max(end, bulk_drain(pc));
        if (end) {
            m_wb_pending = 1;
            push(std::max(end, t) + m_frontend_ps, Ev::BulkDrained, nullptr);
        } else {
            m_wb_drained.notify(sc_core::SC_ZERO_TIME);
        }
        return;
    }
    for (Slice& s : m_slices) {
        m_flushed_lines += s.tags->invalidate_all([&](uint64_t line, uint64_t dirty) {
            write_back(L2Tags::Victim{line, dirty, true}, t, nullptr, kWaitNone);
        });
    }
    if (m_wb_pending == 0) m_wb_drained.notify(sc_core::SC_ZERO_TIME);
}

}  // namespace sfumato::mem
