// Contract: what a chip reaches its peers through (models/link/fabric.h implements it).
// start_peer_copy() moves copy.bytes from copy.dev_src on chip `src` to copy.dev_dst on chip
// copy.peer over the links and calls client.dma_done(cookie) exactly once, when the source has
// learnt that the last byte was written (functional data lands in the peer's memory by then).
// send_notify() sets notify slot `slot` of chip `dst` one route latency later (INotifySink).
// Neither call blocks.
#pragma once
#include <cstdint>

#include "models/dma/i_dma.h"
#include "sim/device_if.h"

namespace sfumato {

class IFabric {
public:
    virtual ~IFabric() = default;
    virtual void start_peer_copy(uint32_t src, const MemcpyDesc& copy, IDmaClient& client, uint64_t cookie) = 0;
    virtual void send_notify(uint32_t src, uint32_t dst, uint32_t slot) = 0;
};

// A chip's receiving end of notifies (its task scheduler).
class INotifySink {
public:
    virtual ~INotifySink() = default;
    virtual void notify_arrived(uint32_t slot) = 0;
};

}  // namespace sfumato
