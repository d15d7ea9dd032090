// Energy of the links between chips (a system's fabric, models/link): each channel's wire bytes
// (payload and packet headers) priced per bit by its kind (system.power.*, link_power_params.h),
// and the switch ports' static power over the run (one port per NIC, when some route crosses the
// switch: a single server whose chips all reach each other directly needs none). A channel's energy is its sending chip's (a
// switch downlink's, its receiving chip's: the owner the fabric splits by), so each chip gets the
// energy of the links it drives and the system's sum is every channel's once. The switch's
// per-bit energy is charged on the NIC uplinks (every crossing enters the switch once).
// Simplified: a bit costs the same whether the link is busy or idle around it (the SerDes' idle
// power is in the chips' uncore_w; no link power states).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "models/link/topology.h"
#include "models/power/link_power_params.h"
#include "sim/stats.h"

namespace sfumato::power {

struct LinkEnergy {
    // Wire bytes carried, by kind (the NIC figure counts uplinks and downlinks, a crossing twice).
    double chip_link_bytes = 0, nic_bytes = 0, switch_bytes = 0;
    // Dynamic energy by kind (J) and the switch ports' static power (W) and energy (J).
    double chip_link_j = 0, nic_j = 0, switch_j = 0;
    double static_w = 0, static_j = 0;
    // Per chip (indexed by chip id): the dynamic energy of the channels it owns, the static power
    // of its switch ports.
    std::vector<double> chip_dynamic_j, chip_static_w;
    double dynamic() const { return chip_link_j + nic_j + switch_j; }
    double total() const { return dynamic() + static_j; }
};

// `wire_bytes[i]`: channel i's wire bytes; `counted(chip)`: whether a chip's channels count (the
// chips this process simulated); `seconds`: the run's time.
LinkEnergy link_energy(const LinkPowerParams& p, const Topology& t, const std::vector<uint64_t>& wire_bytes,
                       const std::function<bool(uint32_t chip)>& counted, double seconds);
// The chip that owns channel c (its sender; a switch downlink's receiver).
uint32_t channel_owner(const ChannelSpec& c);

// summary.json energy "fabric": wire bytes and joules by kind, static power, totals.
nlohmann::json link_energy_json(const LinkEnergy& e);

// stats.h5 <links>/power/{chip_link_j,nic_j,switch_j,dynamic_j}: the links' dynamic energy by
// kind, from the channels' wire bytes (`wire_bytes`, read when the stats are read). Split over
// ranks, each rank's file has the channels its chips drive (the counters count there only). The
// switch ports' static power depends on the run's time and is in summary.json only.
class LinkEnergyStats {
public:
    LinkEnergyStats(StatGroup& links, const LinkPowerParams& p, const Topology& t,
                    std::function<std::vector<uint64_t>()> wire_bytes);

private:
    LinkEnergy now() const;
    const LinkPowerParams& m_p;
    const Topology& m_t;
    std::function<std::vector<uint64_t>()> m_wire;
    StatGroup m_group;
    std::vector<std::unique_ptr<Formula>> m_stats;
};

}  // namespace sfumato::power
