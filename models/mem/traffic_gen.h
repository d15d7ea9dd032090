// A synthetic memory client for `sfumato membench` and the memory tests: K cores' MTE2 (reads)
// and MTE3 (writes) ports issuing line-sized (or smaller) requests with a per-core limit on
// outstanding requests. Patterns: sequential (each core streams its own contiguous chunk),
// strided, and uniformly random over the footprint (deterministic xorshift per core). `copy`
// reads a block then writes it to a destination region. Runs `passes` times over the same
// addresses, one pass after the other, and calls on_pass after each. No process ticks: it
// issues at start and then only from mem_done callbacks, and takes the time from the
// completed request (so it can be the memory system's run-ahead client).
// A target that takes bursts (the bulk memory service) gets reads and writes as bursts instead:
// per core, two bursts of max_outstanding requests on their way, each burst completing when the
// core's next request could issue (sim/mem_if.h), so the stream goes on without a gap; the
// requests and their order are the same. Copies stay request by request.
#pragma once
#include <functional>
#include <systemc>
#include <vector>

#include "sim/mem_if.h"

namespace sfumato::mem {

enum class Pattern : uint8_t { Seq, Random, Stride };
enum class MemOp : uint8_t { Read, Write, Copy };

struct TrafficSpec {
    Pattern pattern = Pattern::Seq;
    MemOp op = MemOp::Read;
    uint64_t bytes = 1 << 20;      // bytes per pass (copy: bytes read; as many are written)
    uint32_t cores = 1;
    uint32_t request_bytes = 128;
    uint64_t stride = 0;           // Stride: distance between requests
    uint32_t max_outstanding = 32; // per core
    uint64_t base = 0;             // source region
    uint64_t footprint = 0;        // Random: addresses in [base, base + footprint)
    uint64_t dst_base = 0;         // Copy: destination region
    uint32_t passes = 1;
    bool bursts = true;            // reads and writes as bursts to a target that takes them
};

class TrafficGen : public sc_core::sc_module, public IMemClient {
public:
    SC_HAS_PROCESS(TrafficGen);
    TrafficGen(sc_core::sc_module_name name, const TrafficSpec& spec, IMemTarget& target);
    void mem_done(MemRequest& r) override;

    uint64_t bytes_moved() const { return m_bytes_moved; }
    uint64_t bytes_written() const { return m_bytes_written; }  // the written part of bytes_moved
    Tick end_tick() const { return m_end; }
    Tick pass_start() const { return m_pass_start; }
    bool finished() const { return m_finished; }
    uint64_t completions() const { return m_completions; }  // mem_done calls (one per burst in burst mode)
    std::function<void(uint32_t pass)> on_pass;

private:
    struct Core {
        uint64_t next = 0;   // request index within this core's share
        uint64_t count = 0;  // requests per pass
        uint64_t chunk_base = 0;
        uint64_t rng = 0;
        MemBurstChain chain;  // burst mode: the core's request slots
    };
    void start();
    // A slot's first request of a pass (m_live counts it).
    void issue(uint32_t core, MemRequest& r);
    // The next request of `core` in slot r. (Inlined into mem_done: once per request.)
    [[gnu::always_inline]] inline void next_request(uint32_t core, MemRequest& r);
    void issue_burst(uint32_t core, MemRequest& r);
    // Out of line: mem_done's request-by-request path stays a leaf's size.
    [[gnu::noinline]] void burst_done(MemRequest& r);
    // Every request of the pass completed: the next pass, or the end.
    [[gnu::noinline]] void pass_done();
    uint64_t address(uint32_t core, uint64_t i);
    void begin_pass();

    TrafficSpec m_spec;
    IMemTarget& m_target;
    std::vector<Core> m_cores;
    std::vector<MemRequest> m_reqs;
    bool m_bursts = false;
    std::vector<MemBurst> m_burst;  // burst mode: beside m_reqs (the first two of each core's)
    uint64_t m_bytes_moved = 0;
    uint64_t m_bytes_written = 0;
    uint64_t m_live = 0;
    uint32_t m_pass = 0;
    Tick m_end, m_pass_start;
    Tick m_now;  // the current time: SystemC time at start, then each completion's done_tick
    bool m_finished = false;
    uint64_t m_completions = 0;
};

}  // namespace sfumato::mem
