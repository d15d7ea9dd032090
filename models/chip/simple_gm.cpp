#include "models/chip/simple_gm.h"

#include <algorithm>

#include "sim/sc_time_util.h"

namespace sfumato {

SimpleGmParams::SimpleGmParams(const ParamScope& s)
    : capacity(s, "capacity", 256ull << 20, "B", "device memory capacity", {1ull << 20, 1ull << 40}),
      latency(s, "latency", 100, "cycle", "load-to-use latency of global memory", {0, 100000}),
      bytes_per_cycle(s, "bytes_per_cycle", 32, "B/cycle", "device-wide global-memory bandwidth", {1, 1u << 20}),
      port_read_bpc(s, "port_read_bytes_per_cycle", 32, "B/cycle", "per-core read port bandwidth", {1, 1u << 16}),
      port_write_bpc(s, "port_write_bytes_per_cycle", 64, "B/cycle", "per-core write port bandwidth", {1, 1u << 16}) {}

SimpleGm::SimpleGm(sc_core::sc_module_name name, const SimpleGmParams& p, ClockDomain clock, uint32_t ports, StatGroup& parent)
    : sc_core::sc_module(name),
      m_p(p),
      m_clock(clock),
      m_done("done"),
      m_order(ports, [this](MemRequest& r) { accept(r); }),
      m_read_free(ports, 0),
      m_write_free(ports, 0),
      m_stats(&parent, "gm"),
      m_reads(m_stats, "reads", "req", "read requests"),
      m_writes(m_stats, "writes", "req", "write requests"),
      m_read_bytes(m_stats, "read_bytes", "B", "bytes read"),
      m_write_bytes(m_stats, "write_bytes", "B", "bytes written"),
      m_latency(m_stats, "latency", "cycle", "request latency from submit to completion") {}

void SimpleGm::submit(MemRequest& req) { m_order.submit(req); }

void SimpleGm::accept(MemRequest& req) {
    // Time in units of 1/(port bpc * shared bpc) cycles would be exact; cycles rounded up per
    // request are close enough for a skeleton and stay integer.
    const uint64_t now = m_clock.ceil_cycle(now_tick()).v;
    auto& port = req.write ? m_write_free : m_read_free;
    const uint32_t port_bpc = req.write ? m_p.port_write_bpc : m_p.port_read_bpc;
    const uint64_t port_cycles = (req.bytes + port_bpc - 1) / port_bpc;
    const uint64_t shared_cycles = (req.bytes + m_p.bytes_per_cycle - 1) / m_p.bytes_per_cycle;
    uint64_t& pf = port[std::min<size_t>(req.port, port.size() - 1)];
    const uint64_t port_start = std::max(now, pf);
    pf = port_start + port_cycles;
    const uint64_t shared_start = std::max(port_start, m_free);
    m_free = shared_start + shared_cycles;
    const uint64_t done = std::max(pf, m_free) + m_p.latency;
    req.done_tick = m_clock.to_tick(Cycle(done));
    m_latency.sample(static_cast<double>(done - now));
    if (req.write) { ++m_writes; m_write_bytes += req.bytes; }
    else { ++m_reads; m_read_bytes += req.bytes; }
    m_done.push(req);
}

}  // namespace sfumato
