// Contract: a pool of DMA engines (SDMA) that executes memcpy descriptors (host<->device over
// the host link, device<->device through the memory system). start() never blocks; the engine
// calls IDmaClient::dma_done(cookie) exactly once, at the simulated time the copy completed.
// Functional data (when a backing store exists) is moved by the engine at completion.
#pragma once
#include <cstdint>

#include "sim/device_if.h"

namespace sfumato {

class IDmaClient {
public:
    virtual ~IDmaClient() = default;
    virtual void dma_done(uint64_t cookie) = 0;
};

class IDmaEngine {
public:
    virtual ~IDmaEngine() = default;
    virtual void start(const MemcpyDesc& copy, IDmaClient& client, uint64_t cookie) = 0;
};

}  // namespace sfumato
