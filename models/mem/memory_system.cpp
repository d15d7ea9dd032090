// The memory system's core (memory_system.h): construction, the event wheel and its one
// SC_METHOD (with run-ahead), request entry (splitting requests that span L2 lines) and
// completions. The L2 slices and MSHRs are in memory_system_l2.cpp, the HBM front end (channel
// queues, write-backs) in memory_system_hbm.cpp, statistics and trace counters in
// memory_system_stats.cpp.
#include "models/mem/memory_system.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "sim/error.h"
#include "sim/run_horizon.h"
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
      m_order(ports, [this](MemRequest& r) { accept(r); }),
      m_stats(parent_stats, basename()),
      m_l2_stats(&m_stats, "l2"),
      m_hbm_stats(&m_stats, "hbm"),
      m_writebacks(m_l2_stats, "writebacks", "lines", "dirty lines written back to HBM"),
      m_wb_stalls(m_l2_stats, "writeback_stalls", "lines",
                  "write-backs that waited for room in a full HBM write queue (their access waited too)"),
      m_flushes(m_l2_stats, "flushes", "flushes", "cache flushes (write back and invalidate everything)"),
      m_flushed_lines(m_l2_stats, "flushed_lines", "lines", "valid lines invalidated by flushes"),
      m_standin_lines(m_l2_stats, "standin_lines", "lines",
                      "line accesses of timing re-use stand-ins applied to the tags (untimed)"),
      m_standin_read(m_hbm_stats, "standin_bytes_read", "B",
                     "bytes timing re-use stand-ins would have read from HBM (counted, not timed)"),
      m_standin_written(m_hbm_stats, "standin_bytes_written", "B",
                        "bytes written back to HBM for timing re-use stand-ins (counted, not timed)"),
      m_read_latency(m_stats, "read_latency", "ns", "submit to completion of reads", 0.0, kLatencyBucketPs / 1000.0,
                     kLatencyBuckets),
      m_read_latency_avg(m_stats, "read_latency_avg", "ns", "mean read latency") {
    // The same samples as the histogram: their count and mean are its, the maximum kept apart
    // (the largest of ps / 1000.0 is the largest ps / 1000.0: the rounding is monotone).
    m_read_latency_avg.mirror(m_read_latency, [this] { return static_cast<double>(m_read_max_ps) / 1000.0; });
    m_frontend_ps = p.frontend_ps;
    m_noc_ps = m_clk.ticks(m_noc.latency);
    m_hit_ps = m_clk.ticks(m_l2.hit_latency);
    m_atomic_ps = m_clk.ticks(m_l2.atomic_cycles);
    m_runahead_ps = m_noc_ps;
    m_line_shift = static_cast<uint32_t>(__builtin_ctz(m_l2.g.line_bytes));
    m_slice_div = FastDiv32(m_l2.g.slices);
    while ((uint64_t(1) << m_arrival_shift) < m_l2.g.slices) ++m_arrival_shift;
    m_arrival_slice_mask = static_cast<uint32_t>((uint64_t(1) << m_arrival_shift) - 1);
    if (m_arrival_shift >= 32 || ((uint64_t(m_l2.g.sets) - 1) << m_arrival_shift) >> 32)
        throw ConfigError("chip.l2.size_kib", "too many sets and slices: a slice's index and a set's must fit 32 bits together");
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
    m_port.resize(ports);
    if (m_hbm.capacity_bytes / m_l2.g.line_bytes >= (uint64_t(1) << 32) - 1)
        throw ConfigError("chip.l2.line_bytes", "too small for the capacity: more than 2^32 lines");
    m_slices.resize(m_l2.g.slices);
    for (uint32_t s = 0; s < m_l2.g.slices; ++s) {
        m_slices[s].tags.emplace(m_l2.g, make_replacement(m_l2.replacement, "chip.l2.replacement", m_l2.g.sets, m_l2.g.ways));
        m_slices[s].mshrs.resize(m_l2.mshrs);
        m_slices[s].mshr_line.assign(m_l2.mshrs, kNoLine);
        for (size_t i = m_l2.mshrs; i-- > 0;) m_slices[s].free_mshrs.push_back(&m_slices[s].mshrs[i]);
        for (auto& m : m_slices[s].mshrs) {
            m.slice = s;
            m.index = static_cast<uint32_t>(&m - m_slices[s].mshrs.data());
            m.fill.owner = &m;
            m.fill.kind = kFill;
        }
    }
    for (size_t i = 0; i < m_req.size(); ++i)
        m_req[i] = std::make_unique<ReqStats>(&m_l2_stats, requester_name(static_cast<Requester>(i)));
    m_bulk = p.bulk;
    m_clients_ahead = p.completions_ahead;
    const uint32_t lb = m_l2.g.line_bytes;
    m_bulk_line_wr = ser(lb, m_wr_rate);
    m_bulk_line_rd = ser(lb, m_rd_rate);
    m_bulk_line_slice = ser(lb, m_slice_rate);
    m_bulk_line_gm = ser(lb, m_gm_rate);
    if (m_bulk) {
        m_bulk_mshr.assign(size_t(m_l2.g.slices) * m_l2.mshrs, BulkMshr{});
        m_bulk_slice.resize(m_l2.g.slices);
        for (uint32_t s = 0; s < m_l2.g.slices; ++s)
            m_bulk_slice[s] = BulkSlice{&*m_slices[s].tags, 0, &m_bulk_mshr[size_t(s) * m_l2.mshrs], 0};
        m_bulk_wr.resize(pcs);
        m_bulk_gm.resize(ports);
        m_bulk_ch.reserve(pcs);
        for (uint32_t i = 0; i < pcs; ++i) m_bulk_ch.emplace_back(m_hbm, uint64_t(i) * m_hbm.t.refi / pcs);
        for (BulkWrites& w : m_bulk_wr) w.left.assign(std::max<uint32_t>(1, m_hbm.write_queue_depth), 0);
    }
    add_stat_formulas();
    mt_configure(p.threads);
    m_order.set_end_hook([this] { instant_over(); });
    SC_METHOD(process);
    sensitive << m_wake_ev;
    dont_initialize();
}

MemorySystem::~MemorySystem() {
    mt_end();
    mt_count(-1);
}

void MemorySystem::process() {
    ++m_activations;
    const uint64_t now = now_tick().v;
    if (!m_mt_decided) mt_decide();
    // Requests submitted ahead at this tick, in an activation that a completion or a write-back
    // needing SystemC time cut short (instant_over): they join this instant's, as they would have
    // without running ahead. (The run-ahead client's stay staged: its requests are staged without
    // running ahead too, and this activation goes on as it would have.)
    if (m_runahead_staged && m_cb_tick == now && !m_runahead_client) {
        m_runahead_staged = false;
        stage_one();
        m_order.direct_to_instant();
    }
    m_in_process = true;
    bool blocked = false;
    m_floor = now + m_noc_ps;  // a request submitted from now on reaches a slice no earlier
    uint64_t next = run_window<false>(now, blocked);
    if (m_runahead_staged) {
        flush_runahead();
        // What it accepted is on the wheel: the exact service's arrivals, the bulk one's completions.
        next = m_events.next_tick();
    }
    if (m_mt) m_next_ev = next = mt_next(next);
    // The bulk service's waiting write-backs go out once nothing else is on its way (a
    // controller writes while no read waits), each at its own arrival time.
    if (m_bulk_waiting && next == EventWheel::kEmpty)
        for (uint32_t pc = 0; pc < m_bulk_wr.size(); ++pc)
            if (!m_bulk_wr[pc].waiting.empty()) bulk_drain(pc);
    m_in_process = false;
    m_scheduled = next;
    // SystemC time still reaches every completion's tick (the end of a run is the same time).
    if (m_last_runahead > now && m_last_runahead < m_scheduled) m_scheduled = m_last_runahead;
    if (m_scheduled == EventWheel::kEmpty) return;
    // Activations ahead of SystemC time may follow once this instant is over: the hook
    // (instant_over) schedules the wake-up then.
    if (m_clients_ahead && !m_bulk && m_order.want_end()) {
        m_wake_deferred = true;
        m_order.set_deferred(&m_scheduled);
        return;
    }
    m_wake_ev.notify(to_sc_time(Tick(m_scheduled - now)));
}

void MemorySystem::instant_over() {
    // The end of instant `now` (sim/submit_order.h): every process of it ran and its requests were
    // handed over. Until the kernel's next activity (`until`), no other process runs, so nothing
    // submits, and nobody looks at this system's state. So the activations process() would have
    // run before `until` run now, one after the other, each exactly as process() runs it (its
    // events from its tick v to v + m_runahead_ps - 1, stopping at a later completion; the next
    // at the first item left, or at the first arrival its requests make), unless one has to make
    // itself seen: a completion its client does not take ahead (IMemClient::takes_ahead: a pipe
    // refilling a request slot does; a completion ending an instruction, the scalar unit's, a
    // DMA's do not), the last part of a split request, the write-back that drains the queues
    // (a cache flush waits for it). That activation stops there, and process() goes on with it
    // at its own time v (with the requests its earlier completions submitted: direct_to_instant).
    // Each activation's completions taken ahead submit at v; their requests are handed over at
    // its end, as its instant's. So every state another process can see (when it acts, from
    // `until` on) is the one it sees without running ahead: the same events ran by then, in the
    // same order, at the same ticks. process() left its wake-up to this hook (m_wake_deferred),
    // so `until` is another process's activity (or an arrival's wake-up submit_line asked for
    // meanwhile, which then ends the run as another's would).
    // With a run-ahead client (membench's generator), whose completions process() delivers ahead
    // of SystemC time anyway, the activations run here are process()'s too, at the ticks it
    // would have woken at (SystemC time passing each completion's tick included): no completion
    // of another client is taken ahead then (the run-ahead client's requests staged in an
    // activation that stops stay staged, as in process()), and the last activation, which only
    // brings SystemC time to the last completion's tick, is left to process().
    if (!m_wake_deferred) return;
    m_wake_deferred = false;
    m_order.set_deferred(nullptr);
    const uint64_t now = now_tick().v;
    const auto wake = [this, now] {
        if (m_scheduled != EventWheel::kEmpty) m_wake_ev.notify(to_sc_time(Tick(m_scheduled > now ? m_scheduled - now : 0)));
    };
    // Not while instructions or the memory are traced: their events would be written in another
    // order (the same ticks).
    if (m_in_process || m_scheduled <= now ||
        (m_trace && (m_trace->on(TraceLevel::Instr) || m_trace->on(TraceLevel::Mem)))) {
        wake();
        return;
    }
    const sc_core::sc_time d = sc_core::sc_time_to_pending_activity();
    // Nor past the driver's slice when it acts between slices (sim/run_horizon.h).
    uint64_t until = std::min<uint64_t>(d == sc_core::sc_max_time() ? EventWheel::kEmpty - 1 : now + d.value(), run_horizon());
    // Nor past another memory system's next activation that its own hook has yet to schedule
    // (the hooks of one instant run one after the other: sim/submit_order.h, set_deferred).
    until = std::min(until, m_order.others_deferred());
    if (until <= m_scheduled) {  // another process acts before this system's next activation
        wake();
        return;
    }
    ++m_ahead_batches;
    m_in_process = true;
    uint64_t v = m_scheduled;
    bool blocked = false;
    while (v < until && (m_mt ? m_next_ev != EventWheel::kEmpty : !m_events.empty())) {
        m_floor = v + m_noc_ps;
        run_window<true>(v, blocked);
        if (blocked) break;  // process() goes on with this activation at v
        // The end of instant v: its requests handed over (their arrivals may bring the next
        // activation forward, as submit_line's wake-up would).
        if (m_runahead_staged) flush_runahead();
        uint64_t next = m_events.next_tick();
        if (m_mt) m_next_ev = next = mt_next(next);
        // As process() schedules its next activation.
        v = m_last_runahead > v && m_last_runahead < next ? m_last_runahead : next;
    }
    m_in_process = false;
    m_scheduled = v;
    if (v != EventWheel::kEmpty) m_wake_ev.notify(to_sc_time(Tick(v - now)));
}

template <bool Ahead, bool MT>
uint64_t MemorySystem::run_window(uint64_t now, bool& blocked) {
    // Run-ahead: a request submitted at SystemC time >= now reaches its slice no earlier than
    // now + m_runahead_ps, so internal events (L2 lookups, controller decisions, fills) before
    // that tick cannot be affected by anything outside; they run now, in (tick, sequence) order,
    // each at its own tick, exactly as if the process had woken for it. Only a client callback
    // (ClientDone) needs SystemC time to be its tick: the batch stops at the first later one.
    // Ahead (instant_over): `now` is an activation's tick, later than SystemC time; what it
    // would make seen at that time stops it there (`blocked`), items at `now` included.
    const uint64_t limit = now + m_runahead_ps - (m_runahead_ps ? 1 : 0);
    WheelItem it;
    uint64_t next;
    // A client's completion waits for its own SystemC time, and so does the part of a split
    // request that completes it (the last one outstanding); the other parts only count down.
    const bool parts_ahead = m_parts_run_ahead;
    // A burst's span (the bulk service) waits too, unless the run-ahead client sent it: another
    // client may still hand over a request of an earlier tick, which the service must meet first.
    const IMemClient* ahead = m_runahead_client;
    const auto waits = [this, parts_ahead, ahead, now, &blocked](uint64_t tick, uint8_t kind, void* ptr) {
        if constexpr (Ahead) {
            // Asked for the items at `now` too (pop_due_if from now - 1). Most kinds never wait
            // (internal events, the run-ahead client's completions: as in process()): one bit test.
            constexpr uint32_t kNever = 1u << uint32_t(Ev::L2Access) | 1u << uint32_t(Ev::CtrlWake) |
                                        1u << uint32_t(Ev::FillDone) | 1u << uint32_t(Ev::Arrival) |
                                        1u << uint32_t(Ev::RunaheadDone);
            if ((kNever >> kind) & 1) return false;
            switch (static_cast<Ev>(kind)) {
                case Ev::ClientDone: {
                    if (tick > now) return true;  // the activation ends (process()'s too)
                    const MemRequest& r = *static_cast<MemRequest*>(ptr);
                    blocked = ahead || !r.client->takes_ahead(r);
                    return blocked;
                }
                case Ev::PartDone: {
                    const bool last = static_cast<Split*>(static_cast<MemRequest*>(ptr)->client)->remaining == 1;
                    if (tick == now) {  // the last part completes its request: the client's completion
                        blocked = last;
                        return blocked;
                    }
                    return !parts_ahead || last;
                }
                case Ev::WbDone:  // the last write-back out notifies m_wb_drained
                    blocked = m_wb_pending == 1;
                    return blocked;
                default:  // the bulk service's (never here)
                    blocked = true;
                    return true;
            }
        } else {
            (void)this;
            (void)now;
            (void)blocked;
            (void)tick;
            // Most kinds never wait: one bit test (the kind's bit in a mask) passes them.
            constexpr uint32_t kMayWait =
                1u << uint32_t(Ev::ClientDone) | 1u << uint32_t(Ev::PartDone) | 1u << uint32_t(Ev::BurstSpan);
            if (!((kMayWait >> kind) & 1)) return false;
            if (kind == static_cast<uint8_t>(Ev::ClientDone)) return true;
            const MemRequest& r = *static_cast<MemRequest*>(ptr);
            if (kind == static_cast<uint8_t>(Ev::PartDone))
                return !parts_ahead || static_cast<Split*>(r.client)->remaining == 1;
            return r.client != ahead;  // BurstSpan
        }
    };
    const uint64_t from = Ahead ? now - 1 : now;  // Ahead: now > SystemC time >= 0
    m_in_loop = true;
    for (;;) {
    while (m_events.pop_due_if(from, limit, MT ? m_safe : EventWheel::kEmpty, waits, it, next)) {
        const uint64_t t = std::max(it.tick, now);
        if (MT && m_mt) mt_begin(it);
        // An arrival skips the hand-over below (as when arrivals had a queue of their own).
        if (it.kind == static_cast<uint8_t>(Ev::Arrival)) {
            l2_arrival(*static_cast<MemRequest*>(it.ptr), t, it.arg);
            continue;
        }
        // The run-ahead client's requests of one tick go in together, in the order the requests
        // of an instant take (sim/submit_order.h), as they would without run-ahead.
        if (m_runahead_staged && it.tick > m_cb_tick) flush_runahead();
        switch (static_cast<Ev>(it.kind)) {
            case Ev::L2Access: l2_access(*static_cast<MemRequest*>(it.ptr), t, it.arg); break;
            case Ev::CtrlWake: run_wake(it, t); break;
            case Ev::FillDone: fill_done(*static_cast<Mshr*>(it.ptr), t); break;
            case Ev::WbDone: wb_done(*static_cast<HbmReq*>(it.ptr), t); break;
            case Ev::ClientDone: {
                MemRequest& r = *static_cast<MemRequest*>(it.ptr);
                if (Ahead) {  // taken ahead (instant_over): at its own tick
                    record_done(r, it.tick);
                    m_in_runahead_cb = true;
                    m_cb_tick = it.tick;
                    r.client->mem_done(r);
                    m_in_runahead_cb = false;
                    break;
                }
                record_done(r, now);
                r.client->mem_done(r);
                break;
            }
            case Ev::PartDone: {
                // At its own tick: SystemC time is that tick for the last part (it waited), and
                // may be earlier for the others, which only count down.
                MemRequest& r = *static_cast<MemRequest*>(it.ptr);
                record_done(r, t);
                static_cast<Split*>(r.client)->mem_done(r);
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
            case Ev::BurstSpan: bulk_span(*static_cast<MemRequest*>(it.ptr), t); break;
            case Ev::BulkDrained:
                m_wb_pending = 0;
                m_wb_drained.notify(sc_core::SC_ZERO_TIME);
                break;
            case Ev::Arrival: break;  // above
        }
    }
    // Two threads: the loop may have stopped at m_safe, before which the HBM side has sent every
    // fill; past it, fills may still come that go first (unless past the window).
    if (!MT || !m_mt || next < m_safe || m_safe > limit) break;
    mt_wait_window(next);
    }
    m_in_loop = false;
    if (MT && m_mt) {
        // Where one thread would have stopped (for mt_stop() between windows): at the first event
        // that waits, or past the window.
        WheelItem h;
        bool late;
        if (next <= limit && m_events.peek(h, late)) {
            m_stop_tk = h.tick << 1 | (late ? 1 : 0);
            m_stop_ord = h.seq;
            m_stop_hs = h.arg;
        } else {
            m_stop_tk = (limit + 1) << 1;
            m_stop_ord = 0;
            m_stop_hs = 0;
        }
    }
    return next;
}

void MemorySystem::push_waking(uint64_t tick, Ev kind, void* ptr, uint32_t arg) {
    if (kind == Ev::Arrival) m_events.push(tick, ptr, arg, static_cast<uint8_t>(kind), true, 1);
    else m_events.push(tick, ptr, arg, static_cast<uint8_t>(kind), false, 2 * m_n++ + 1);
    wake_for(tick);
}

void MemorySystem::wake_for(uint64_t tick) {
    m_scheduled = tick;
    m_next_ev = std::min(m_next_ev, tick);
    const uint64_t now = now_tick().v;
    m_wake_ev.notify(to_sc_time(Tick(tick > now ? tick - now : 0)));
}

void MemorySystem::submit(MemRequest& r) {
    // The common case without a stack frame: a plain request, the first the run-ahead client's
    // callback stages at its tick (it waits in m_cb_one: accepted directly, as SubmitOrder hands
    // over a batch of one). The rest is submit_other(), out of line.
    if (needs_check(r) || m_bulk || !m_in_runahead_cb || m_runahead_staged) [[unlikely]]
        return submit_other(r);
    m_cb_one = &r;
    m_runahead_staged = true;
}

void MemorySystem::submit_other(MemRequest& r) {
    // One branch on the way of a plain request (check_request, out of line, has the messages).
    if (needs_check(r)) [[unlikely]] check_request(r);
    // The bulk service looks the tags up when the request is handed over (at the end of its
    // instant): start bringing the first line's set into the host cache now.
    if (m_bulk) {
        const uint64_t line = line_of(r.addr);
        m_slices[slice_of(line)].tags->prefetch(line);
    }
    // The run-ahead client submits from its callbacks, timed at the callback's tick: process()
    // hands them over when it moves past that tick.
    if (m_in_runahead_cb) {
        // Most ticks stage one request, which needs no ordering (m_cb_one); a second one sends
        // both to the order's batch, in their order.
        if (!m_runahead_staged) {
            m_cb_one = &r;
            m_runahead_staged = true;
        } else {
            stage_one();
            m_order.stage(r);
        }
    } else {
        m_order.submit(r);
    }
}

void MemorySystem::check_request(const MemRequest& r) const {
    if (r.port >= m_ports_n) throw ModelError(name(), "request from port " + std::to_string(r.port) + " but the memory system has " + std::to_string(m_ports_n) + " ports");
    if (r.bytes == 0 || r.addr + r.bytes > m_hbm.capacity_bytes)
        throw ModelError(name(), "request of " + std::to_string(r.bytes) + " B at " + std::to_string(r.addr) + " is empty or beyond the device capacity");
    if (r.burst) {
        if (!m_bulk) throw ModelError(name(), "a burst request, but chip.mem.service is not bulk");
        if (r.burst->spans.empty() || !r.burst->chain || r.burst->chain->slots.empty())
            throw ModelError(name(), "a burst request without spans or request slots");
        for (const MemSpan& sp : r.burst->spans)
            if (sp.bytes == 0 || sp.addr + sp.bytes > m_hbm.capacity_bytes)
                throw ModelError(name(), "a burst's request of " + std::to_string(sp.bytes) + " B at " +
                                             std::to_string(sp.addr) + " is empty or beyond the device capacity");
    }
}

void MemorySystem::flush_runahead_other() {
    m_in_runahead_cb = true;  // accepted at m_cb_tick
    if (MemRequest* r = m_cb_one) {
        m_cb_one = nullptr;
        accept(*r);
    } else {
        m_order.flush_direct();
    }
    m_in_runahead_cb = false;
}

void MemorySystem::stage_one() {
    if (!m_cb_one) return;
    m_order.stage(*m_cb_one);
    m_cb_one = nullptr;
}

void MemorySystem::accept(MemRequest& r) {
    if (m_bulk) {
        if (r.burst) bulk_burst(r);
        else bulk_accept(r);
        return;
    }
    if (one_line(r)) {
        submit_line(r);
        return;
    }
    accept_split(r);
}

void MemorySystem::accept_split(MemRequest& r) {
    const uint32_t line = m_l2.g.line_bytes;
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
        c.target_part = true;
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

}  // namespace sfumato::mem
