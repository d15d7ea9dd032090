// Skeleton global memory: a fixed latency plus bandwidth limits (per-core read and write ports,
// and one shared bandwidth for the whole device), all computed arithmetically per request.
// No DRAM, L2 or NoC structure: the memory-system model (models/mem) replaces it.
#pragma once
#include <systemc>
#include <vector>

#include "sim/config.h"
#include "sim/mem_completion_queue.h"
#include "sim/mem_if.h"
#include "sim/stats.h"
#include "sim/submit_order.h"
#include "sim/time.h"

namespace sfumato {

struct SimpleGmParams {
    explicit SimpleGmParams(const ParamScope& s);
    Param<uint64_t> capacity;
    Param<uint32_t> latency;
    Param<uint32_t> bytes_per_cycle;
    Param<uint32_t> port_read_bpc;
    Param<uint32_t> port_write_bpc;
};

class SimpleGm : public sc_core::sc_module, public IMemTarget {
public:
    SimpleGm(sc_core::sc_module_name name, const SimpleGmParams& p, ClockDomain clock, uint32_t ports, StatGroup& parent);
    void submit(MemRequest& req) override;

private:
    void accept(MemRequest& req);
    const SimpleGmParams& m_p;
    ClockDomain m_clock;
    MemCompletionQueue m_done;
    SubmitOrder m_order;  // the requests of one instant in an order of their own (shared bandwidth)
    std::vector<uint64_t> m_read_free, m_write_free;  // per-port, in cycles (x bytes-per-cycle scale)
    uint64_t m_free = 0;                               // shared bandwidth, in byte-slots
    StatGroup m_stats;
    Counter m_reads, m_writes, m_read_bytes, m_write_bytes;
    Average m_latency;
};

}  // namespace sfumato
