// What the runtime may know about a system of several devices: how many there are, how they are
// grouped into servers, and for every ordered pair of devices the route between them (the link
// channels it crosses, its bottleneck bandwidth and one-way latency). The collective library
// (runtime/comm) picks and costs its algorithms from this, the way the vendor library reads a
// rank table and the hardware topology; it never sees the link models themselves. Plain C++.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace sfumato {

struct SystemInfo {
    struct Channel {  // one direction of a link (chip-to-chip, NIC uplink or switch downlink)
        std::string name;
        double gbps = 0;        // payload bandwidth (GB/s) after per-packet overhead
        double latency_ns = 0;  // one-way
    };
    struct Route {
        std::vector<uint32_t> channels;  // in order, from source to destination
        double gbps = 0;                 // bottleneck payload bandwidth
        double latency_ns = 0;           // sum of the channels' latencies
        bool intra_server = true;        // over chip-to-chip links only (no NIC)
    };

    std::string name;
    std::string topology;  // full_mesh | groups | ring | custom
    uint32_t chips = 1;
    uint32_t servers = 1;
    uint32_t chips_per_server = 1;
    uint32_t group_size = 1;  // chips per link group inside a server (groups topology; else chips_per_server)
    std::vector<Channel> channels;
    std::vector<Route> routes;  // chips x chips, row = source (the diagonal is empty)

    const Route& route(uint32_t src, uint32_t dst) const { return routes[static_cast<size_t>(src) * chips + dst]; }
    uint32_t server_of(uint32_t chip) const { return chip / chips_per_server; }
    uint32_t group_of(uint32_t chip) const { return chip / group_size; }
};

}  // namespace sfumato
