// Contract: how a host-side modelling shortcut hands a memory system the traffic of kernels that
// were not simulated (timing re-use stand-ins, runtime/reuse). The ranges come in the order the
// kernels would have moved them; the memory system leaves its caches as that traffic would have
// (read lines valid, written lines dirty, the most recent last, what they push out written back),
// untimed: the stand-ins' time already holds their traffic. The HBM bytes it implies are counted
// apart from the timed traffic. Call while the kernels it covers are not running, from the host
// thread or a kernel body. The CLI wires a chip's memory system to the runtime through it.
#pragma once
#include <cstdint>
#include <vector>

namespace sfumato {

// A byte range of global memory a kernel reads or writes.
struct GmRange {
    uint64_t addr = 0, bytes = 0;
    bool write = false;
};

class ITrafficReplay {
public:
    virtual ~ITrafficReplay() = default;
    virtual void replay_traffic(const std::vector<GmRange>& ranges) = 0;
};

}  // namespace sfumato
