// Host functions of Select (byte mask), DropOut, Broadcast, Pad, UnPad and Transpose (the reference's
// signatures): the scratch sizes of sfumato's kernels (filter_adv.h, transform_adv.h) and the tiling data
// they read (transform_tiling.h). A slice is 256 elements; the minimum holds one, the maximum the whole
// shape.
#pragma once
#include <algorithm>
#include <cstdint>

#include "sfumato_ascendc/ge_shape.h"
#include "sfumato_ascendc/math_host.h"
#include "sfumato_ascendc/transform_tiling.h"
#include "tiling/platform/platform_ascendc.h"

namespace AscendC {

// Select with a byte mask: two float-sized buffers and a bit mask a slice.
inline void GetSelectMaxMinTmpSize(const ge::Shape& src0Shape, const ge::Shape& src1Shape, const uint32_t srcTypeSize,
                                   const ge::Shape& maskShape, const uint32_t maskTypeSize, const bool isReuseMask,
                                   uint32_t& maxValue, uint32_t& minValue) {
    (void)srcTypeSize, (void)maskShape, (void)maskTypeSize, (void)isReuseMask;
    const ge::Shape& s = src0Shape.GetShapeSize() >= src1Shape.GetShapeSize() ? src0Shape : src1Shape;
    sfumato_math_host::sizes(s, 2, 1, maxValue, minValue);
}
inline void GetSelectWithBytesMaskMaxMinTmpSize(const ge::Shape& src0Shape, const ge::Shape& src1Shape,
                                                const uint32_t srcTypeSize, const ge::Shape& maskShape,
                                                const uint32_t maskTypeSize, const bool isReuseMask,
                                                uint32_t& maxValue, uint32_t& minValue) {
    GetSelectMaxMinTmpSize(src0Shape, src1Shape, srcTypeSize, maskShape, maskTypeSize, isReuseMask, maxValue,
                           minValue);
}
// DropOut: two float-sized buffers and a bit mask a slice.
inline void GetDropOutMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                    uint32_t& maxValue, uint32_t& minValue) {
    (void)typeSize, (void)isReuseSource;
    sfumato_math_host::sizes(srcShape, 2, 1, maxValue, minValue);
}
inline uint32_t GetDropOutMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, const bool isReuseSource) {
    uint32_t mx = 0, mn = 0;
    GetDropOutMaxMinTmpSize(srcShape, typeSize, isReuseSource, mx, mn);
    return mn;
}
inline uint32_t GetDropOutMaxTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, const bool isReuseSource) {
    uint32_t mx = 0, mn = 0;
    GetDropOutMaxMinTmpSize(srcShape, typeSize, isReuseSource, mx, mn);
    return mx;
}
// Broadcast: a 32-byte block per row of the destination ([m, 1] -> [m, n]; one block for [1] -> [n]).
inline void GetBroadCastMaxMinTmpSize(const platform_ascendc::PlatformAscendC&, const ge::Shape& srcShape,
                                      const ge::Shape& dstShape, uint32_t typeSize, const bool isReuseSource,
                                      uint32_t& maxValue, uint32_t& minValue) {
    (void)srcShape, (void)typeSize, (void)isReuseSource;
    const int64_t rows = dstShape.GetDimNum() >= 2 ? dstShape.GetDim(0) : 1;
    maxValue = minValue = static_cast<uint32_t>((std::max<int64_t>(rows, 1) + 7) / 8 * 8 * 32);
}
// Pad and UnPad gather through two float-sized buffers a slice.
inline void GetPadMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, uint32_t& maxValue,
                                uint32_t& minValue) {
    (void)typeSize;
    sfumato_math_host::sizes(srcShape, 2, 0, maxValue, minValue);
}
inline void PadTilingFunc(const ge::Shape srcShape, const ge::Shape oriSrcShape, const uint32_t stackBufferSize,
                          const uint32_t typeSize, tiling::PadTiling& tiling) {
    (void)stackBufferSize, (void)typeSize;
    tiling.srcHeight = static_cast<uint32_t>(srcShape.GetDim(0));
    tiling.srcWidth = static_cast<uint32_t>(srcShape.GetDim(1));
    tiling.srcOriWidth = static_cast<uint32_t>(oriSrcShape.GetDimNum() >= 2 ? oriSrcShape.GetDim(1) : srcShape.GetDim(1));
}
inline void GetUnPadMaxMinTmpSize(const platform_ascendc::PlatformAscendC&, const ge::Shape& srcShape,
                                  const uint32_t typeSize, uint32_t& maxValue, uint32_t& minValue) {
    (void)typeSize;
    sfumato_math_host::sizes(srcShape, 2, 0, maxValue, minValue);
}
inline void UnPadTilingFunc(const ge::Shape srcShape, const uint32_t stackBufferSize, const uint32_t typeSize,
                            tiling::UnPadTiling& tiling) {
    (void)stackBufferSize, (void)typeSize;
    tiling.srcHeight = static_cast<uint32_t>(srcShape.GetDim(0));
    tiling.srcWidth = static_cast<uint32_t>(srcShape.GetDim(1));
}
// Transpose: no scratch; the tiling data carry [B, N, S, H/N].
inline void GetTransposeMaxMinTmpSize(const ge::Shape&, const uint32_t, const uint32_t, uint32_t& maxValue,
                                      uint32_t& minValue) {
    maxValue = minValue = 0;
}
inline void GetConfusionTransposeMaxMinTmpSize(const ge::Shape&, const uint32_t, const uint32_t, uint32_t& maxValue,
                                               uint32_t& minValue) {
    maxValue = minValue = 0;
}
inline void GetTransposeTilingInfo(const ge::Shape& srcShape, const uint32_t stackBufferSize, const uint32_t typeSize,
                                   const uint32_t transposeTypeIn, ConfusionTransposeTiling& tiling) {
    (void)stackBufferSize, (void)typeSize, (void)transposeTypeIn;
    tiling = ConfusionTransposeTiling{};
    uint32_t* p[4] = {&tiling.param0, &tiling.param1, &tiling.param2, &tiling.param3};
    for (size_t i = 0; i < 4 && i < srcShape.GetDimNum(); ++i) *p[i] = static_cast<uint32_t>(srcShape.GetDim(i));
}
inline void GetConfusionTransposeTilingInfo(const ge::Shape& srcShape, const uint32_t stackBufferSize,
                                            const uint32_t typeSize, const uint32_t transposeTypeIn,
                                            ConfusionTransposeTiling& tiling) {
    GetTransposeTilingInfo(srcShape, stackBufferSize, typeSize, transposeTypeIn, tiling);
}

}  // namespace AscendC
