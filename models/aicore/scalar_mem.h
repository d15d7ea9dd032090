// The memory side of an AI core's scalar unit: an instruction cache that the kernel's code is
// fetched into, a data cache for the scalar unit's own loads and stores of global memory (the
// kernel's argument block, GlobalTensor GetValue/SetValue), and the TLB both go through. Misses
// are real requests to the chip's memory system on the core's port (L2, HBM), so cores starting
// the same kernel at once contend where the memory system makes them (the same L2 slice, the
// same HBM bank), and a TLB miss walks the page table with dependent reads through it too.
// The scalar unit is in order and blocking: every miss stalls it until the data returns, so
// these calls run on the scalar thread and wait in SystemC time (the scalar unit is synchronised
// with SystemC at each miss; hits cost arithmetic cycles only).
// Abstraction: set-associative tag arrays with LRU, no data (timing only: functional loads and
// stores go straight to global memory, so values are always coherent); the instruction cache is
// read-only; the data cache is write-back and write-allocate, and a dirty victim is written back
// before the fill. The TLB caches translations of pages of tlb.page_bytes; a walk reads one
// 8-byte entry per level from the page table in the chip's system region. Only the scalar unit's
// accesses are translated here (the MTEs' DMA translation is not modelled).
#pragma once
#include <cstdint>
#include <string>
#include <systemc>
#include <vector>

#include "isa/instr_sink.h"
#include "models/aicore/scalar_mem_params.h"
#include "models/aicore/tag_array.h"
#include "sim/mem_if.h"
#include "sim/stats.h"
#include "sim/time.h"
#include "sim/trace.h"

namespace sfumato {

class ScalarMem : public IMemClient {
public:
    // `port`: the core's memory port; `page_table`: device address of the page table.
    ScalarMem(const std::string& path, const ScalarMemParams& p, isa::CoreKind kind, ClockDomain clock, IMemTarget& mem,
              uint16_t port, uint64_t page_table, TraceHub& trace, StatGroup& parent);

    // Each starts at the scalar unit's cycle `now` and returns the cycle it is done; misses wait
    // (on the calling SC_THREAD) for the memory system.
    // Code [addr, addr + bytes): every line not in the instruction cache is fetched (in order).
    Cycle fetch(uint64_t addr, uint64_t bytes, Cycle now);
    // A scalar load or store of `bytes` (within one line) at addr: dcache.hit_cycles on a hit.
    Cycle load(uint64_t addr, Cycle now) { return data(addr, false, now); }
    Cycle store(uint64_t addr, Cycle now) { return data(addr, true, now); }
    // DCCI: writes back (if dirty) and invalidates the line holding addr, or every line.
    Cycle clean_invalidate(uint64_t addr, bool all, Cycle now);
    // Writes back every dirty line (the kernel epilogue's flush at the end of a block).
    Cycle flush(Cycle now);
    // A new kernel: caches and TLB start empty (the code and translations may have changed).
    void reset();
    void set_trace_track(TrackId t) { m_track = t; }
    uint64_t tlb_page_bytes() const { return m_p.tlb_page_bytes; }

    void mem_done(MemRequest& r) override;

private:
    Cycle data(uint64_t addr, bool write, Cycle now);
    Cycle translate(uint64_t addr, Cycle now);
    // One blocking request to the memory system; returns the cycle it completed.
    Cycle access(uint64_t addr, uint32_t bytes, bool write, Requester who, Cycle now);
    void wait_until(Cycle c);
    void stall_slice(const char* what, Cycle from, Cycle to);

    std::string m_path;
    const ScalarMemParams& m_p;
    ClockDomain m_clock;
    IMemTarget& m_mem;
    uint64_t m_page_table;
    TraceHub& m_trace;
    TrackId m_track = 0;
    uint32_t m_iline_shift = 0, m_dline_shift = 0, m_page_shift = 0;
    TagArray m_icache, m_dcache, m_tlb;
    MemRequest m_req;
    bool m_done = false;
    sc_core::sc_event m_done_ev;

    StatGroup m_stats;
    Counter m_ifetch_hits, m_ifetch_misses, m_ifetch_stall;
    Counter m_dhits, m_dmisses, m_dwritebacks, m_dstall;
    Counter m_tlb_misses, m_tlb_stall;
};

}  // namespace sfumato
