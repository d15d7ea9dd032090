// A system of chips assembled from a system config, the way a chip is assembled from a chip
// config: `system.chips()` chips built from the same chip parameters (one chip model per chip,
// all in one simulation), named chip0..chipN-1 (their stats under /stats/chipN), and the fabric
// of links between them (stats under /stats/links, their energy under /stats/links/power). Each
// chip gets memory ports for the fabric's peer DMA and sends its peer copies and notifies through it.
#pragma once
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "models/chip/chip.h"
#include "models/link/fabric.h"
#include "models/link/system_params.h"
#include "models/link/topology.h"
#include "models/power/link_energy.h"
#include "sim/stats.h"
#include "sim/system_info.h"
#include "sim/trace.h"

namespace sfumato {

class System : public sc_core::sc_module {
public:
    // Throws ConfigError naming the key when the system config is invalid.
    System(sc_core::sc_module_name name, const SystemParams& sp, const ChipParams& cp, bool functional, TraceHub& trace,
           StatGroup& root);
    ~System() override;
    uint32_t size() const { return static_cast<uint32_t>(m_chips.size()); }
    Chip& chip(uint32_t i) { return *m_chips.at(i); }
    Fabric& fabric() { return *m_fabric; }
    const SystemInfo& info() const { return m_info; }
    // Every chip's queues and cores, and the peer copies under way (deadlock reports).
    std::string describe_state() const;

private:
    SystemInfo m_info;
    std::unique_ptr<Fabric> m_fabric;
    std::vector<std::unique_ptr<Chip>> m_chips;
    std::unique_ptr<power::LinkEnergyStats> m_link_energy;  // stats.h5 links/power/*
};

}  // namespace sfumato
