#include "models/aicore/scalar_mem.h"

#include <bit>

#include "sim/error.h"
#include "sim/sc_time_util.h"

namespace sfumato {

namespace {
uint32_t log2u(uint64_t v) { return static_cast<uint32_t>(std::countr_zero(v)); }
}  // namespace

// ---- ScalarMem ----

ScalarMem::ScalarMem(const std::string& path, const ScalarMemParams& p, isa::CoreKind kind, ClockDomain clock, IMemTarget& mem,
                     uint16_t port, uint64_t page_table, TraceHub& trace, StatGroup& parent)
    : m_path(path),
      m_p(p),
      m_clock(clock),
      m_mem(mem),
      m_page_table(page_table),
      m_trace(trace),
      m_stats(&parent, "scalar_mem"),
      m_ifetch_hits(m_stats, "icache_hits", "line", "code lines found in the instruction cache"),
      m_ifetch_misses(m_stats, "icache_misses", "line", "code lines fetched from memory"),
      m_ifetch_stall(m_stats, "icache_stall_cycles", "cycle", "cycles the scalar unit waited for code"),
      m_dhits(m_stats, "dcache_hits", "access", "scalar loads and stores that hit the data cache"),
      m_dmisses(m_stats, "dcache_misses", "access", "scalar loads and stores that filled a line from memory"),
      m_dwritebacks(m_stats, "dcache_writebacks", "line", "dirty data-cache lines written back"),
      m_dstall(m_stats, "dcache_stall_cycles", "cycle", "cycles the scalar unit waited for data-cache fills and write-backs"),
      m_tlb_misses(m_stats, "tlb_misses", "walk", "scalar-side TLB misses (page-table walks)"),
      m_tlb_stall(m_stats, "tlb_stall_cycles", "cycle", "cycles the scalar unit waited for page-table walks") {
    const uint64_t icache = kind == isa::CoreKind::Vector ? p.icache_aiv_bytes : p.icache_aic_bytes;
    m_iline_shift = log2u(p.icache_line_bytes);
    m_dline_shift = log2u(p.dcache_line_bytes);
    m_page_shift = log2u(p.tlb_page_bytes);
    m_icache.configure(icache / p.icache_line_bytes, p.icache_ways);
    m_dcache.configure(p.dcache_bytes / p.dcache_line_bytes, p.dcache_ways);
    m_tlb.configure(p.tlb_entries, p.tlb_entries);  // fully associative
    m_req.client = this;
    m_req.port = port;
}

void ScalarMem::reset() {
    m_icache.clear();
    m_dcache.clear();
    m_tlb.clear();
}

void ScalarMem::wait_until(Cycle c) {
    const Tick t = m_clock.to_tick(c);
    const Tick now = now_tick();
    if (t > now) sc_core::wait(to_sc_time(t - now));
}

void ScalarMem::mem_done(MemRequest&) {
    m_done = true;
    m_done_ev.notify(sc_core::SC_ZERO_TIME);
}

Cycle ScalarMem::access(uint64_t addr, uint32_t bytes, bool write, Requester who, Cycle now) {
    wait_until(now);
    m_req.addr = addr;
    m_req.bytes = bytes;
    m_req.write = write;
    m_req.atomic_add = false;
    m_req.who = who;
    m_req.issue_tick = now_tick();
    m_done = false;
    m_mem.submit(m_req);
    while (!m_done) sc_core::wait(m_done_ev);
    return max(now, m_clock.ceil_cycle(m_req.done_tick));
}

void ScalarMem::stall_slice(const char* what, Cycle from, Cycle to) {
    if (m_trace.on(TraceLevel::Instr) && to > from)
        m_trace.sink()->slice(m_track, what, m_clock.to_tick(from), m_clock.to_tick(to), nullptr, 0);
}

Cycle ScalarMem::translate(uint64_t addr, Cycle now) {
    const uint64_t page = addr >> m_page_shift;
    if (m_tlb.lookup(page)) return now;
    ++m_tlb_misses;
    const Cycle from = now;
    now += Cycle(m_p.tlb_miss_cycles);
    // One entry per level, each read once the level above returned (a radix table of 512
    // entries per 4 KiB level, in the system region).
    for (uint32_t l = 0; l < m_p.tlb_walk_levels; ++l) {
        const uint32_t shift = 9 * (m_p.tlb_walk_levels - 1 - l);
        const uint64_t pte = m_page_table + uint64_t{l} * 4096 + ((page >> shift) & 511) * 8;
        now = access(pte, 8, false, Requester::PTW, now);
    }
    m_tlb.insert(page);
    m_tlb_stall += (now - from).v;
    stall_slice("tlb walk", from, now);
    return now;
}

Cycle ScalarMem::fetch(uint64_t addr, uint64_t bytes, Cycle now) {
    if (bytes == 0) return now;
    const uint64_t first = addr >> m_iline_shift, last = (addr + bytes - 1) >> m_iline_shift;
    for (uint64_t line = first; line <= last; ++line) {
        if (m_icache.lookup(line)) {
            ++m_ifetch_hits;
            continue;
        }
        ++m_ifetch_misses;
        const Cycle from = now;
        now = translate(line << m_iline_shift, now);
        const Cycle fill = now;
        now = access(line << m_iline_shift, m_p.icache_line_bytes, false, Requester::ICACHE, now);
        m_icache.insert(line);
        m_ifetch_stall += (now - from).v;
        stall_slice("icache miss", fill, now);
    }
    return now;
}

Cycle ScalarMem::data(uint64_t addr, bool write, Cycle now) {
    const uint64_t line = addr >> m_dline_shift;
    if (m_dcache.lookup(line)) {
        ++m_dhits;
    } else {
        ++m_dmisses;
        const Cycle from = now;
        now = translate(addr, now);
        const Cycle fill = now;
        const TagArray::Victim v = m_dcache.insert(line);
        if (v.dirty) {
            ++m_dwritebacks;
            now = access(v.line << m_dline_shift, m_p.dcache_line_bytes, true, Requester::DCACHE, now);
        }
        now = access(line << m_dline_shift, m_p.dcache_line_bytes, false, Requester::DCACHE, now);
        m_dstall += (now - from).v;
        stall_slice("dcache miss", fill, now);
    }
    if (write) m_dcache.set_dirty(line);
    return now + Cycle(m_p.dcache_hit_cycles);
}

Cycle ScalarMem::clean_invalidate(uint64_t addr, bool all, Cycle now) {
    const Cycle from = now;
    if (!all) {
        now += Cycle(m_p.dcci_line_cycles);
        const uint64_t line = addr >> m_dline_shift;
        if (m_dcache.invalidate(line)) {
            ++m_dwritebacks;
            now = access(line << m_dline_shift, m_p.dcache_line_bytes, true, Requester::DCACHE, now);
        }
    } else {
        now += Cycle(uint64_t{m_p.dcci_line_cycles} * m_dcache.capacity_lines());
        for (uint64_t line : m_dcache.take_dirty()) {
            ++m_dwritebacks;
            now = access(line << m_dline_shift, m_p.dcache_line_bytes, true, Requester::DCACHE, now);
        }
        m_dcache.clear();
    }
    stall_slice("dcci", from, now);
    return now;
}

Cycle ScalarMem::flush(Cycle now) {
    const Cycle from = now;
    for (uint64_t line : m_dcache.take_dirty()) {
        ++m_dwritebacks;
        now = access(line << m_dline_shift, m_p.dcache_line_bytes, true, Requester::DCACHE, now);
    }
    m_dstall += (now - from).v;
    stall_slice("dcache flush", from, now);
    return now;
}

}  // namespace sfumato
