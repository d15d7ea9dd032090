// Host functions of BatchNorm and GroupNorm (the reference's signatures): the scratch of sfumato's kernels
// (norm_more.h) and the tiling members they read.
#pragma once
#include <algorithm>
#include <cstdint>

#include "sfumato_ascendc/ge_shape.h"
#include "sfumato_ascendc/norm_more_tiling.h"

namespace AscendC {
namespace sfumato_norm_more_host {
inline uint64_t a8(uint64_t n) { return (n + 7) / 8 * 8; }
inline uint64_t batch_bytes(uint64_t B, uint64_t N, uint32_t typeSize) {
    return 3 * N * 4 + 2 * a8(B) * 32 + (typeSize == 2 ? B * N * 4 + 2 * a8(B) * 4 : 0);
}
inline uint64_t group_bytes(uint64_t n, uint64_t C, uint64_t hw, uint64_t g, uint32_t typeSize) {
    const uint64_t rows = n * g, slice = std::min<uint64_t>(rows, 248);
    const uint64_t helper = a8(slice) * 4 + a8(slice) * 32 + slice * 256;  // adv_sizes.h slice_bytes
    return n * C * hw * 4 + 2 * a8(rows) * 4 + a8(rows) * 32 + 2 * a8(C) * 32 + helper +
           (typeSize == 2 ? 2 * a8(C) * 4 : 0);
}
inline uint32_t clamp32(uint64_t v) { return v > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(v); }
}  // namespace sfumato_norm_more_host

// srcShape [B, S, H]; originSrcShape's B is the batch the kernel normalises over.
inline bool GetBatchNormMaxMinTmpSize(const ge::Shape& srcShape, const ge::Shape& originSrcShape,
                                      const uint32_t typeSize, const bool isReuseSource, uint32_t& maxValue,
                                      uint32_t& minValue, const bool isBasicBlock = false) {
    (void)isReuseSource, (void)isBasicBlock;
    if (srcShape.GetDimNum() != 3 || originSrcShape.GetDimNum() != 3) return false;
    const uint64_t B = static_cast<uint64_t>(originSrcShape.GetDim(0));
    const uint64_t N = static_cast<uint64_t>(srcShape.GetDim(1) * srcShape.GetDim(2));
    maxValue = minValue = sfumato_norm_more_host::clamp32(sfumato_norm_more_host::batch_bytes(B, N, typeSize));
    return true;
}
inline bool GetBatchNormNDTilingInfo(const ge::Shape& srcShape, const ge::Shape& originSrcShape,
                                     const uint32_t stackBufferByteSize, const uint32_t typeSize,
                                     const bool isReuseSource, BatchNormTiling& tiling,
                                     const bool isBasicBlock = false) {
    (void)isReuseSource, (void)isBasicBlock;
    if (srcShape.GetDimNum() != 3 || originSrcShape.GetDimNum() != 3) return false;
    tiling = BatchNormTiling{};
    const uint64_t B = static_cast<uint64_t>(originSrcShape.GetDim(0));
    const uint64_t N = static_cast<uint64_t>(srcShape.GetDim(1) * srcShape.GetDim(2));
    tiling.originalBLength = static_cast<uint32_t>(B);
    tiling.shCurLength = static_cast<uint32_t>(N);
    tiling.meanVarSize = static_cast<uint32_t>(N);
    tiling.bshCurLength = static_cast<uint32_t>(B * N);
    tiling.tmpBufSize = stackBufferByteSize;
    tiling.firstDimValueBack = B ? 1.0f / static_cast<float>(B) : 0.0f;
    return stackBufferByteSize >= sfumato_norm_more_host::batch_bytes(B, N, typeSize);
}
// srcShape [n, C, H, W].
inline void GetGroupNormMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                      const uint32_t groupNum, uint32_t& maxValue, uint32_t& minValue) {
    (void)isReuseSource;
    const uint64_t n = static_cast<uint64_t>(std::max<int64_t>(srcShape.GetDim(0), 0));
    const uint64_t C = static_cast<uint64_t>(std::max<int64_t>(srcShape.GetDim(1), 0));
    const uint64_t hw = static_cast<uint64_t>(std::max<int64_t>(srcShape.GetDim(2) * srcShape.GetDim(3), 0));
    maxValue = minValue =
        sfumato_norm_more_host::clamp32(sfumato_norm_more_host::group_bytes(n, C, hw, groupNum, typeSize));
}
inline void GetGroupNormNDTilingInfo(const ge::Shape& srcShape, const uint32_t stackBufferSize, const uint32_t typeSize,
                                     const bool isReuseSource, const uint32_t groupNum, GroupNormTiling& tiling) {
    (void)typeSize, (void)isReuseSource;
    tiling = GroupNormTiling{};
    tiling.n = static_cast<uint32_t>(srcShape.GetDim(0));
    tiling.c = static_cast<uint32_t>(srcShape.GetDim(1));
    tiling.hw = static_cast<uint32_t>(srcShape.GetDim(2) * srcShape.GetDim(3));
    tiling.g = groupNum;
    tiling.d = groupNum ? tiling.c / groupNum : 0;
    tiling.hwAlignSize = tiling.hw;
    tiling.dhwAlignSize = tiling.d * tiling.hw;
    tiling.inputXSize = tiling.n * tiling.c * tiling.hw;
    tiling.meanVarSize = tiling.n * groupNum;
    tiling.tmpBufSize = stackBufferSize;
    tiling.factor = tiling.dhwAlignSize ? 1.0f / static_cast<float>(tiling.dhwAlignSize) : 0.0f;
}

}  // namespace AscendC
