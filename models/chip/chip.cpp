#include "models/chip/chip.h"

#include <algorithm>

#include "sim/error.h"

namespace sfumato {

Chip::Chip(sc_core::sc_module_name name, const ChipParams& p, bool functional, TraceHub& trace, StatGroup& root,
           uint32_t device_id, uint32_t extra_ports)
    : sc_core::sc_module(name), m_p(p), m_stats(&root, std::string(basename())) {
    const ClockDomain clk = p.clock();
    const bool split = p.split();
    m_info = device_info(p, functional);
    m_info.device_id = device_id;

    if (functional) m_gm = std::make_unique<SparseMemory>(p.gm_capacity());
    m_instr_stats = std::make_unique<InstrStats>(m_stats);
    const uint32_t ports = p.mem_ports();
    if (p.detailed_mem()) {
        m_first_extra_port = p.mem_system_ports();
        m_memsys = std::make_unique<mem::MemorySystem>("mem", p.mem, &m_stats, &trace, clk, p.mem_system_ports() + extra_ports);
        m_mem = m_memsys.get();
        m_sdma = std::make_unique<SdmaEngines>("sdma", p.sdma, *m_memsys, ports, p.mem.l2.g.line_bytes, m_gm.get(), m_stats);
        m_dma = m_sdma.get();
    } else {
        m_first_extra_port = ports;
        m_simple_gm = std::make_unique<SimpleGm>("gm", p.gm, clk, ports + extra_ports, m_stats);
        m_mem = m_simple_gm.get();
        m_simple_dma = std::make_unique<SimpleDma>("dma", p.dma, m_gm.get(), m_stats);
        m_dma = m_simple_dma.get();
    }

    if (p.system.bytes >= p.gm_capacity())
        throw ConfigError("chip.system.bytes", "must be below the device memory capacity (" + std::to_string(p.gm_capacity()) + " B)");
    m_region = std::make_unique<SystemRegion>(p.system, p.core.smem.code_entry_bytes, p.core.smem.code_site_bytes,
                                              p.core.smem.icache_line_bytes);
    if (split) m_xflags = std::make_unique<CrossFlags>(p.cube_cores, p.aiv_per_aic, p.core.cross_flag_latency);
    std::vector<AiCore*> cube, vec;
    uint32_t index = 0;
    // Every core of a kind has the chip's core parameters, GM capacity and cross-core flags (split
    // parts: all of them), so the kind's cores share one memo of their issue work.
    auto memo = [&](isa::CoreKind kind) {
        auto& m = m_issue_memos[static_cast<size_t>(kind)];
        if (!m) m = std::make_unique<IssueMemo>();
        return m.get();
    };
    for (uint32_t i = 0; i < p.cube_cores; ++i) {
        const std::string n = (split ? "aic" : "core") + std::to_string(i);
        m_cores.push_back(std::make_unique<AiCore>(n.c_str(), index++, split ? isa::CoreKind::Cube : isa::CoreKind::Coupled,
                                                   p.core, clk, *m_mem, m_gm.get(), p.gm_capacity(), trace,
                                                   *m_instr_stats, m_stats, m_region->page_table()));
        cube.push_back(m_cores.back().get());
        if (split) cube.back()->attach_cross_flags(m_xflags.get(), i, 0);
        cube.back()->share_issue_memo(memo(split ? isa::CoreKind::Cube : isa::CoreKind::Coupled));
    }
    if (split) {
        for (uint32_t i = 0; i < p.vector_cores(); ++i) {
            const std::string n = "aiv" + std::to_string(i);
            m_cores.push_back(std::make_unique<AiCore>(n.c_str(), index++, isa::CoreKind::Vector, p.core, clk, *m_mem,
                                                       m_gm.get(), p.gm_capacity(), trace, *m_instr_stats, m_stats,
                                                       m_region->page_table()));
            vec.push_back(m_cores.back().get());
            vec.back()->attach_cross_flags(m_xflags.get(), i / p.aiv_per_aic, i % p.aiv_per_aic);
            vec.back()->share_issue_memo(memo(isa::CoreKind::Vector));
        }
    }
    m_runner = std::make_unique<ts::AiCoreRunner>(cube, vec, clk, *m_region);
    m_router.local = m_dma;
    m_router.device_id = device_id;
    m_ts = std::make_unique<ts::TaskScheduler>("ts", p.ts, clk, m_info, *m_runner, m_router, &m_stats, &trace);
    m_energy = std::make_unique<power::EnergyAttributor>(m_stats, p.power, power::chip_shape(p));
    m_ts->set_kernel_span_hook([this](const Task& t, bool started, uint64_t tick) {
        if (started) m_energy->kernel_started(t.id, tick);
        else m_energy->kernel_finished(t, tick);
    });
}

uint32_t Chip::line_bytes() const { return m_p.detailed_mem() ? m_p.mem.l2.g.line_bytes : 512u; }

void Chip::attach_fabric(IFabric* fabric) {
    m_router.fabric = fabric;
    m_ts->set_fabric(fabric, m_info.device_id);
}

void Chip::DmaRouter::start(const MemcpyDesc& copy, IDmaClient& client, uint64_t cookie) {
    if (copy.dir == CopyDir::P2P) {
        if (!fabric) throw ModelError("chip", "peer copy on a chip without peers");
        if (copy.pull) {  // the data flows from the peer to this chip
            MemcpyDesc from = copy;
            from.peer = device_id;
            fabric->start_peer_copy(copy.peer, from, client, cookie);
        } else {
            fabric->start_peer_copy(device_id, copy, client, cookie);
        }
    } else {
        local->start(copy, client, cookie);
    }
}

ITrafficReplay* Chip::traffic_replay() { return m_memsys.get(); }

bool Chip::kernel_activity(const Task& t, std::vector<double>& out) const {
    power::Events e;
    if (!m_energy->kernel_activity(t, e)) return false;
    out.assign(e.n.begin(), e.n.end());
    return true;
}

bool Chip::charge_standin(const Task& standin, const std::vector<double>& activity) {
    if (activity.size() != power::kNumEvents) return false;
    power::Events e;
    std::copy(activity.begin(), activity.end(), e.n.begin());
    m_energy->charge_like(standin.id, e);
    return true;
}

void Chip::flush_caches() {
    if (!m_memsys) return;  // the skeleton memory has no cache
    m_memsys->flush_l2();
    while (m_memsys->writebacks_pending() > 0) sc_core::wait(m_memsys->writebacks_drained());
}

std::string Chip::describe_state() const {
    std::string s = "task queues:\n" + m_ts->describe_state() + "cores:\n";
    for (const auto& c : m_cores)
        if (c->busy()) s += "  " + c->describe_state();
    return s;
}

}  // namespace sfumato
