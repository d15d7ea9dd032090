#include "models/power/link_power_params.h"

#include <string>

namespace sfumato::power {

namespace {
Param<double> link_coef(const ParamScope& s, const char* name, double def, const char* unit, const std::string& desc,
                   const std::string& source, double hi) {
    return Param<double>(s, name, def, unit, desc + " (source: " + source + ")", {0.0, hi});
}
}  // namespace

LinkPowerParams::LinkPowerParams(const ParamScope& system)
    : scope(system.sub("power")),
      chip_link_pj_per_bit(link_coef(scope, "chip_link_pj_per_bit", 5.0, "pJ/bit",
                                "per bit on the wire (payload and headers) of a chip-to-chip link, sender and "
                                "receiver SerDes and link layer",
                                "estimate: 1-2 pJ/bit for 40-56 Gb/s TX+RX circuits (Razavi, 'Low-power "
                                "techniques for wireline systems'), x2-3 for a board channel's equalisation, "
                                "clocking and the link layer",
                                1000)),
      nic_pj_per_bit(link_coef(scope, "nic_pj_per_bit", 10.0, "pJ/bit",
                          "per bit on the wire of a NIC's link into or out of the switch: the SerDes at both ends "
                          "and the RoCE engine's packet processing",
                          "estimate: a 5 pJ/bit long-reach SerDes pair plus ~5 pJ/bit of MAC/transport work", 1000)),
      switch_pj_per_bit(link_coef(scope, "switch_pj_per_bit", 5.0, "pJ/bit",
                             "per bit through the switch between servers (packet buffer write and read, lookup, "
                             "crossbar); its ports' SerDes are in nic_pj_per_bit",
                             "estimate: on-chip SRAM and crossbar of a switch ASIC", 1000)),
      switch_port_w(link_coef(scope, "switch_port_w", 5.0, "W",
                         "static power of the switch port each NIC is plugged into (the switch's power shared "
                         "over its ports), counted while the run lasts for every NIC of a system whose routes cross the switch",
                         "estimate: a 12.8 Tb/s switch of ~350 W over 64 ports of 200G", 1000)) {}

}  // namespace sfumato::power
