// The link graph of a system, built from SystemParams: one channel per direction of every
// chip-to-chip link, and per NIC an uplink into the switch and a downlink out of it; and a route
// for every ordered pair of chips. Routes inside a server take the fewest chip-to-chip links
// (packets pass through intermediate chips without touching their memory); chips in different
// servers, or in groups without a direct link, go NIC -> switch -> NIC (the NIC index spread
// over pairs). The switch is non-blocking: contention shows on the NICs' up- and downlinks.
// Invalid systems (a chip without links, chips that cannot reach each other, a malformed link
// list) throw ConfigError naming the key. Plain C++.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "models/link/system_params.h"
#include "sim/system_info.h"

namespace sfumato {

struct ChannelSpec {
    enum class Kind : uint8_t { ChipLink, NicUp, NicDown };
    Kind kind = Kind::ChipLink;
    uint32_t src = 0, dst = 0;  // node ids: chips 0..n-1, the switch is n
    std::string name;
    double gbps = 0;          // on the wire
    uint64_t latency_ps = 0;  // one-way, after serialisation
    uint32_t packet_bytes = 0, header_bytes = 0;
    double payload_gbps() const {
        return gbps * static_cast<double>(packet_bytes) / static_cast<double>(packet_bytes + header_bytes);
    }
};

struct Topology {
    uint32_t chips = 0;
    std::vector<ChannelSpec> channels;
    std::vector<std::vector<uint32_t>> routes;  // chips x chips: channel ids, source to destination
    const std::vector<uint32_t>& route(uint32_t a, uint32_t b) const { return routes[static_cast<size_t>(a) * chips + b]; }
    uint64_t route_latency_ps(uint32_t a, uint32_t b) const;
};

// Throws ConfigError naming the key when the system is not valid.
Topology build_topology(const SystemParams& p);
SystemInfo system_info(const SystemParams& p, const Topology& t);

}  // namespace sfumato
