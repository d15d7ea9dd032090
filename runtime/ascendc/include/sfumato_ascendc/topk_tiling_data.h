// The kernel's view of TopK's tiling data (TopkTiling): sfumato's own members (its TopK reads none of
// them: it takes the shape from TopKInfo); the host's TopKTilingFunc fills them (topk_host.h).
#pragma once
#include <cstdint>

struct TopkTiling {
    int32_t inner = 0;
    int32_t outter = 0;
    int32_t k = 0;
    int32_t kPad = 0;
    int32_t kPadIndex = 0;
    uint32_t rowTmpBytes = 0;
    uint32_t dataTypeSize = 0;
    uint32_t isLargest = 0;
};

namespace AscendC::tiling {
using ::TopkTiling;
}  // namespace AscendC::tiling
namespace optiling {
using ::TopkTiling;
}  // namespace optiling
