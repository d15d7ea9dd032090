#include "models/dma/sdma.h"
#include "models/dma/sdma_params.h"

#include <algorithm>
#include <cstring>

#include "sim/progress.h"
#include "sim/sc_time_util.h"

namespace sfumato {

HostLinkParams::HostLinkParams(const ParamScope& s)
    : gbps(s, "gbps", 25.0, "GB/s", "host link effective bandwidth (pinned memory)", {0.001, 1e5}),
      pageable_gbps(s, "pageable_gbps", 10.0, "GB/s", "rate through the bounce buffer for pageable memory", {0.001, 1e5}),
      latency_ns(s, "latency_ns", 1000.0, "ns", "host link one-way latency", {0.0, 1e9}) {}

SdmaParams::SdmaParams(const ParamScope& dma, const HostLinkParams& host_link)
    : engines(dma, "engines", 4, "", "SDMA engines (memcpy tasks run on them in parallel)", {1, 256}),
      max_outstanding(dma, "max_outstanding", 16, "requests", "chunks in flight per engine", {1, 4096}),
      link(host_link) {}

SdmaEngines::SdmaEngines(sc_core::sc_module_name name, const SdmaParams& p, IMemTarget& mem, uint32_t first_port,
                         uint32_t chunk_bytes, IBackingStore* gm, StatGroup& parent)
    : sc_core::sc_module(name),
      m_p(p),
      m_mem(mem),
      m_first_port(first_port),
      m_chunk(chunk_bytes),
      m_gm(gm),
      m_engines(p.engines),
      m_stats(&parent, basename()),
      m_copies(m_stats, "copies", "tasks", "memcpy tasks completed"),
      m_bytes(m_stats, "bytes", "B", "bytes copied"),
      m_link_bytes(m_stats, "host_link_bytes", "B", "bytes over the host link (PCIe; not chip-to-chip links)") {
    for (auto& e : m_engines) {
        e.reqs.resize(p.max_outstanding);
        for (uint32_t i = 0; i < p.max_outstanding; ++i) e.free.push_back(i);
    }
    SC_METHOD(process);
    sensitive << m_wake;
    dont_initialize();
}

void SdmaEngines::push(uint64_t tick, Ev kind, uint32_t engine, uint64_t arg) {
    m_events.push(tick, reinterpret_cast<void*>(static_cast<uintptr_t>(arg)), engine, kind);
    if (!m_in_process && tick < m_scheduled) {
        m_scheduled = tick;
        const uint64_t now = now_tick().v;
        m_wake.notify(to_sc_time(Tick(tick > now ? tick - now : 0)));
    }
}

void SdmaEngines::start(const MemcpyDesc& copy, IDmaClient& client, uint64_t cookie) {
    // Least-loaded engine, ties to the lowest index after the last one used.
    uint32_t best = m_next_engine;
    for (uint32_t i = 0; i < m_engines.size(); ++i) {
        const uint32_t e = (m_next_engine + i) % static_cast<uint32_t>(m_engines.size());
        if (m_engines[e].jobs.size() < m_engines[best].jobs.size()) best = e;
    }
    m_next_engine = (best + 1) % static_cast<uint32_t>(m_engines.size());
    Engine& e = m_engines[best];
    work_begin();  // a long transfer is progress for the deadlock detector
    e.jobs.push_back({copy, &client, cookie});
    if (e.jobs.size() == 1) {
        e.next = e.finished = 0;
        e.last_done = now_tick().v;
        if (copy.bytes == 0) push(now_tick().v, kJobDone, best, 0);
        else pump(best);
    }
}

uint64_t SdmaEngines::link_transfer(uint64_t ready, uint64_t bytes, bool pageable) {
    const double gbps = pageable ? std::min(m_p.link.gbps.get(), m_p.link.pageable_gbps.get()) : m_p.link.gbps.get();
    const uint64_t ps = static_cast<uint64_t>(static_cast<double>(bytes) * 1000.0 / gbps + 0.5);
    const uint64_t start = std::max(ready, m_link_free);
    m_link_free = start + ps;
    m_link_bytes += bytes;
    return m_link_free + static_cast<uint64_t>(m_p.link.latency_ns.get() * 1000.0);
}

// Starts as many chunks of the engine's current job as its outstanding limit allows.
void SdmaEngines::pump(uint32_t ei) {
    Engine& e = m_engines[ei];
    const Job& j = e.jobs.front();
    const uint64_t now = now_tick().v;
    while (e.next < j.copy.bytes && !e.free.empty()) {
        const uint64_t off = e.next;
        const uint64_t dev = j.copy.dir == CopyDir::H2D ? j.copy.dev_dst : j.copy.dev_src;
        // Chunks follow L2-line boundaries of the device address.
        const uint64_t len = std::min<uint64_t>(j.copy.bytes - off, m_chunk - (dev + off) % m_chunk);
        e.next += len;
        ++e.inflight;
        if (j.copy.dir == CopyDir::H2D) {
            // The chunk crosses the link, then is written to device memory.
            push(link_transfer(now, len, !j.copy.pinned), kLinkArrived, ei, off);
            continue;
        }
        const uint32_t slot = e.free.back();
        e.free.pop_back();
        MemRequest& r = e.reqs[slot];
        r.addr = j.copy.dev_src + off;
        r.bytes = static_cast<uint32_t>(len);
        r.write = false;
        r.who = Requester::SDMA;
        r.port = static_cast<uint16_t>(m_first_port + ei);
        r.client = this;
        r.tag = (uint64_t(ei) << 48) | slot;
        r.issue_tick = Tick(now);
        m_mem.submit(r);
    }
}

// Writes H2D chunks that came off the link into device memory, as request slots allow.
void SdmaEngines::write_arrived(uint32_t ei) {
    Engine& e = m_engines[ei];
    const Job& j = e.jobs.front();
    while (!e.arrived.empty() && !e.free.empty()) {
        const uint64_t off = e.arrived.front();
        e.arrived.pop_front();
        const uint64_t len = std::min<uint64_t>(j.copy.bytes - off, m_chunk - (j.copy.dev_dst + off) % m_chunk);
        const uint32_t slot = e.free.back();
        e.free.pop_back();
        MemRequest& r = e.reqs[slot];
        r.addr = j.copy.dev_dst + off;
        r.bytes = static_cast<uint32_t>(len);
        r.write = true;
        r.who = Requester::SDMA;
        r.port = static_cast<uint16_t>(m_first_port + ei);
        r.client = this;
        r.tag = (uint64_t(ei) << 48) | slot;
        r.issue_tick = now_tick();
        m_mem.submit(r);
    }
}

void SdmaEngines::mem_done(MemRequest& r) {
    const uint32_t ei = static_cast<uint32_t>(r.tag >> 48);
    const uint32_t slot = static_cast<uint32_t>(r.tag & 0xffff);
    Engine& e = m_engines[ei];
    const Job& j = e.jobs.front();
    const uint64_t now = now_tick().v;
    if (!r.write && j.copy.dir == CopyDir::D2D) {
        // Read done: write the same chunk to the destination.
        r.addr = j.copy.dev_dst + (r.addr - j.copy.dev_src);
        r.write = true;
        r.issue_tick = Tick(now);
        m_mem.submit(r);
        return;
    }
    const uint64_t len = r.bytes;
    e.free.push_back(slot);
    if (!r.write && j.copy.dir == CopyDir::D2H) {
        e.last_done = std::max(e.last_done, link_transfer(now, len, !j.copy.pinned));
        push(e.last_done, kChunkDone, ei, len);
        pump(ei);
        return;
    }
    e.last_done = std::max(e.last_done, now);
    if (j.copy.dir == CopyDir::H2D) write_arrived(ei);
    chunk_finished(ei, len);
}

void SdmaEngines::chunk_finished(uint32_t ei, uint64_t bytes) {
    Engine& e = m_engines[ei];
    --e.inflight;
    e.finished += bytes;
    if (e.finished == e.jobs.front().copy.bytes) complete_job(ei);
    else pump(ei);
}

void SdmaEngines::complete_job(uint32_t ei) {
    Engine& e = m_engines[ei];
    const Job j = e.jobs.front();
    e.jobs.pop_front();
    if (m_gm && j.copy.bytes) {
        std::vector<uint8_t> buf(j.copy.bytes);  // once per copy task, not per chunk
        switch (j.copy.dir) {
            case CopyDir::H2D:
                if (j.copy.host_src) m_gm->write(j.copy.dev_dst, j.copy.host_src, j.copy.bytes);
                break;
            case CopyDir::D2H:
                if (j.copy.host_dst) m_gm->read(j.copy.dev_src, j.copy.host_dst, j.copy.bytes);
                break;
            case CopyDir::D2D:
                m_gm->read(j.copy.dev_src, buf.data(), j.copy.bytes);
                m_gm->write(j.copy.dev_dst, buf.data(), j.copy.bytes);
                break;
            case CopyDir::P2P: break;  // the chip routes peer copies to the fabric
        }
    }
    ++m_copies;
    m_bytes += j.copy.bytes;
    work_end();
    if (!e.jobs.empty()) {
        e.next = e.finished = 0;
        if (e.jobs.front().copy.bytes == 0) push(now_tick().v, kJobDone, ei, 0);
        else pump(ei);
    }
    j.client->dma_done(j.cookie);
}

void SdmaEngines::process() {
    m_in_process = true;
    const uint64_t now = now_tick().v;
    mem::WheelItem it;
    while (m_events.pop_due(now, it)) {
        const uint32_t ei = it.arg;
        const uint64_t arg = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(it.ptr));
        Engine& e = m_engines[ei];
        switch (static_cast<Ev>(it.kind)) {
            case kLinkArrived:
                e.arrived.push_back(arg);
                write_arrived(ei);
                break;
            case kChunkDone: chunk_finished(ei, arg); break;
            case kJobDone: complete_job(ei); break;
        }
    }
    m_in_process = false;
    m_scheduled = m_events.next_tick();
    if (m_scheduled != mem::EventWheel::kEmpty) m_wake.notify(to_sc_time(Tick(m_scheduled - now)));
}

}  // namespace sfumato
