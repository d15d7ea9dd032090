// Parameters of the energy of the links between chips (system.power.*): what a bit on the wire
// of each link kind costs (the chip-to-chip links, HCCS-like; the NICs' links into the switch,
// RoCE-like; the switch between servers), and the switch ports' static power. Every coefficient
// is a typed parameter with a unit, a range and its source (or "estimate") in its description;
// the reasoning is docs/energy.md ("Links between chips"). The links' idle power on the chips
// (their PHYs, the on-die RoCE engines) is in each chip's chip.power.uncore_w. Plain C++.
#pragma once
#include "sim/config.h"

namespace sfumato::power {

struct LinkPowerParams {
    explicit LinkPowerParams(const ParamScope& system);
    ParamScope scope;
    Param<double> chip_link_pj_per_bit;  // per wire bit over a chip-to-chip link (both ends)
    Param<double> nic_pj_per_bit;        // per wire bit over a NIC's link to or from the switch
    Param<double> switch_pj_per_bit;     // per wire bit through the switch
    Param<double> switch_port_w;         // static power of the switch port each NIC uses
};

}  // namespace sfumato::power
