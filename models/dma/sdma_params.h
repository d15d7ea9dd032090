// Parameters of the SDMA engines (chip.dma.*) and the host link (chip.host_link.*). Plain C++.
#pragma once
#include "sim/config.h"

namespace sfumato {

struct SdmaParams {
    explicit SdmaParams(const ParamScope& chip);
    Param<uint32_t> engines;
    Param<uint32_t> max_outstanding;
    Param<double> link_gbps;
    Param<double> pageable_gbps;
    Param<double> link_latency_ns;
};

}  // namespace sfumato
