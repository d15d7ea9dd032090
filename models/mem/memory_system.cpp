#include "models/mem/memory_system.h"

#include <algorithm>

#include "sim/error.h"
#include "sim/sc_time_util.h"

namespace sfumato::mem {

MemorySystem::ReqStats::ReqStats(StatGroup* parent, const char* name)
    : g(parent, name),
      accesses(g, "accesses", "requests", "L2 accesses"),
      hits(g, "hits", "requests", "L2 hits"),
      misses(g, "misses", "requests", "L2 misses"),
      evictions(g, "evictions", "lines", "lines evicted to make room"),
      bytes(g, "bytes", "B", "bytes requested"),
      merges(g, "mshr_merges", "requests", "misses merged into an outstanding miss to the same line") {}

MemorySystem::MemorySystem(sc_core::sc_module_name name, const MemSysParams& p, StatGroup* parent_stats,
                           TraceHub* trace, ClockDomain core_clock, uint32_t ports)
    : sc_core::sc_module(name),
      m_hbm(p.hbm),
      m_l2(p.l2),
      m_noc(p.noc),
      m_clk(core_clock),
      m_ports_n(ports),
      m_trace(trace),
      m_stats(parent_stats, basename()),
      m_l2_stats(&m_stats, "l2"),
      m_hbm_stats(&m_stats, "hbm"),
      m_writebacks(m_l2_stats, "writebacks", "lines", "dirty lines written back to HBM"),
      m_wb_stalls(m_l2_stats, "writeback_stalls", "lines",
                  "write-backs that waited for room in a full HBM write queue (their access waited too)"),
      m_read_latency(m_stats, "read_latency", "ns", "submit to completion of reads", 0.0, 5.0, 4000),
      m_read_latency_avg(m_stats, "read_latency_avg", "ns", "mean read latency") {
    m_frontend_ps = p.frontend_ps;
    m_runahead_ps = uint64_t(m_noc.latency) * m_clk.period_ps();
    m_line_shift = static_cast<uint32_t>(__builtin_ctz(m_l2.g.line_bytes));
    m_slice_div = FastDiv32(m_l2.g.slices);
    m_wr_rate = FastDiv32(m_noc.l2_write_bytes_per_cycle);
    m_rd_rate = FastDiv32(m_noc.l2_read_bytes_per_cycle);
    m_slice_rate = FastDiv32(m_l2.slice_bytes_per_cycle);
    m_gm_rate = FastDiv32(m_noc.gm_bytes_per_cycle);
    m_trace_window_ps = p.trace_window_ps;
    m_map = make_address_map(m_hbm, "chip.hbm.address_map");
    m_sched = make_hbm_scheduler(m_hbm.scheduler, "chip.hbm.scheduler");
    const uint32_t pcs = m_hbm.total_pcs();
    m_channels.reserve(pcs);
    for (uint32_t i = 0; i < pcs; ++i) m_channels.emplace_back(m_hbm, *m_sched, uint64_t(i) * m_hbm.t.refi / pcs);
    m_wake.assign(pcs, 0);
    m_wb_wait.assign(pcs, {});
    m_out.reserve(64);
    m_port.resize(ports);
    if (m_hbm.capacity_bytes / m_l2.g.line_bytes >= (uint64_t(1) << 32) - 1)
        throw ConfigError("chip.l2.line_bytes", "too small for the capacity: more than 2^32 lines");
    m_slices.resize(m_l2.g.slices);
    for (uint32_t s = 0; s < m_l2.g.slices; ++s) {
        m_slices[s].tags = std::make_unique<L2Tags>(m_l2.g, make_replacement(m_l2.replacement, "chip.l2.replacement",
                                                                             m_l2.g.sets, m_l2.g.ways));
        m_slices[s].mshrs.resize(m_l2.mshrs);
        m_slices[s].mshr_line.assign(m_l2.mshrs, kNoLine);
        for (size_t i = m_l2.mshrs; i-- > 0;) m_slices[s].free_mshrs.push_back(&m_slices[s].mshrs[i]);
        for (auto& m : m_slices[s].mshrs) {
            m.slice = s;
            m.fill.owner = &m;
            m.fill.kind = kFill;
        }
    }
    for (size_t i = 0; i < m_req.size(); ++i)
        m_req[i] = std::make_unique<ReqStats>(&m_l2_stats, requester_name(static_cast<Requester>(i)));
    auto sum = [this](uint64_t HbmChannelStats::*f) {
        return [this, f] { return static_cast<double>(hbm_totals().*f); };
    };
    auto add = [this](const char* n, const char* unit, const char* d, std::function<double()> fn) {
        m_formulas.push_back(std::make_unique<Formula>(m_hbm_stats, n, unit, d, std::move(fn)));
    };
    add("reads", "requests", "read requests served", sum(&HbmChannelStats::reads));
    add("writes", "requests", "write requests served", sum(&HbmChannelStats::writes));
    add("bytes_read", "B", "bytes read", sum(&HbmChannelStats::bytes_read));
    add("bytes_written", "B", "bytes written", sum(&HbmChannelStats::bytes_written));
    add("row_hits", "requests", "requests that found their row open", sum(&HbmChannelStats::row_hits));
    add("row_misses", "requests", "requests to a closed bank", sum(&HbmChannelStats::row_misses));
    add("row_conflicts", "requests", "requests that closed another row", sum(&HbmChannelStats::row_conflicts));
    add("activates", "commands", "activate commands", sum(&HbmChannelStats::activates));
    add("refreshes", "commands", "refresh windows that took effect", sum(&HbmChannelStats::refreshes));
    add("write_drains", "batches", "write drains started by the high watermark", sum(&HbmChannelStats::write_drains));
    add("turnarounds", "switches", "read-to-write and write-to-read switches of the data bus", sum(&HbmChannelStats::turnarounds));
    add("bursts", "commands", "column accesses", sum(&HbmChannelStats::bursts));
    add("row_hit_rate", "ratio", "column accesses that found their row open / all column accesses", [this] { return row_hit_rate(); });
    add("peak_gbps", "GB/s", "channels x bus width x data rate", [this] { return peak_gbps(); });
    m_formulas.push_back(std::make_unique<Formula>(m_l2_stats, "hit_rate", "ratio", "L2 hits / accesses", [this] { return l2_hit_rate(); }));
    SC_METHOD(process);
    sensitive << m_wake_ev;
    dont_initialize();
}

MemorySystem::~MemorySystem() = default;

HbmChannelStats MemorySystem::hbm_totals() const {
    HbmChannelStats t;
    for (const auto& c : m_channels) {
        const auto& s = c.stats();
        t.reads += s.reads;
        t.writes += s.writes;
        t.bytes_read += s.bytes_read;
        t.bytes_written += s.bytes_written;
        t.row_hits += s.row_hits;
        t.row_misses += s.row_misses;
        t.row_conflicts += s.row_conflicts;
        t.activates += s.activates;
        t.refreshes += s.refreshes;
        t.busy_ck += s.busy_ck;
        t.bursts += s.bursts;
        t.burst_row_hits += s.burst_row_hits;
        t.write_drains += s.write_drains;
        t.turnarounds += s.turnarounds;
    }
    return t;
}

double MemorySystem::row_hit_rate() const {
    const auto t = hbm_totals();
    return t.bursts ? static_cast<double>(t.burst_row_hits) / static_cast<double>(t.bursts) : 0.0;
}
uint64_t MemorySystem::l2_hits() const {
    uint64_t n = 0;
    for (const auto& r : m_req) n += r->hits.value();
    return n;
}
uint64_t MemorySystem::l2_misses() const {
    uint64_t n = 0;
    for (const auto& r : m_req) n += r->misses.value();
    return n;
}
double MemorySystem::l2_hit_rate() const {
    const uint64_t h = l2_hits(), m = l2_misses();
    return h + m ? static_cast<double>(h) / static_cast<double>(h + m) : 0.0;
}

void MemorySystem::push(uint64_t tick, Ev kind, void* ptr, uint32_t arg) {
    m_events.push(tick, ptr, arg, static_cast<uint8_t>(kind));
    if (!m_in_process && tick < m_scheduled) {
        m_scheduled = tick;
        const uint64_t now = now_tick().v;
        m_wake_ev.notify(to_sc_time(Tick(tick > now ? tick - now : 0)));
    }
}

void MemorySystem::record_done(MemRequest& r, uint64_t t) {
    r.done_tick = Tick(t);
    if (r.write) return;
    const double ns = static_cast<double>(t - r.issue_tick.v) / 1000.0;
    m_read_latency.sample(ns);
    m_read_latency_avg.sample(ns);
}

void MemorySystem::process() {
    m_in_process = true;
    ++m_activations;
    const uint64_t now = now_tick().v;
    // Run-ahead: a request submitted at SystemC time >= now reaches its slice no earlier than
    // now + m_runahead_ps, so internal events (L2 lookups, controller decisions, fills) before
    // that tick cannot be affected by anything outside; they run now, in (tick, sequence) order,
    // each at its own tick, exactly as if the process had woken for it. Only a client callback
    // (ClientDone) needs SystemC time to be its tick: the batch stops at the first later one.
    const uint64_t limit = now + m_runahead_ps - (m_runahead_ps ? 1 : 0);
    WheelItem it;
    uint64_t next;
    while (m_events.pop_due(now, limit, static_cast<uint8_t>(Ev::ClientDone), it, next)) {
        const uint64_t t = std::max(it.tick, now);
        switch (static_cast<Ev>(it.kind)) {
            case Ev::L2Access: l2_access(*static_cast<MemRequest*>(it.ptr), t, it.arg != 0); break;
            case Ev::CtrlWake:
                if (m_wake[it.arg] == it.tick) {
                    m_wake[it.arg] = 0;
                    run_channel(it.arg, t);
                }
                break;
            case Ev::HbmDone: hbm_done(*static_cast<HbmReq*>(it.ptr), t); break;
            case Ev::ClientDone: {
                MemRequest& r = *static_cast<MemRequest*>(it.ptr);
                record_done(r, now);
                r.client->mem_done(r);
                break;
            }
            case Ev::RunaheadDone: {
                // As ClientDone, at the event's own tick (SystemC time may still be earlier).
                MemRequest& r = *static_cast<MemRequest*>(it.ptr);
                record_done(r, t);
                m_in_runahead_cb = true;
                m_cb_tick = t;
                m_last_runahead = t;
                r.client->mem_done(r);
                m_in_runahead_cb = false;
                break;
            }
        }
    }
    m_in_process = false;
    m_scheduled = next;
    // SystemC time still reaches every completion's tick (the end of a run is the same time).
    if (m_last_runahead > now && m_last_runahead < m_scheduled) m_scheduled = m_last_runahead;
    if (m_scheduled != EventWheel::kEmpty) m_wake_ev.notify(to_sc_time(Tick(m_scheduled - now)));
}

void MemorySystem::submit(MemRequest& r) {
    if (r.port >= m_ports_n) throw ModelError(name(), "request from port " + std::to_string(r.port) + " but the memory system has " + std::to_string(m_ports_n) + " ports");
    if (r.bytes == 0 || r.addr + r.bytes > m_hbm.capacity_bytes)
        throw ModelError(name(), "request of " + std::to_string(r.bytes) + " B at " + std::to_string(r.addr) + " is empty or beyond the device capacity");
    const uint32_t line = m_l2.g.line_bytes;
    if ((r.addr & (line - 1)) + r.bytes <= line) {  // line: a power of two
        submit_line(r);
        return;
    }
    Split& sp = *get_split();
    sp.parent = &r;
    const uint64_t end = r.addr + r.bytes;
    uint32_t n = 0;
    for (uint64_t a = r.addr; a < end; a = (a / line + 1) * line) ++n;
    if (sp.children.size() < n) sp.children.resize(n);  // grows only while the pool warms up
    sp.remaining = n;
    uint32_t i = 0;
    for (uint64_t a = r.addr; a < end; a = (a / line + 1) * line, ++i) {
        MemRequest& c = sp.children[i];
        c.addr = a;
        c.bytes = static_cast<uint32_t>(std::min<uint64_t>(end, (a / line + 1) * line) - a);
        c.write = r.write;
        c.atomic_add = r.atomic_add;
        c.who = r.who;
        c.port = r.port;
        c.issue_tick = r.issue_tick;
        c.client = &sp;
        submit_line(c);
    }
}

MemorySystem::Split* MemorySystem::get_split() {
    if (!m_split_free.empty()) {
        Split* s = m_split_free.back();
        m_split_free.pop_back();
        return s;
    }
    m_split_pool.emplace_back();
    m_split_pool.back().sys = this;
    return &m_split_pool.back();
}

void MemorySystem::Split::mem_done(MemRequest&) {
    if (--remaining) return;
    MemRequest& p = *parent;
    p.done_tick = now_tick();
    sys->m_split_free.push_back(this);
    p.client->mem_done(p);
}

void MemorySystem::submit_line(MemRequest& r) {
    const uint64_t now = m_in_runahead_cb ? m_cb_tick : now_tick().v;
    Port& p = m_port[r.port];
    uint64_t start;
    if (r.write) {
        start = std::max(now, p.wr_free);
        p.wr_free = start + ser(r.bytes, m_wr_rate);
    } else {
        start = std::max(now, p.rd_free);
        p.rd_free = start + ser(r.bytes, m_rd_rate);
    }
    const uint64_t arrive = start + m_noc.latency * m_clk.period_ps();
    const uint64_t line = line_of(r.addr);
    Slice& s = m_slices[slice_of(line)];
    s.tags->prefetch(line);  // the lookup runs a few events later: have the set in cache by then
    const uint64_t at = std::max(arrive, s.free);
    s.free = at + ser(r.bytes, m_slice_rate);
    r.next = nullptr;
    push(at, Ev::L2Access, &r);
}

void MemorySystem::l2_access(MemRequest& r, uint64_t t, bool retry) {
    const uint64_t line = line_of(r.addr);
    Slice& s = m_slices[slice_of(line)];
    const uint64_t mask = s.tags->sector_mask(r.addr, r.bytes);
    ReqStats& st = *m_req[static_cast<size_t>(r.who)];
    if (!retry) {
        ++st.accesses;
        st.bytes += r.bytes;
        if (m_trace && m_trace->on(TraceLevel::Mem)) trace_tick(t);
        ++m_trace_accesses;
    }
    uint32_t slot = s.tags->find(line, true);
    if (r.write) {
        if (slot != L2Tags::kNone) {
            ++st.hits;
            ++m_trace_hits;
        } else {
            ++st.misses;
            L2Tags::Victim v;
            slot = s.tags->allocate(line, v);
            if (v.evicted) {
                ++st.evictions;
                note_eviction(s, v);
                if (v.dirty && !write_back(v, t, &r, kWaitWrite)) {
                    // The data is in the line; the write completes once the victim is queued.
                    s.tags->add_dirty(slot, mask);
                    return;
                }
            }
        }
        s.tags->add_dirty(slot, mask);
        complete(r, t + uint64_t(m_l2.hit_latency) * m_clk.period_ps());
        return;
    }
    // A line whose fill is outstanding already shows the fill's sectors valid (set when the miss
    // reserved the way, while the line was in cache); they do not count until the fill lands.
    const uint32_t h = mshr_hash(line);
    Mshr* pend = s.busy_hash[h] ? find_mshr(s, line) : nullptr;
    uint64_t have = slot != L2Tags::kNone ? s.tags->valid(slot) : 0;
    if (pend && !pend->stolen) have &= ~pend->fetch_mask;
    if ((have & mask) == mask) {
        if (!retry) {
            ++st.hits;
            ++m_trace_hits;
        }
        complete(r, t + uint64_t(m_l2.hit_latency) * m_clk.period_ps());
        return;
    }
    if (!retry) ++st.misses;
    if (pend) {
        if (!retry) ++st.merges;
        pend->tail->next = &r;
        pend->tail = &r;
        r.next = nullptr;
        return;
    }
    r.next = nullptr;
    if (s.free_mshrs.empty()) {
        if (s.blocked_tail) s.blocked_tail->next = &r;
        else s.blocked_head = &r;
        s.blocked_tail = &r;
        return;
    }
    Mshr& m = *s.free_mshrs.back();
    s.free_mshrs.pop_back();
    ++s.busy_hash[h];
    m.busy = true;
    s.mshr_line[static_cast<size_t>(&m - s.mshrs.data())] = line;
    m.stolen = false;
    m.line_addr = line;
    m.fetch_mask = mask & ~have;
    m.valid_after = have | m.fetch_mask;
    bool fill_waits = false;
    if (slot == L2Tags::kNone) {
        // Reserve the way now.
        L2Tags::Victim v;
        slot = s.tags->allocate(line, v);
        if (v.evicted) {
            ++st.evictions;
            note_eviction(s, v);
            if (v.dirty) fill_waits = !write_back(v, t, &m, kWaitFill);
        }
    }
    s.tags->add_valid(slot, m.fetch_mask);
    m.slot = slot;
    m.head = m.tail = &r;
    const uint32_t first = static_cast<uint32_t>(__builtin_ctzll(m.fetch_mask));
    const uint32_t last = 63u - static_cast<uint32_t>(__builtin_clzll(m.fetch_mask));
    m.fill.addr = line * m_l2.g.line_bytes + uint64_t(first) * m_l2.g.sector_bytes;
    m.fill.bytes = (last - first + 1) * m_l2.g.sector_bytes;
    m.fill.write = false;
    if (!fill_waits) hbm_enqueue(m.fill, t);
}

void MemorySystem::complete(MemRequest& r, uint64_t t) {
    push(t, m_runahead_client && r.client == m_runahead_client ? Ev::RunaheadDone : Ev::ClientDone, &r);
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

void MemorySystem::finish_miss(MemRequest& r, uint64_t t) {
    // The data reaches the core through its GM port after the slice's return latency.
    Port& p = m_port[r.port];
    const uint64_t ready = t + uint64_t(m_l2.hit_latency) * m_clk.period_ps();
    const uint64_t start = std::max(ready, p.gm_free);
    p.gm_free = start + ser(r.bytes, m_gm_rate);
    complete(r, p.gm_free);
}

void MemorySystem::decode(HbmReq& r, uint64_t t) {
    r.da = m_map->decode(r.addr);
    r.bank_index = r.da.bg * m_hbm.banks_per_group + r.da.bank;
    r.arrive = Tick(t);
}

void MemorySystem::hbm_enqueue(HbmReq& r, uint64_t t) {
    decode(r, t);
    m_channels[r.da.pc].enqueue(&r);
    run_channel(r.da.pc, t);
}

void MemorySystem::wake_at(uint32_t pc, uint64_t t) {
    if (m_wake[pc] == 0 || t < m_wake[pc]) {
        m_wake[pc] = t;
        push(t, Ev::CtrlWake, nullptr, pc);
    }
}

void MemorySystem::run_channel(uint32_t pc, uint64_t t) {
    uint64_t next;
    for (;;) {
        m_out.clear();
        next = m_channels[pc].run(Tick(t), m_out);
        for (HbmReq* r : m_out) push(r->done.v + m_frontend_ps, Ev::HbmDone, r);
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
            complete(*static_cast<MemRequest*>(who), t + uint64_t(m_l2.hit_latency) * m_clk.period_ps());
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
    ++m_writebacks;
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
    uint64_t n = 0;
    for (const Slice& s : m_slices) n += s.tags->dirty_bytes();
    for (size_t pc = 0; pc < m_channels.size(); ++pc) {
        n += m_channels[pc].queued_write_bytes();
        for (const HbmReq* w = m_wb_wait[pc].head; w; w = w->next) n += w->bytes;
    }
    return n;
}

void MemorySystem::hbm_done(HbmReq& r, uint64_t t) {
    if (m_trace && m_trace->on(TraceLevel::Mem)) {
        trace_tick(t);
        m_trace_bytes[r.da.pc / m_hbm.pseudo_channels] += r.bytes;
    }
    if (r.kind == kWriteback) {
        m_wb_free.push_back(&r);
        return;
    }
    Mshr& m = *static_cast<Mshr*>(r.owner);
    Slice& s = m_slices[m.slice];
    MemRequest* w = m.head;
    // The fill's sectors were marked valid when the way was reserved; the tag array is touched
    // again only if that way was taken meanwhile (the line is then found or allocated anew).
    uint64_t valid = m.valid_after;
    m.busy = false;
    s.mshr_line[static_cast<size_t>(&m - s.mshrs.data())] = kNoLine;
    --s.busy_hash[mshr_hash(m.line_addr)];
    if (m.stolen) {
        uint32_t slot = s.tags->find(m.line_addr, false);
        if (slot == L2Tags::kNone) {
            L2Tags::Victim v;
            slot = s.tags->allocate(m.line_addr, v);
            if (v.evicted) {
                ++m_req[static_cast<size_t>(w->who)]->evictions;
                note_eviction(s, v);
                if (v.dirty) write_back(v, t, nullptr, kWaitNone);  // nothing waits on it
            }
        }
        s.tags->add_valid(slot, m.fetch_mask);
        valid = s.tags->valid(slot);
    }
    s.free_mshrs.push_back(&m);
    m.head = m.tail = nullptr;
    while (w) {
        MemRequest* nx = w->next;
        w->next = nullptr;
        const uint64_t mask = s.tags->sector_mask(w->addr, w->bytes);
        if ((valid & mask) == mask) finish_miss(*w, t);
        else push(t, Ev::L2Access, w, 1);  // needs sectors this fill did not bring
        w = nx;
    }
    while (s.blocked_head) {
        MemRequest* b = s.blocked_head;
        s.blocked_head = b->next;
        if (!s.blocked_head) s.blocked_tail = nullptr;
        b->next = nullptr;
        push(t, Ev::L2Access, b, 1);
        break;  // one MSHR freed: retry one blocked miss
    }
}

void MemorySystem::trace_tick(uint64_t t) {
    if (!m_trace_ready) {
        const uint32_t chans = m_hbm.stacks * m_hbm.channels_per_stack;
        m_trace_bytes.assign(chans, 0);
        for (uint32_t c = 0; c < chans; ++c)
            m_trace_tracks.push_back(m_trace->sink()->counter_track("memory", "hbm ch" + std::to_string(c) + " GB/s"));
        m_trace_l2 = m_trace->sink()->counter_track("memory", "l2 hit rate");
        m_trace_window_end = m_trace_window_ps;
        m_trace_ready = true;
    }
    while (t >= m_trace_window_end) {
        const Tick at(m_trace_window_end - m_trace_window_ps);
        bool idle = m_trace_accesses == 0;
        for (size_t c = 0; c < m_trace_bytes.size(); ++c) {
            idle = idle && m_trace_bytes[c] == 0;
            m_trace->sink()->counter(m_trace_tracks[c], at, static_cast<double>(m_trace_bytes[c]) / static_cast<double>(m_trace_window_ps) * 1000.0);
            m_trace_bytes[c] = 0;
        }
        if (m_trace_accesses)
            m_trace->sink()->counter(m_trace_l2, at, static_cast<double>(m_trace_hits) / static_cast<double>(m_trace_accesses));
        m_trace_hits = m_trace_accesses = 0;
        m_trace_window_end += m_trace_window_ps;
        // Skip a gap of idle windows after emitting one zero sample.
        if (idle && t >= m_trace_window_end) m_trace_window_end = (t / m_trace_window_ps + 1) * m_trace_window_ps;
    }
}

void MemorySystem::flush_trace() {
    if (!m_trace || !m_trace->on(TraceLevel::Mem) || !m_trace_ready) return;
    trace_tick(m_trace_window_end);
}

}  // namespace sfumato::mem
