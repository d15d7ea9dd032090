// The memory side of an AI-core pipe (PipeUnit): a GM-touching instruction's requests, sent one
// request slot at a time along its GmPattern (exact memory service) or handed over as one burst
// (bulk service), and the completions that free the slots. Each request covers the bytes from its
// address to the end of its run or the next mte_request_bytes boundary, whichever is first
// (next_chunk), so requests never straddle a request-sized block of GM.
#include <algorithm>

#include "models/aicore/ai_core.h"
#include "models/aicore/pipe_unit.h"
#include "sim/failure.h"
#include "sim/sc_time_util.h"

namespace sfumato {

namespace {
Requester requester_for(isa::Pipe p) {
    switch (p) {
        case isa::Pipe::MTE3: return Requester::MTE3;
        case isa::Pipe::FIX: return Requester::FIX;
        case isa::Pipe::MTE1: return Requester::MTE1;
        default: return Requester::MTE2;
    }
}

// The bytes of the request at `addr` with `left` bytes of its run to go: to the run's end or the
// next request_bytes boundary, whichever comes first.
uint64_t next_chunk(uint64_t addr, uint64_t left, uint64_t request_bytes) {
    return std::min(left, request_bytes - addr % request_bytes);
}
}  // namespace

bool PipeUnit::issue_requests(Cycle now) {
    if (m_cur.ready > now) {
        sleep_until(now, m_cur.ready);
        return false;
    }
    if (m_core.mem().takes_bursts()) return issue_burst(now);
    if (!send_requests(now, now_tick())) {
        next_trigger(m_wake);  // a completion frees a slot
        m_slot_wait = true;
        return false;
    }
    return true;
}

bool PipeUnit::send_requests(Cycle now, Tick now_t) {
    InFlight& f = m_inflight[m_cur.slot];
    const GmPattern& pat = m_cur.pat;
    const uint64_t req_bytes = m_core.params().mte_request_bytes;
    const Requester who = requester_for(m_id);
    while (m_cur.outer < pat.outer) {
        if (m_free_reqs.empty()) return false;
        const uint64_t addr = pat.base + m_cur.outer * pat.outer_stride + m_cur.inner * pat.inner_stride + m_cur.offset;
        const uint64_t chunk = next_chunk(addr, pat.len - m_cur.offset, req_bytes);
        MemRequest& r = m_reqs[m_free_reqs.back()];
        m_free_reqs.pop_back();
        r.addr = addr;
        r.bytes = static_cast<uint32_t>(chunk);
        r.write = pat.write;
        r.atomic_add = pat.atomic;
        r.who = who;
        r.port = static_cast<uint16_t>(m_core.index());
        r.issue_tick = now_t;
        r.tag = m_cur.slot;
        ++f.pending;
        ++m_requests;
        if (m_ub_bytes) {
            const bool ub = f.op == isa::Opcode::COPY_GM_TO_UB || f.op == isa::Opcode::COPY_UB_TO_GM;
            *(ub ? m_ub_bytes : m_l1_bytes) += chunk;
        }
        m_cur.offset += chunk;
        if (m_cur.offset == pat.len) {
            m_cur.offset = 0;
            if (++m_cur.inner == pat.inner) {
                m_cur.inner = 0;
                ++m_cur.outer;
            }
        }
        m_core.mem().submit(r);
    }
    f.issuing = false;
    m_cur.active = false;
    if (f.pending == 0 && !f.done) complete(f, now);
    return true;
}

bool PipeUnit::issue_burst(Cycle now) {
    InFlight& f = m_inflight[m_cur.slot];
    if (m_free_reqs.empty()) {
        next_trigger(m_wake);  // a completion frees a slot
        return false;
    }
    if (m_bursts.size() != m_reqs.size()) {
        m_bursts.resize(m_reqs.size());
        m_chain.reset(static_cast<uint32_t>(m_reqs.size()), 0);
    }
    const uint32_t i = m_free_reqs.back();
    MemBurst& b = m_bursts[i];
    b.spans.clear();
    // The same requests issue_requests would send, in its order.
    const GmPattern& pat = m_cur.pat;
    const uint64_t req_bytes = m_core.params().mte_request_bytes;
    uint64_t total = 0;
    for (uint32_t o = 0; o < pat.outer; ++o)
        for (uint32_t in = 0; in < pat.inner; ++in)
            for (uint64_t off = 0; off < pat.len;) {
                const uint64_t addr = pat.base + o * pat.outer_stride + in * pat.inner_stride + off;
                const uint64_t chunk = next_chunk(addr, pat.len - off, req_bytes);
                b.spans.push_back(MemSpan{addr, static_cast<uint32_t>(chunk)});
                off += chunk;
                total += chunk;
            }
    f.issuing = false;
    m_cur.active = false;
    if (b.spans.empty()) {
        if (f.pending == 0 && !f.done) complete(f, now);
        return true;
    }
    m_free_reqs.pop_back();
    MemRequest& r = m_reqs[i];
    r.addr = b.spans.front().addr;
    r.bytes = static_cast<uint32_t>(std::min<uint64_t>(total, UINT32_MAX));
    r.write = pat.write;
    r.atomic_add = pat.atomic;
    r.who = requester_for(m_id);
    r.port = static_cast<uint16_t>(m_core.index());
    r.issue_tick = now_tick();
    r.tag = m_cur.slot;
    r.burst = &b;
    b.chain = &m_chain;
    // This instruction's requests start no sooner than its start-up after the previous one's
    // last request (the pipe reaches it then, one by one): the service keeps that apart as `gap`.
    b.gap = m_core.clock().to_tick(Cycle(m_cur.setup)).v;
    b.done_at_next_issue = false;
    ++f.pending;
    m_requests += b.spans.size();
    if (m_ub_bytes) {
        const bool ub = f.op == isa::Opcode::COPY_GM_TO_UB || f.op == isa::Opcode::COPY_UB_TO_GM;
        *(ub ? m_ub_bytes : m_l1_bytes) += total;
    }
    m_core.mem().submit(r);
    return true;
}

void PipeUnit::mem_done(MemRequest& req) {
    InFlight& f = m_inflight[req.tag];
    m_free_reqs.push_back(static_cast<uint32_t>(&req - m_reqs.data()));
    --f.pending;
    if (!f.issuing && f.pending == 0) complete(f, m_core.clock().ceil_cycle(req.done_tick));
    if (m_slot_wait) {
        refill(req.done_tick);
        return;
    }
    m_wake.notify(sc_core::SC_ZERO_TIME);
}

bool PipeUnit::cursor_on_last() const {
    const GmPattern& pat = m_cur.pat;
    if (m_cur.outer + 1 != pat.outer || m_cur.inner + 1 != pat.inner) return false;
    const uint64_t req_bytes = m_core.params().mte_request_bytes;
    const uint64_t addr = pat.base + m_cur.outer * pat.outer_stride + m_cur.inner * pat.inner_stride + m_cur.offset;
    return m_cur.offset + next_chunk(addr, pat.len - m_cur.offset, req_bytes) == pat.len;
}

bool PipeUnit::takes_ahead(const MemRequest& req) const {
    // Ahead of SystemC time only what refill() does without waking the pipe: a completion that
    // does not end its instruction (that sets flags, runs the instruction's effect, lets other
    // pipes and the scalar unit go on), while the pipe waits for the slot and will not send its
    // instruction's last request (then it wakes to go on). Not while instructions are traced:
    // the trace's events would be written in another order (same ticks).
    if (!m_slot_wait || m_core.trace().on(TraceLevel::Instr)) return false;
    const InFlight& f = m_inflight[req.tag];
    if (f.pending == 1 && !f.issuing) return false;
    return !cursor_on_last();
}

void PipeUnit::refill(Tick at) {
    // The pipe sleeps in issue_requests for a free request slot (m_slot_wait), and a completion
    // freed one: woken, it would retire what ended by now and send its current instruction's
    // next requests (step() does nothing else first), all of it state of its own but the submits,
    // which the memory system orders by port and requester within the instant whoever makes
    // them. So that is done here, at the completion's time, and the pipe is woken only when the
    // instruction has sent its last request (then it goes on to the next instructions, as it
    // would have in the same wake-up). While the slots are taken again it sleeps on, its
    // trigger (the next completion) still armed: no wake-up per freed slot.
    try {
        // At the completion's own time: SystemC's in a callback at its time, or earlier when the
        // memory system delivers it ahead (takes_ahead).
        const Cycle now = m_core.clock().ceil_cycle(at);
        retire(now, at);
        if (!send_requests(now, at)) return;
        m_slot_wait = false;
        m_wake.notify(sc_core::SC_ZERO_TIME);
    } catch (...) {
        record_failure(std::current_exception());
    }
}

}  // namespace sfumato
