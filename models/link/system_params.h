// Parameters of a system of chips (`system.*`): servers, chips per server, the intra-server
// topology of chip-to-chip links (HCCS-like: full mesh, groups of fully connected chips, ring,
// or an explicit list), the links' bandwidth and latency, the NICs (RoCE-like) that connect each
// chip to one switch between servers, and the peer DMA engines that move data over them. Every
// chip is built from the same chip configuration (`system.chip`, a chip preset). Plain C++, so
// `sfumato params`/`info` read it without a model. docs/multichip.md gives the facts behind the
// presets; configs/system-*.ini hold them.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "models/power/link_power_params.h"
#include "sim/config.h"

namespace sfumato {

struct LinkKindParams {
    LinkKindParams(const ParamScope& s, double gbps, double latency_ns, uint32_t packet, uint32_t header);
    Param<double> gbps;          // per direction, on the wire
    Param<double> latency_ns;    // one-way
    Param<uint32_t> packet_bytes;  // largest payload per packet
    Param<uint32_t> header_bytes;  // per-packet overhead on the wire
    // Payload bandwidth of full packets (GB/s).
    double payload_gbps() const {
        return gbps * static_cast<double>(packet_bytes) / static_cast<double>(packet_bytes + header_bytes);
    }
};

struct SystemParams {
    explicit SystemParams(Config& c);
    ParamScope scope;
    ChoiceParam name;
    ChoiceParam chip;  // chip preset of every chip (resolved by the loader; recorded here)
    Param<uint32_t> servers;
    Param<uint32_t> chips_per_server;
    ChoiceParam topology;
    Param<uint32_t> group_size;
    ChoiceParam links;  // custom topology: "a-b,c-d" (chip indices within a server)
    LinkKindParams link;
    Param<uint32_t> nics_per_chip;
    LinkKindParams nic;
    Param<double> switch_latency_ns;
    Param<uint32_t> dma_engines;       // peer copies in flight per chip
    Param<uint64_t> dma_window_bytes;  // bytes in flight per peer copy
    power::LinkPowerParams power;      // system.power.*: the links' energy (models/power)

    uint32_t chips() const { return servers * chips_per_server; }
};

}  // namespace sfumato
