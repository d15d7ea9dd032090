// SDMA engines serving memcpy tasks, and the host link (PCIe) they share. Abstraction: a copy is
// cut into L2-line chunks; device-side chunks go through the memory system (L2, NoC, HBM) as
// SDMA requests on the engine's own port, host-side chunks cross the link at its bandwidth after
// its latency (pinned memory directly; pageable memory through a bounce buffer at a lower rate).
// Each engine runs its copies in order with a bounded number of chunks in flight; the link is
// one shared FIFO resource whose occupancy is computed arithmetically. Functional data (when a
// backing store exists) moves at completion, so timing mode costs the same cycles.
// Simplified: no descriptor fetch cost, no link packet/credit model (an effective rate).
#pragma once
#include <deque>
#include <systemc>
#include <vector>

#include "models/dma/i_dma.h"
#include "models/mem/event_wheel.h"
#include "models/dma/sdma_params.h"
#include "sim/mem_if.h"
#include "sim/stats.h"

namespace sfumato {

class SdmaEngines : public sc_core::sc_module, public IDmaEngine, public IMemClient {
public:
    SC_HAS_PROCESS(SdmaEngines);
    // `first_port`: the memory port of engine 0 (engines use consecutive ports).
    SdmaEngines(sc_core::sc_module_name name, const SdmaParams& p, IMemTarget& mem, uint32_t first_port,
                uint32_t chunk_bytes, IBackingStore* gm, StatGroup& parent);
    void start(const MemcpyDesc& copy, IDmaClient& client, uint64_t cookie) override;
    void mem_done(MemRequest& r) override;

private:
    struct Job {
        MemcpyDesc copy;
        IDmaClient* client;
        uint64_t cookie;
    };
    struct Engine {
        std::deque<Job> jobs;
        uint64_t next = 0;       // next chunk offset to start
        uint64_t finished = 0;   // bytes whose last step completed
        uint32_t inflight = 0;
        uint64_t last_done = 0;  // tick the job's last chunk completes (host side)
        std::vector<MemRequest> reqs;
        std::vector<uint32_t> free;
        std::deque<uint64_t> arrived;  // H2D chunk offsets off the link, waiting for a request slot
    };
    enum Ev : uint8_t { kLinkArrived, kChunkDone, kJobDone };
    void process();
    void push(uint64_t tick, Ev kind, uint32_t engine, uint64_t arg);
    void pump(uint32_t e);
    void write_arrived(uint32_t e);
    void chunk_finished(uint32_t e, uint64_t bytes);
    void complete_job(uint32_t e);
    uint64_t link_transfer(uint64_t ready, uint64_t bytes, bool pageable);

    const SdmaParams& m_p;
    IMemTarget& m_mem;
    uint32_t m_first_port;
    uint32_t m_chunk;
    IBackingStore* m_gm;
    std::vector<Engine> m_engines;
    uint32_t m_next_engine = 0;
    uint64_t m_link_free = 0;
    mem::EventWheel m_events;
    std::vector<uint64_t> m_event_args;
    sc_core::sc_event m_wake;
    uint64_t m_scheduled = ~uint64_t(0);
    bool m_in_process = false;
    StatGroup m_stats;
    Counter m_copies, m_bytes, m_link_bytes;
};

}  // namespace sfumato
