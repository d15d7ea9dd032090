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
#include "sim/system_if.h"
#include "sim/system_info.h"
#include "sim/trace.h"

namespace sfumato {

class System : public sc_core::sc_module, public ISystem {
public:
    // Throws ConfigError naming the key when the system config is invalid. `sp` must outlive
    // the system (its link power parameters price the energy).
    System(sc_core::sc_module_name name, const SystemParams& sp, const ChipParams& cp, bool functional, TraceHub& trace,
           StatGroup& root);
    ~System() override;
    uint32_t size() const override { return static_cast<uint32_t>(m_chips.size()); }
    Chip& chip(uint32_t i) { return *m_chips.at(i); }
    Fabric& fabric() { return *m_fabric; }
    const SystemInfo& info() const override { return m_info; }
    // Every chip's queues and cores, and the peer copies under way (deadlock reports).
    std::string describe_state() const override;

    // ISystem (sim/system_if.h).
    IDevice& device(uint32_t i) override { return chip(i); }
    ClockDomain clock() const override { return m_clock; }
    size_t link_channels() const override;
    LinkCounters link_counters(size_t channel) const override;
    uint64_t lookahead_ps() const override;
    void distribute(WindowSync& sync) override;
    void finish_energy(uint64_t end_ps) override;
    nlohmann::json energy_json(const std::function<bool(uint32_t chip)>& local, double cycles,
                               double seconds) const override;

private:
    const SystemParams& m_sp;
    ClockDomain m_clock;
    SystemInfo m_info;
    std::unique_ptr<Fabric> m_fabric;
    std::vector<std::unique_ptr<Chip>> m_chips;
    std::unique_ptr<power::LinkEnergyStats> m_link_energy;  // stats.h5 links/power/*
};

}  // namespace sfumato
