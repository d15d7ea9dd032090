// Contract: what a host-side library (runtime/system) needs of a system of chips, so that it runs
// host programs on one without including the models (models/link's System implements it; the
// CLI, tests and a user's program build the System and hand it over). Chip i is an IDevice;
// the rest is what a run reports: the topology the collectives cost from (SystemInfo), the link
// channels' counters, the energy, the state for deadlock reports, and the split over
// window-synchronised ranks (sim/window_sync.h).
#pragma once
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "sim/device_if.h"
#include "sim/system_info.h"
#include "sim/time.h"

namespace sfumato {

class WindowSync;

class ISystem {
public:
    virtual ~ISystem() = default;
    virtual uint32_t size() const = 0;
    virtual IDevice& device(uint32_t chip) = 0;
    virtual const SystemInfo& info() const = 0;
    // The chips' core clock (every chip is built from the same parameters).
    virtual ClockDomain clock() const = 0;
    // Every chip's queues and cores, and the transfers under way (deadlock reports).
    virtual std::string describe_state() const = 0;

    // One direction of a link: its name, wire bandwidth (GB/s) and what it carried so far.
    struct LinkCounters {
        std::string name;
        double gbps = 0;
        uint64_t payload_bytes = 0, wire_bytes = 0, busy_ps = 0;
    };
    virtual size_t link_channels() const = 0;
    virtual LinkCounters link_counters(size_t channel) const = 0;

    // Split over ranks: the smallest latency between two chips (the windows' lookahead, ps), and
    // the hand-off of transfers between chips as messages of `sync`.
    virtual uint64_t lookahead_ps() const = 0;
    virtual void distribute(WindowSync& sync) = 0;

    // Ends every chip's energy accounting at end_ps; then summary.json's "energy" for the chips
    // `local` names (and the links they drive) over `cycles` core cycles and `seconds`.
    virtual void finish_energy(uint64_t end_ps) = 0;
    virtual nlohmann::json energy_json(const std::function<bool(uint32_t chip)>& local, double cycles,
                                       double seconds) const = 0;
};

}  // namespace sfumato
