#include "models/link/system.h"

namespace sfumato {

System::System(sc_core::sc_module_name name, const SystemParams& sp, const ChipParams& cp, bool functional,
               TraceHub& trace, StatGroup& root)
    : sc_core::sc_module(name) {
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

}  // namespace sfumato
