// Skeleton DMA engine: memcpy tasks over a host link (bandwidth and latency; pageable host
// memory at a lower rate through a bounce buffer) or device-to-device at the global-memory
// bandwidth, serialised on one engine. The memory-system model replaces it with SDMA engines
// whose traffic goes through L2 and HBM.
#pragma once
#include <deque>
#include <systemc>

#include "models/dma/i_dma.h"
#include "models/dma/sdma_params.h"
#include "sim/config.h"
#include "sim/stats.h"

namespace sfumato {

struct SimpleDmaParams {
    SimpleDmaParams(const ParamScope& dma, const HostLinkParams& host_link);
    Param<double> d2d_gbps;
    const HostLinkParams& link;  // chip.host_link.*, shared with the SDMA engines
};

class SimpleDma : public sc_core::sc_module, public IDmaEngine {
public:
    SC_HAS_PROCESS(SimpleDma);
    SimpleDma(sc_core::sc_module_name name, const SimpleDmaParams& p, IBackingStore* gm, StatGroup& parent);
    void start(const MemcpyDesc& copy, IDmaClient& client, uint64_t cookie) override;

private:
    struct Job {
        MemcpyDesc copy;
        IDmaClient* client;
        uint64_t cookie;
        Tick done;
    };
    void fire();
    const SimpleDmaParams& m_p;
    IBackingStore* m_gm;
    std::deque<Job> m_jobs;  // in completion order (one engine: FIFO)
    Tick m_free;
    sc_core::sc_event m_wake;
    StatGroup m_stats;
    Counter m_copies, m_bytes;
};

}  // namespace sfumato
