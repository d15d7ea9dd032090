// TopK's host functions (the reference's signatures) for sfumato's TopK (topk.h): the scratch is one
// row's (sfumato_topk::row_bytes; rows reuse it), and the tiling data carry the shape.
#pragma once
#include <cstdint>

#include "sfumato_ascendc/adv_common.h"
#include "sfumato_ascendc/topk_tiling_data.h"
#include "tiling/platform/platform_ascendc.h"

namespace AscendC {

inline bool GetTopKMaxMinTmpSize(const platform_ascendc::PlatformAscendC&, const int32_t inner,
                                 const int32_t outter, const bool, const bool, enum TopKMode, const bool,
                                 const uint32_t, uint32_t& maxValue, uint32_t& minValue) {
    maxValue = minValue = 0;
    if (inner <= 0 || outter <= 0 || inner > (1 << 20)) return false;
    maxValue = minValue = static_cast<uint32_t>(
        sfumato_topk::row_bytes(static_cast<uint32_t>(inner), static_cast<uint32_t>(inner)));
    return true;
}
inline bool TopKTilingFunc(const platform_ascendc::PlatformAscendC&, const int32_t inner,
                           const int32_t outter, const int32_t k, const uint32_t dataTypeSize, const bool,
                           enum TopKMode, const bool isLargest, TopkTiling& topKTiling) {
    topKTiling = TopkTiling{};
    if (inner <= 0 || outter <= 0 || k <= 0 || k > inner || inner > (1 << 20) ||
        (dataTypeSize != 2 && dataTypeSize != 4))
        return false;
    const int32_t blk = static_cast<int32_t>(32 / dataTypeSize);
    topKTiling.inner = inner, topKTiling.outter = outter, topKTiling.k = k;
    topKTiling.kPad = (k + blk - 1) / blk * blk, topKTiling.kPadIndex = (k + 7) / 8 * 8;
    topKTiling.rowTmpBytes = static_cast<uint32_t>(
        sfumato_topk::row_bytes(static_cast<uint32_t>(inner), static_cast<uint32_t>(k)));
    topKTiling.dataTypeSize = dataTypeSize, topKTiling.isLargest = isLargest ? 1u : 0u;
    return true;
}

}  // namespace AscendC
