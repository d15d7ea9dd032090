#include "models/mem/traffic_gen.h"

#include <algorithm>

#include "sim/error.h"
#include "sim/sc_time_util.h"

namespace sfumato::mem {

namespace {
uint64_t xorshift(uint64_t& x) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
}
}  // namespace

TrafficGen::TrafficGen(sc_core::sc_module_name name, const TrafficSpec& spec, IMemTarget& target)
    : sc_core::sc_module(name), m_spec(spec), m_target(target) {
    if (spec.cores == 0 || spec.request_bytes == 0 || spec.max_outstanding == 0)
        throw InputError("membench: cores, request size and outstanding limit must be positive");
    const uint64_t total = spec.bytes / spec.request_bytes;
    if (total == 0) throw InputError("membench: --bytes smaller than one request");
    if (spec.pattern == Pattern::Random && spec.footprint < spec.request_bytes)
        throw InputError("membench: random footprint smaller than one request");
    m_cores.resize(spec.cores);
    for (uint32_t c = 0; c < spec.cores; ++c) {
        Core& k = m_cores[c];
        k.count = total / spec.cores + (c < total % spec.cores ? 1 : 0);
        k.chunk_base = (total / spec.cores) * c + std::min<uint64_t>(c, total % spec.cores);
        k.rng = 0x9e3779b97f4a7c15ull * (c + 1);
    }
    m_reqs.resize(size_t(spec.cores) * spec.max_outstanding);
    m_bursts = spec.bursts && target.takes_bursts() && spec.op != MemOp::Copy;
    if (m_bursts) m_burst.resize(m_reqs.size());
    SC_METHOD(start);
}

uint64_t TrafficGen::address(uint32_t core, uint64_t i) {
    Core& k = m_cores[core];
    const uint64_t n = k.chunk_base + i;  // global request index
    switch (m_spec.pattern) {
        case Pattern::Seq: return m_spec.base + n * m_spec.request_bytes;  // (next_request() has it inline too)
        case Pattern::Stride: return m_spec.base + n * m_spec.stride;
        case Pattern::Random: {
            const uint64_t slots = m_spec.footprint / m_spec.request_bytes;
            return m_spec.base + (xorshift(k.rng) % slots) * m_spec.request_bytes;
        }
    }
    return 0;
}

void TrafficGen::next_request(uint32_t core, MemRequest& r) {
    Core& k = m_cores[core];
    r.addr = m_spec.pattern == Pattern::Seq ? m_spec.base + (k.chunk_base + k.next) * m_spec.request_bytes
                                            : address(core, k.next);
    r.tag = k.next;
    ++k.next;
    r.bytes = m_spec.request_bytes;
    r.write = m_spec.op == MemOp::Write;
    r.who = r.write ? Requester::MTE3 : Requester::MTE2;
    r.issue_tick = m_now;
    m_target.submit(r);
}

void TrafficGen::issue(uint32_t core, MemRequest& r) {
    ++m_live;
    next_request(core, r);
}

void TrafficGen::begin_pass() {
    if (m_bursts) m_now = std::max(m_now, m_end);  // the previous pass's data all back
    m_pass_start = m_now;
    for (uint32_t c = 0; c < m_spec.cores; ++c) {
        Core& k = m_cores[c];
        k.next = 0;
        k.rng = 0x9e3779b97f4a7c15ull * (c + 1);  // the same addresses every pass
        if (m_bursts) {
            k.chain.reset(m_spec.max_outstanding, m_now.v);
            for (uint32_t s = 0; s < 2 && k.next < k.count; ++s) {
                MemRequest& r = m_reqs[size_t(c) * m_spec.max_outstanding + s];
                r.port = static_cast<uint16_t>(c);
                r.client = this;
                r.burst = &m_burst[size_t(c) * m_spec.max_outstanding + s];
                issue_burst(c, r);
            }
            continue;
        }
        for (uint32_t s = 0; s < m_spec.max_outstanding && k.next < k.count; ++s) {
            MemRequest& r = m_reqs[size_t(c) * m_spec.max_outstanding + s];
            r.port = static_cast<uint16_t>(c);
            r.client = this;
            issue(c, r);
        }
    }
}

void TrafficGen::start() {
    m_now = now_tick();
    begin_pass();
}

void TrafficGen::issue_burst(uint32_t core, MemRequest& r) {
    Core& k = m_cores[core];
    MemBurst& b = *r.burst;
    b.spans.clear();
    r.addr = address(core, k.next);
    r.tag = k.next;
    b.spans.push_back(MemSpan{r.addr, m_spec.request_bytes});
    for (++k.next; k.next < k.count && b.spans.size() < m_spec.max_outstanding; ++k.next)
        b.spans.push_back(MemSpan{address(core, k.next), m_spec.request_bytes});
    r.bytes = static_cast<uint32_t>(b.spans.size()) * m_spec.request_bytes;
    r.write = m_spec.op == MemOp::Write;
    r.who = r.write ? Requester::MTE3 : Requester::MTE2;
    r.issue_tick = m_now;
    b.chain = &k.chain;
    b.gap = 0;
    b.done_at_next_issue = true;
    ++m_live;
    m_target.submit(r);
}

void TrafficGen::burst_done(MemRequest& r) {
    // Completed at the time the core's next request could issue; its data is back by b.end.
    m_bytes_moved += r.bytes;
    if (r.write) m_bytes_written += r.bytes;
    m_end = std::max(m_end, Tick(r.burst->end));
    m_now = r.done_tick;
    Core& k = m_cores[r.port];
    --m_live;
    if (k.next < k.count) {
        issue_burst(r.port, r);
        return;
    }
    if (m_live == 0) pass_done();
}

void TrafficGen::pass_done() {
    if (on_pass) on_pass(m_pass);
    if (++m_pass < m_spec.passes) begin_pass();
    else m_finished = true;
}

void TrafficGen::mem_done(MemRequest& r) {
    ++m_completions;
    if (r.burst) [[unlikely]] {
        burst_done(r);
        return;
    }
    m_bytes_moved += r.bytes;
    if (r.write) m_bytes_written += r.bytes;
    m_end = r.done_tick;  // set by the target: the completion time
    m_now = r.done_tick;  // the time of everything done here (SystemC time may be earlier)
    // The request's slot issues its next request (one done, one issued: m_live stays).
    if (m_spec.op == MemOp::Copy && !r.write) {
        // Write the block just read to the destination region.
        r.addr = m_spec.dst_base + (r.addr - m_spec.base);
        r.write = true;
        r.who = Requester::MTE3;
        r.issue_tick = m_end;
        m_target.submit(r);
        return;
    }
    const uint32_t core = r.port;
    if (m_cores[core].next < m_cores[core].count) {
        next_request(core, r);
        return;
    }
    if (--m_live == 0) pass_done();
}

}  // namespace sfumato::mem
