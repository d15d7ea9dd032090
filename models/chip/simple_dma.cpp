#include "models/chip/simple_dma.h"

#include <cmath>
#include <vector>

#include "sim/progress.h"
#include "sim/sc_time_util.h"

namespace sfumato {

SimpleDmaParams::SimpleDmaParams(const ParamScope& dma, const HostLinkParams& host_link)
    : d2d_gbps(dma, "d2d_gbps", 100.0, "GB/s", "device-to-device copy bandwidth", {0.001, 100000.0}), link(host_link) {}

SimpleDma::SimpleDma(sc_core::sc_module_name name, const SimpleDmaParams& p, IBackingStore* gm, StatGroup& parent)
    : sc_core::sc_module(name),
      m_p(p),
      m_gm(gm),
      m_stats(&parent, "dma"),
      m_copies(m_stats, "copies", "copy", "memcpy tasks served"),
      m_bytes(m_stats, "bytes", "B", "bytes copied") {
    SC_METHOD(fire);
    sensitive << m_wake;
    dont_initialize();
}

void SimpleDma::start(const MemcpyDesc& copy, IDmaClient& client, uint64_t cookie) {
    const double gbps = copy.dir == CopyDir::D2D ? m_p.d2d_gbps.get()
                        : copy.pinned            ? m_p.link.gbps.get()
                                                 : std::min(m_p.link.gbps.get(), m_p.link.pageable_gbps.get());
    const uint64_t latency_ps = copy.dir == CopyDir::D2D ? 0 : static_cast<uint64_t>(m_p.link.latency_ns.get() * 1000.0);
    // bytes / (GB/s) = ns; in ps: bytes * 1000 / gbps.
    const uint64_t xfer_ps = static_cast<uint64_t>(std::ceil(static_cast<double>(copy.bytes) * 1000.0 / gbps));
    const Tick start = max(now_tick(), m_free);
    m_free = start + Tick(xfer_ps);
    m_jobs.push_back({copy, &client, cookie, m_free + Tick(latency_ps)});
    work_begin();
    ++m_copies;
    m_bytes += copy.bytes;
    if (m_jobs.size() == 1) m_wake.notify(to_sc_time(m_jobs.front().done - now_tick()));
}

void SimpleDma::fire() {
    const Tick now = now_tick();
    while (!m_jobs.empty() && m_jobs.front().done <= now) {
        Job j = m_jobs.front();
        m_jobs.pop_front();
        if (m_gm) {
            const MemcpyDesc& c = j.copy;
            if (c.dir == CopyDir::H2D && c.host_src) m_gm->write(c.dev_dst, c.host_src, c.bytes);
            else if (c.dir == CopyDir::D2H && c.host_dst) m_gm->read(c.dev_src, c.host_dst, c.bytes);
            else if (c.dir == CopyDir::D2D) {
                std::vector<uint8_t> tmp(c.bytes);
                m_gm->read(c.dev_src, tmp.data(), c.bytes);
                m_gm->write(c.dev_dst, tmp.data(), c.bytes);
            }
        }
        work_end();
        j.client->dma_done(j.cookie);
    }
    if (!m_jobs.empty()) m_wake.notify(to_sc_time(m_jobs.front().done - now));
}

}  // namespace sfumato
