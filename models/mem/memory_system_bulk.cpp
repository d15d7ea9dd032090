// The bulk service of the memory system (chip.mem.service = bulk; memory_system.h): an
// approximation of the exact model for speed. A request is served whole when it is accepted,
// its lines one after the other, from the same parameters and state the exact model uses:
//  - the core's read or write port, the NoC latency and the slice's port are "free at" times,
//    charged exactly as submit_line() does (requests and a burst's requests are served in time
//    order, as they reach them);
//  - the L2 tags are looked up and updated line by line (hits, misses, write-allocate, sector
//    masks, evictions, dirty state: hit rates come from the real tag state), but at acceptance
//    rather than at the line's arrival tick, so requests in flight together meet the tags in
//    acceptance order;
//  - a miss takes the earliest-free of its slice's MSHRs (chip.l2.mshrs: the slice's miss
//    concurrency) and a read that finds its line's fill still on its way waits for it (a merge);
//  - the fill is scheduled on its HBM pseudo-channel at once (bulk_channel.h: the controller's
//    bank, row, bus and refresh timing, the bus and activates as busy calendars instead of
//    FR-FCFS over a window of queued requests);
//  - dirty victims wait per channel and are written in batches from write_high down to write_low
//    (the controller's drain), or all when the memory system goes idle (a controller writes when no read waits); an
//    access whose victim finds write_queue_depth writes queued ahead of it goes on only once the
//    oldest of them has left the queue (the exact model's back-pressure);
//  - the data of a miss returns through the core's GM port as in finish_miss().
// The request then completes with its last line: one event instead of several per line.
// A burst (sim/mem_if.h: a DMA instruction's requests, or a traffic generator's next window of
// them) is served the same way request by request, each at the time the client's request slots
// would issue it (the chain's slot times), by an internal event of the memory system (so the
// service still meets requests in time order, as when they come one by one), and completes
// once: no submit, completion or client wake-up per request.
#include <algorithm>

#include "models/mem/memory_system.h"
#include "models/mem/sorted_ring.h"
#include "sim/sc_time_util.h"

namespace sfumato::mem {

void MemorySystem::bulk_begin(uint32_t port, uint64_t now) {
    m_bulk_now = now;
    // No request is served before now less the run-ahead (a burst's span may run that far
    // ahead of a request handed over later): calendar entries ending before that are dropped.
    m_bulk_floor = now - std::min(now, m_runahead_ps);
    m_bulk_gm[port].set_floor(m_bulk_floor);
}

void MemorySystem::bulk_accept(MemRequest& r) {
    const uint64_t now = m_in_runahead_cb ? m_cb_tick : now_tick().v;
    bulk_begin(r.port, now);
    complete(r, bulk_request(r, r.addr, r.bytes, now));
}

void MemorySystem::bulk_burst(MemRequest& r) {
    MemBurst& b = *r.burst;
    MemBurstChain& c = *b.chain;
    b.submitted = m_in_runahead_cb ? m_cb_tick : now_tick().v;
    b.next = 0;
    b.end = b.submitted;
    r.next = nullptr;
    const bool idle = c.head == nullptr;
    if (idle) c.head = &r;
    else c.tail->next = &r;
    c.tail = &r;
    if (idle) bulk_burst_next(r, std::max(b.submitted, c.last_issue + b.gap));
}

void MemorySystem::bulk_burst_next(MemRequest& r, uint64_t after) {
    // Issue times never go down: each span takes the earliest free slot, which it then holds
    // until its data is back, as the client's request slots would.
    const MemBurstChain& c = *r.burst->chain;
    const uint64_t t = std::max(after, c.slots[c.first]);
    // The span's tag set, brought into the host cache until the event runs.
    const uint64_t line = line_of(r.burst->spans[r.burst->next].addr);
    m_bulk_slice[slice_of(line)].tags->prefetch(line);
    push(t, Ev::BurstSpan, &r);
}

void MemorySystem::bulk_span(MemRequest& r, uint64_t t) {
    MemBurst& b = *r.burst;
    MemBurstChain& c = *b.chain;
    bulk_begin(r.port, t);
    const MemSpan& sp = b.spans[b.next];
    const uint64_t done = bulk_request(r, sp.addr, sp.bytes, t);
    // The span held the earliest free slot until its data is back.
    ring_replace_least(c.slots.data(), static_cast<uint32_t>(c.slots.size()), c.first, done,
                       [](uint64_t x) { return x; });
    if (!r.write) sample_read_latency(done - t);
    b.end = std::max(b.end, done);
    c.last_issue = t;
    if (++b.next < b.spans.size()) {
        bulk_burst_next(r, t);
        return;
    }
    // All issued: the chain's next burst goes on, and this one completes once.
    c.head = r.next;
    if (!c.head) c.tail = nullptr;
    r.next = nullptr;
    if (c.head) {
        const MemBurst& nb = *c.head->burst;
        bulk_burst_next(*c.head, std::max(nb.submitted, t + nb.gap));
    }
    complete(r, b.done_at_next_issue ? std::max(t, c.slots[c.first]) : b.end);
}

uint64_t MemorySystem::bulk_request(MemRequest& r, uint64_t addr, uint32_t bytes, uint64_t issue) {
    const uint32_t lb = m_l2.g.line_bytes;
    Port& p = m_port[r.port];
    const uint64_t end = addr + bytes;
    uint64_t done = 0;
    for (uint64_t a = addr; a < end;) {
        const uint64_t next = (line_of(a) + 1) << m_line_shift;
        const uint32_t n = static_cast<uint32_t>(std::min(end, next) - a);
        const bool whole = n == lb;
        uint64_t start;
        if (r.write) {
            start = std::max(issue, p.wr_free);
            p.wr_free = start + (whole ? m_bulk_line_wr : ser(n, m_wr_rate));
        } else {
            start = std::max(issue, p.rd_free);
            p.rd_free = start + (whole ? m_bulk_line_rd : ser(n, m_rd_rate));
        }
        BulkSlice& s = m_bulk_slice[slice_of(line_of(a))];
        const uint64_t at = std::max(start + m_noc_ps, s.free);
        s.free = at + (whole ? m_bulk_line_slice : ser(n, m_slice_rate)) * (r.atomic_add ? 2 : 1);
        done = std::max(done, bulk_line(r, s, a, n, at));
        a = next;
    }
    return done;
}

uint64_t MemorySystem::bulk_line(MemRequest& r, BulkSlice& s, uint64_t addr, uint32_t bytes, uint64_t at) {
    const uint64_t line = line_of(addr);
    const uint64_t mask = s.tags->sector_mask(addr, bytes);
    ReqStats& st = *m_req[static_cast<size_t>(r.who)];
    ++st.accesses;
    st.bytes += bytes;
    if (m_trace && m_trace->on(TraceLevel::Mem)) trace_tick(at);
    ++m_trace_accesses;
    L2Tags::Probe probe;
    uint32_t slot = s.tags->find(line, probe);
    if (r.write && !r.atomic_add) {
        uint64_t go = at;
        if (slot != L2Tags::kNone) {
            ++st.hits;
            ++m_trace_hits;
        } else {
            ++st.misses;
            L2Tags::Victim v;
            slot = s.tags->allocate(line, probe, v);
            if (v.evicted) {
                ++st.evictions;
                if (v.dirty) go = bulk_write_back(v, at);
            }
        }
        s.tags->add_dirty(slot, mask);
        return go + m_hit_ps;
    }
    // The slice's MSHRs (a ring sorted by when they free): a fill of this line still on its way
    // has reserved its way, so only a line in the tags can have one; of several, the one that
    // lands last (from the back: the first found).
    const uint32_t nm = m_l2.mshrs;
    const BulkMshr* pend = nullptr;
    if (slot != L2Tags::kNone)
        for (uint32_t i = nm, j = s.first; i-- > 0;) {
            const BulkMshr& m = s.mshr[j == 0 ? (j = nm - 1) : --j];
            if (m.ready <= at) break;
            if (m.line == line) {
                pend = &m;
                break;
            }
        }
    const uint64_t have = slot != L2Tags::kNone ? s.tags->valid(slot) : 0;
    const uint64_t extra = r.atomic_add ? m_atomic_ps : 0;
    if ((have & mask) == mask) {
        if (pend) {  // merged into the fill on its way: served from the slice when it lands
            ++st.misses;
            ++st.merges;
            if (r.atomic_add) s.tags->add_dirty(slot, mask);
            return pend->ready + m_hit_ps + extra;
        }
        ++st.hits;
        ++m_trace_hits;
        if (r.atomic_add) s.tags->add_dirty(slot, mask);
        return at + m_hit_ps + extra;
    }
    ++st.misses;
    uint64_t start = std::max(at, s.mshr[s.first].ready);
    if (pend) start = std::max(start, pend->ready);  // sectors that fill does not bring: after it
    const uint64_t fetch = mask & ~have;
    // The fill's address is decoded first, so its channel's state is on its way into the host
    // cache while the tags are updated (the fill's time is set when it is served).
    HbmReq& h = m_bulk_fill;
    const uint32_t first = static_cast<uint32_t>(__builtin_ctzll(fetch));
    const uint32_t last = 63u - static_cast<uint32_t>(__builtin_clzll(fetch));
    h.addr = line * m_l2.g.line_bytes + uint64_t(first) * m_l2.g.sector_bytes;
    h.bytes = (last - first + 1) * m_l2.g.sector_bytes;
    h.write = false;
    decode(h, 0);
    m_bulk_ch[h.da.pc].prefetch(h.bank_index);
    if (slot == L2Tags::kNone) {
        L2Tags::Victim v;
        slot = s.tags->allocate(line, probe, v);
        if (v.evicted) {
            ++st.evictions;
            if (v.dirty) start = std::max(start, bulk_write_back(v, start));
        }
    }
    s.tags->add_valid(slot, fetch);
    const uint64_t ready = bulk_hbm(h, start) + m_frontend_ps;
    ring_replace_least(s.mshr, nm, s.first, BulkMshr{line, ready}, [](const BulkMshr& m) { return m.ready; });
    if (r.atomic_add) {
        s.tags->add_dirty(slot, mask);
        return ready + m_hit_ps + extra;
    }
    // The line's data reaches the core through its GM port (finish_miss).
    const uint64_t dur = bytes == m_l2.g.line_bytes ? m_bulk_line_gm : ser(bytes, m_gm_rate);
    return m_bulk_gm[r.port].reserve(ready + m_hit_ps, dur) + dur;
}

uint64_t MemorySystem::bulk_hbm(HbmReq& h, uint64_t t) {
    h.arrive = Tick(t);
    BulkChannel& ch = m_bulk_ch[h.da.pc];
    ch.set_floor(m_bulk_floor);
    const uint64_t done = ch.serve(h, Tick(t)).v;
    if (m_trace && m_trace->on(TraceLevel::Mem)) {
        trace_tick(t);
        m_trace_bytes[h.da.pc / m_hbm.pseudo_channels] += h.bytes;
    }
    return done;
}

uint64_t MemorySystem::bulk_write_back(const L2Tags::Victim& v, uint64_t t) {
    ++m_writebacks;
    HbmReq h;
    const uint32_t first = static_cast<uint32_t>(__builtin_ctzll(v.dirty));
    const uint32_t last = 63u - static_cast<uint32_t>(__builtin_clzll(v.dirty));
    h.addr = v.line_addr * m_l2.g.line_bytes + uint64_t(first) * m_l2.g.sector_bytes;
    h.bytes = (last - first + 1) * m_l2.g.sector_bytes;
    h.write = true;
    decode(h, t);
    const uint32_t pc = h.da.pc;
    BulkWrites& w = m_bulk_wr[pc];
    const uint64_t depth = w.left.size();
    const uint64_t n = w.count++;
    uint64_t go = t;
    if (n >= depth) {
        // Room in the write queue once the write depth places ahead has left it.
        if (w.waiting.size() >= depth) bulk_drain(pc);  // that write still waits: it goes first
        go = std::max(t, w.left[n % depth]);
        if (go > t) ++m_wb_stalls;
    }
    h.arrive = Tick(go);
    w.waiting.push_back(h);
    ++m_bulk_waiting;
    // The controller's drain: from write_high waiting down to write_low.
    if (w.waiting.size() >= m_hbm.write_high) bulk_drain(pc, std::min<size_t>(m_hbm.write_low, w.waiting.size() - 1));
    return go;
}

uint64_t MemorySystem::bulk_drain(uint32_t pc, size_t keep) {
    BulkWrites& w = m_bulk_wr[pc];
    const uint64_t depth = w.left.size();
    uint64_t n = w.count - w.waiting.size();  // the number of the first waiting write
    uint64_t end = 0;
    BulkChannel& ch = m_bulk_ch[pc];
    ch.set_floor(m_bulk_floor);
    ch.note_drain();
    const size_t last = w.waiting.size() - 1 - keep;
    for (size_t i = 0; i <= last; ++i) {
        HbmReq& h = w.waiting[i];
        const uint64_t t = std::max(h.arrive.v, m_bulk_now);
        // The bus turns to writes before the batch and back to reads after it.
        const uint32_t turn = (i == 0 ? m_hbm.t.rtw : 0) + (i == last ? m_hbm.t.wtr_l : 0);
        end = std::max(end, ch.serve(h, Tick(t), turn).v);
        // It left the queue when its first column command issued.
        w.left[n++ % depth] = std::max(t, h.first_col_ck * m_hbm.t.tck_ps);
        if (m_trace && m_trace->on(TraceLevel::Mem)) {
            trace_tick(t);
            m_trace_bytes[pc / m_hbm.pseudo_channels] += h.bytes;
        }
    }
    m_bulk_waiting -= last + 1;
    w.waiting.erase(w.waiting.begin(), w.waiting.begin() + static_cast<std::ptrdiff_t>(last + 1));
    m_bulk_write_end = end;
    return end;
}

}  // namespace sfumato::mem
