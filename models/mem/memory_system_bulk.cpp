// The bulk service of the memory system (chip.mem.service = bulk; memory_system.h): an
// approximation of the exact model for speed. A request is served whole when it is accepted,
// its lines one after the other, from the same parameters and state the exact model uses:
//  - the core's read or write port and the slice's port are busy calendars (busy_calendar.h)
//    charged with submit_line()'s serialisation times, the NoC latency between them: a request
//    handed over later may take an earlier gap (bursts book their requests ahead);
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
// them) is served the same way request by request, each issued when the client's request slots
// allow (the chain's slot times), and completes once: one event per burst.
#include <algorithm>

#include "models/mem/memory_system.h"
#include "sim/sc_time_util.h"

namespace sfumato::mem {

uint64_t MemorySystem::bulk_begin(uint32_t port) {
    const uint64_t now = m_in_runahead_cb ? m_cb_tick : now_tick().v;
    m_bulk_now = now;
    m_bulk_gm[port].set_floor(now);
    m_bulk_rdp[port].set_floor(now);
    m_bulk_wrp[port].set_floor(now);
    return now;
}

void MemorySystem::bulk_accept(MemRequest& r) {
    const uint64_t now = bulk_begin(r.port);
    complete(r, bulk_request(r, r.addr, r.bytes, now));
}

void MemorySystem::bulk_burst(MemRequest& r) {
    const uint64_t now = bulk_begin(r.port);
    MemBurst& b = *r.burst;
    MemBurstChain& c = *b.chain;
    std::vector<uint64_t>& slots = c.slots;  // a min-heap
    const auto later = [](uint64_t x, uint64_t y) { return x > y; };
    uint64_t t = std::max(now, c.last_issue + b.gap);
    uint64_t end = now;
    // The tag sets a few spans ahead are brought into the host cache while the current one is
    // served (a burst's lines are spread over the slices: each set is a cache miss otherwise).
    constexpr size_t kAhead = 4;
    const size_t n = b.spans.size();
    const auto prefetch = [this](uint64_t addr) {
        const uint64_t line = line_of(addr);
        m_slices[slice_of(line)].tags->prefetch(line);
    };
    for (size_t i = 1; i < std::min(n, kAhead); ++i) prefetch(b.spans[i].addr);
    for (size_t i = 0; i < n; ++i) {
        const MemSpan& sp = b.spans[i];
        if (i + kAhead < n) prefetch(b.spans[i + kAhead].addr);
        // Issue times never go down: each takes the earliest free slot, which it then holds
        // until its data is back (a later time than the slot's), as the client's slots would.
        const uint64_t issue = std::max(t, slots.front());
        const uint64_t done = bulk_request(r, sp.addr, sp.bytes, issue);
        std::pop_heap(slots.begin(), slots.end(), later);
        slots.back() = done;
        std::push_heap(slots.begin(), slots.end(), later);
        if (!r.write) sample_read_latency(done - issue);
        end = std::max(end, done);
        t = issue;
    }
    c.last_issue = t;
    b.end = end;
    complete(r, b.done_at_next_issue ? std::max(t, slots.front()) : end);
}

uint64_t MemorySystem::bulk_request(MemRequest& r, uint64_t addr, uint32_t bytes, uint64_t issue) {
    const uint32_t lb = m_l2.g.line_bytes;
    BusyCalendar& path = r.write ? m_bulk_wrp[r.port] : m_bulk_rdp[r.port];
    const FastDiv32& rate = r.write ? m_wr_rate : m_rd_rate;
    const uint64_t end = addr + bytes;
    uint64_t done = 0;
    for (uint64_t a = addr; a < end;) {
        const uint64_t next = (a / lb + 1) * lb;
        const uint32_t n = static_cast<uint32_t>(std::min(end, next) - a);
        const uint64_t start = path.reserve(issue, ser(n, rate));
        BusyCalendar& slice = m_bulk_slice[slice_of(line_of(a))];
        slice.set_floor(m_bulk_now);
        const uint64_t at = slice.reserve(start + m_noc_ps, ser(n, m_slice_rate) * (r.atomic_add ? 2 : 1));
        done = std::max(done, bulk_line(r, a, n, at));
        a = next;
    }
    return done;
}

uint64_t MemorySystem::bulk_line(MemRequest& r, uint64_t addr, uint32_t bytes, uint64_t at) {
    const uint64_t line = line_of(addr);
    const uint32_t si = slice_of(line);
    Slice& s = m_slices[si];
    const uint64_t mask = s.tags->sector_mask(addr, bytes);
    ReqStats& st = *m_req[static_cast<size_t>(r.who)];
    ++st.accesses;
    st.bytes += bytes;
    if (m_trace && m_trace->on(TraceLevel::Mem)) trace_tick(at);
    ++m_trace_accesses;
    uint32_t slot = s.tags->find(line, true);
    if (r.write && !r.atomic_add) {
        uint64_t go = at;
        if (slot != L2Tags::kNone) {
            ++st.hits;
            ++m_trace_hits;
        } else {
            ++st.misses;
            L2Tags::Victim v;
            slot = s.tags->allocate(line, v);
            if (v.evicted) {
                ++st.evictions;
                if (v.dirty) go = bulk_write_back(v, at);
            }
        }
        s.tags->add_dirty(slot, mask);
        return go + m_hit_ps;
    }
    // The slice's MSHRs (a heap, the one that frees first on top): a fill of this line still
    // on its way has reserved its way, so only a line in the tags can have one.
    std::vector<BulkMshr>& ms = m_bulk_mshr[si];
    const BulkMshr* pend = nullptr;
    if (slot != L2Tags::kNone)
        for (const BulkMshr& m : ms)
            if (m.line == line && m.ready > at) {
                pend = &m;
                break;
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
    uint64_t start = std::max(at, ms.front().ready);
    if (pend) start = std::max(start, pend->ready);  // sectors that fill does not bring: after it
    const uint64_t fetch = mask & ~have;
    if (slot == L2Tags::kNone) {
        L2Tags::Victim v;
        slot = s.tags->allocate(line, v);
        if (v.evicted) {
            ++st.evictions;
            if (v.dirty) start = std::max(start, bulk_write_back(v, start));
        }
    }
    s.tags->add_valid(slot, fetch);
    HbmReq h;
    const uint32_t first = static_cast<uint32_t>(__builtin_ctzll(fetch));
    const uint32_t last = 63u - static_cast<uint32_t>(__builtin_clzll(fetch));
    h.addr = line * m_l2.g.line_bytes + uint64_t(first) * m_l2.g.sector_bytes;
    h.bytes = (last - first + 1) * m_l2.g.sector_bytes;
    h.write = false;
    const uint64_t ready = bulk_hbm(h, start) + m_frontend_ps;
    const auto later = [](const BulkMshr& a, const BulkMshr& b) { return a.ready > b.ready; };
    std::pop_heap(ms.begin(), ms.end(), later);
    ms.back() = BulkMshr{line, ready};
    std::push_heap(ms.begin(), ms.end(), later);
    if (r.atomic_add) {
        s.tags->add_dirty(slot, mask);
        return ready + m_hit_ps + extra;
    }
    // The line's data reaches the core through its GM port (finish_miss).
    const uint64_t dur = ser(bytes, m_gm_rate);
    return m_bulk_gm[r.port].reserve(ready + m_hit_ps, dur) + dur;
}

uint64_t MemorySystem::bulk_hbm(HbmReq& h, uint64_t t) {
    decode(h, t);
    BulkChannel& ch = m_bulk_ch[h.da.pc];
    ch.set_floor(m_bulk_now);
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
    ch.set_floor(m_bulk_now);
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
