// Parameters of the host link (chip.host_link.*: one link, read by whichever DMA model the chip
// uses) and of the SDMA engines (chip.dma.*, detailed memory model). Plain C++.
#pragma once
#include "sim/config.h"

namespace sfumato {

struct HostLinkParams {
    explicit HostLinkParams(const ParamScope& s);
    Param<double> gbps;           // pinned host memory
    Param<double> pageable_gbps;  // through the bounce buffer
    Param<double> latency_ns;     // one way
};

struct SdmaParams {
    SdmaParams(const ParamScope& dma, const HostLinkParams& host_link);
    Param<uint32_t> engines;
    Param<uint32_t> max_outstanding;
    const HostLinkParams& link;
};

}  // namespace sfumato
