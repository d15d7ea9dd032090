#include "models/power/link_energy.h"

namespace sfumato::power {

uint32_t channel_owner(const ChannelSpec& c) { return c.kind == ChannelSpec::Kind::NicDown ? c.dst : c.src; }

LinkEnergy link_energy(const LinkPowerParams& p, const Topology& t, const std::vector<uint64_t>& wire_bytes,
                       const std::function<bool(uint32_t chip)>& counted, double seconds) {
    constexpr double pj = 1e-12;
    LinkEnergy e;
    e.chip_dynamic_j.assign(t.chips, 0.0);
    e.chip_static_w.assign(t.chips, 0.0);
    // The switch is there when some route crosses it (servers joined by it, or groups of chips
    // without a direct link); NICs no route uses (one server, full mesh) need no switch port.
    bool switched = false;
    for (const std::vector<uint32_t>& r : t.routes)
        for (uint32_t c : r) switched = switched || t.channels[c].kind == ChannelSpec::Kind::NicUp;
    for (size_t i = 0; i < t.channels.size() && i < wire_bytes.size(); ++i) {
        const ChannelSpec& c = t.channels[i];
        const uint32_t owner = channel_owner(c);
        if (owner >= t.chips || !counted(owner)) continue;
        const double bytes = static_cast<double>(wire_bytes[i]), bits = bytes * 8;
        double j = 0;
        switch (c.kind) {
            case ChannelSpec::Kind::ChipLink:
                e.chip_link_bytes += bytes;
                j = bits * p.chip_link_pj_per_bit * pj;
                e.chip_link_j += j;
                break;
            case ChannelSpec::Kind::NicUp: {
                e.nic_bytes += bytes;
                e.switch_bytes += bytes;
                const double nic = bits * p.nic_pj_per_bit * pj, sw = bits * p.switch_pj_per_bit * pj;
                e.nic_j += nic;
                e.switch_j += sw;
                j = nic + sw;
                if (switched) {
                    e.chip_static_w[owner] += p.switch_port_w;
                    e.static_w += p.switch_port_w;
                }
                break;
            }
            case ChannelSpec::Kind::NicDown:
                e.nic_bytes += bytes;
                j = bits * p.nic_pj_per_bit * pj;
                e.nic_j += j;
                break;
        }
        e.chip_dynamic_j[owner] += j;
    }
    e.static_j = e.static_w * seconds;
    return e;
}

nlohmann::json link_energy_json(const LinkEnergy& e) {
    return {{"total_j", e.total()},
            {"dynamic_j", e.dynamic()},
            {"static_j", e.static_j},
            {"static_power_w", e.static_w},
            {"by_kind_j", {{"chip_link", e.chip_link_j}, {"nic", e.nic_j}, {"switch", e.switch_j}}},
            {"wire_bytes", {{"chip_link", e.chip_link_bytes}, {"nic", e.nic_bytes}, {"switch", e.switch_bytes}}}};
}

LinkEnergyStats::LinkEnergyStats(StatGroup& links, const LinkPowerParams& p, const Topology& t,
                                 std::function<std::vector<uint64_t>()> wire_bytes)
    : m_p(p), m_t(t), m_wire(std::move(wire_bytes)), m_group(&links, "power") {
    auto add = [&](const char* name, const char* desc, double LinkEnergy::*field) {
        m_stats.push_back(std::make_unique<Formula>(m_group, name, "J", desc, [this, field] { return now().*field; }));
    };
    add("chip_link_j", "energy of the bits on the chip-to-chip links (docs/energy.md)", &LinkEnergy::chip_link_j);
    add("nic_j", "energy of the bits on the NICs' links to and from the switch", &LinkEnergy::nic_j);
    add("switch_j", "energy of the bits through the switch", &LinkEnergy::switch_j);
    m_stats.push_back(std::make_unique<Formula>(m_group, "dynamic_j", "J", "the links' dynamic energy, every kind",
                                                [this] { return now().dynamic(); }));
}

LinkEnergy LinkEnergyStats::now() const {
    return link_energy(m_p, m_t, m_wire(), [](uint32_t) { return true; }, 0.0);
}

}  // namespace sfumato::power
