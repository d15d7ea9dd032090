#include "models/link/system.h"

#include "models/power/energy_report.h"

namespace sfumato {

System::System(sc_core::sc_module_name name, const SystemParams& sp, const ChipParams& cp, bool functional,
               TraceHub& trace, StatGroup& root)
    : sc_core::sc_module(name), m_sp(sp), m_clock(cp.clock()) {
    Topology topo = build_topology(sp);
    m_info = system_info(sp, topo);
    const uint32_t ports = sp.dma_engines;
    for (uint32_t i = 0; i < sp.chips(); ++i) {
        const std::string n = "chip" + std::to_string(i);
        m_chips.push_back(std::make_unique<Chip>(n.c_str(), cp, functional, trace, root, i, ports));
    }
    m_fabric = std::make_unique<Fabric>("links", sp, std::move(topo), root, &trace);
    for (uint32_t i = 0; i < size(); ++i) {
        Chip& c = *m_chips[i];
        m_fabric->attach(i, c.mem_target(), c.first_extra_port(), ports, c.line_bytes(), c.gm(), c.scheduler());
        c.attach_fabric(m_fabric.get());
    }
    Fabric* f = m_fabric.get();
    m_link_energy = std::make_unique<power::LinkEnergyStats>(f->stats(), sp.power, f->topology(), [f] {
        std::vector<uint64_t> w(f->topology().channels.size());
        for (size_t i = 0; i < w.size(); ++i) w[i] = f->counters(i).wire_bytes;
        return w;
    });
}

System::~System() = default;

std::string System::describe_state() const {
    std::string s;
    for (size_t i = 0; i < m_chips.size(); ++i) s += "chip " + std::to_string(i) + ":\n" + m_chips[i]->describe_state();
    const auto links = m_fabric->pending();
    if (!links.empty()) {
        s += "links:\n";
        for (const auto& l : links) s += "  " + l + "\n";
    }
    return s;
}

size_t System::link_channels() const { return m_fabric->topology().channels.size(); }

ISystem::LinkCounters System::link_counters(size_t channel) const {
    const ChannelSpec& c = m_fabric->topology().channels.at(channel);
    const Fabric::ChannelCounters k = m_fabric->counters(channel);
    LinkCounters l;
    l.name = c.name;
    l.gbps = c.gbps;
    l.payload_bytes = k.payload_bytes;
    l.wire_bytes = k.wire_bytes;
    l.busy_ps = k.busy_ps;
    return l;
}

uint64_t System::lookahead_ps() const { return Fabric::lookahead_ps(m_fabric->topology()); }

void System::distribute(WindowSync& sync) { m_fabric->distribute(sync); }

void System::finish_energy(uint64_t end_ps) {
    for (const auto& c : m_chips) c->energy().finish(end_ps);
}

nlohmann::json System::energy_json(const std::function<bool(uint32_t chip)>& local, double cycles,
                                   double seconds) const {
    std::vector<const power::EnergyAttributor*> chips;
    std::vector<uint32_t> ids;
    for (uint32_t i = 0; i < size(); ++i)
        if (local(i)) chips.push_back(&m_chips[i]->energy()), ids.push_back(i);
    const Fabric& f = *m_fabric;
    std::vector<uint64_t> wire(f.topology().channels.size());
    for (size_t c = 0; c < wire.size(); ++c) wire[c] = f.counters(c).wire_bytes;
    const power::LinkEnergy links = power::link_energy(m_sp.power, f.topology(), wire, local, seconds);
    return power::system_energy_json(chips, ids, &links, cycles, seconds);
}

}  // namespace sfumato
