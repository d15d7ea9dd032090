// Host functions of the normalisation APIs (the reference's signatures): the sharedTmpBuffer bounds of
// sfumato's kernels (norm.h: the minimum holds a slice of 8 rows, fewer if the shape has fewer, the
// maximum every row, up to 255) and the tiling data (the shape; sliceRows the rows a slice of the given
// buffer holds). A shape is [B, S, H] (LayerNorm's host functions also take [B, S, H, originalH]).
#pragma once
#include <cstdint>

#include "sfumato_ascendc/adv_sizes.h"
#include "sfumato_ascendc/ge_shape.h"
#include "sfumato_ascendc/norm_tiling_data.h"

namespace AscendC {
namespace sfumato_norm_host {
struct Bsh {
    uint32_t b = 0, s = 0, h = 0, ori = 0;
    bool ok = false;
};
inline Bsh bsh(const ge::Shape& shape) {
    Bsh r;
    if (shape.GetDimNum() < 3) return r;
    const int64_t b = shape.GetDim(0), s = shape.GetDim(1), h = shape.GetDim(2);
    const int64_t o = shape.GetDimNum() > 3 ? shape.GetDim(3) : h;
    if (b <= 0 || s <= 0 || h <= 0 || o <= 0 || b * s > 65536 || h > (1 << 20) || o > h) return r;
    r.b = static_cast<uint32_t>(b), r.s = static_cast<uint32_t>(s), r.h = static_cast<uint32_t>(h);
    r.ori = static_cast<uint32_t>(o), r.ok = true;
    return r;
}
inline bool bounds(const ge::Shape& shape, uint32_t blks, uint32_t bufs, uint32_t& maxValue,
                   uint32_t& minValue) {
    const Bsh r = bsh(shape);
    maxValue = minValue = 0;
    if (!r.ok) return false;
    const uint32_t rows = r.b * r.s;
    const uint64_t mn = sfumato_adv::norm_slice_bytes(std::min(rows, 8u), r.h, blks, bufs);
    const uint64_t mx =
        sfumato_adv::norm_slice_bytes(std::min(rows, sfumato_adv::kMaxRepeat), r.h, blks, bufs);
    if (mx > UINT32_MAX) return false;
    minValue = static_cast<uint32_t>(mn), maxValue = static_cast<uint32_t>(mx);
    return true;
}
template <class Tiling>
bool fill(const ge::Shape& shape, uint32_t ori_h, uint32_t stack, uint32_t blks, uint32_t bufs, Tiling& t) {
    t = Tiling{};
    const Bsh r = bsh(shape);
    if (!r.ok) return false;
    t.bLength = r.b, t.sLength = r.s, t.hLength = r.h, t.originalHLength = ori_h ? ori_h : r.ori;
    t.sliceRows = sfumato_adv::norm_rows_fitting(stack, r.b * r.s, r.h, blks, bufs);
    t.stackBufferSize = stack;
    return t.sliceRows > 0;
}
}  // namespace sfumato_norm_host

inline bool GetRmsNormMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t, uint32_t& maxValue,
                                    uint32_t& minValue, const bool = false) {
    return sfumato_norm_host::bounds(srcShape, 1, 0, maxValue, minValue);
}
inline bool GetRmsNormTilingInfo(const ge::Shape& srcShape, const ge::Shape& originSrcShape,
                                 const uint32_t stackBufferByteSize, const uint32_t, RmsNormTiling& tiling,
                                 const bool = false) {
    tiling = RmsNormTiling{};
    const sfumato_norm_host::Bsh r = sfumato_norm_host::bsh(srcShape),
                                 o = sfumato_norm_host::bsh(originSrcShape);
    if (!r.ok) return false;
    const uint32_t rows = r.b * r.s;
    const uint32_t slice = sfumato_adv::norm_rows_fitting(stackBufferByteSize, rows, r.h, 1, 0);
    tiling.bLength = r.b, tiling.sLength = r.s, tiling.hLength = r.h;
    tiling.originalHLength = o.ok ? o.h : r.h;
    tiling.reciprocalOfHLength = 1.0f / static_cast<float>(tiling.originalHLength);
    tiling.mainBsLength = slice, tiling.mainBshLength = slice * r.h,
    tiling.mainBsLengthAlign = sfumato_adv::align8(slice);
    tiling.loopRound = slice ? rows / slice : 0;
    tiling.tailBsLength = slice ? rows % slice : rows;
    tiling.tailBshLength = tiling.tailBsLength * r.h;
    tiling.inputTailPos = (rows - tiling.tailBsLength) * r.h;
    return slice > 0;
}

inline void GetLayerNormMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t, const bool,
                                      uint32_t& maxValue, uint32_t& minValue) {
    sfumato_norm_host::bounds(srcShape, 1, 0, maxValue, minValue);
}
inline void GetLayerNormNDTilingInfo(const ge::Shape& srcShape, const uint32_t stackBufferSize,
                                     const uint32_t, const bool, LayerNormTiling& tiling) {
    sfumato_norm_host::fill(srcShape, 0, stackBufferSize, 1, 0, tiling);
}
inline void GetLayerNormGradMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t, const bool,
                                          uint32_t& maxValue, uint32_t& minValue) {
    sfumato_norm_host::bounds(srcShape, 4, 2, maxValue, minValue);
}
inline void GetLayerNormGradNDTilingInfo(const ge::Shape& srcShape, const uint32_t stackBufferSize,
                                         const uint32_t, const bool, LayerNormGradTiling& tiling) {
    sfumato_norm_host::fill(srcShape, 0, stackBufferSize, 4, 2, tiling);
}
inline void GetLayerNormGradBetaMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t, const bool,
                                              uint32_t& maxValue, uint32_t& minValue) {
    maxValue = minValue = 0;
    (void)srcShape;
}
inline void GetLayerNormGradBetaNDTilingInfo(const ge::Shape& srcShape, const uint32_t stackBufferSize,
                                             const uint32_t, const bool, LayerNormGradBetaTiling& tiling) {
    sfumato_norm_host::fill(srcShape, 0, stackBufferSize > 0 ? stackBufferSize : UINT32_MAX, 0, 0, tiling);
}
inline bool GetDeepNormMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t, const bool, const bool,
                                     uint32_t& maxValue, uint32_t& minValue) {
    return sfumato_norm_host::bounds(srcShape, 1, 0, maxValue, minValue);
}
inline bool GetDeepNormTilingInfo(const ge::Shape& srcShape, const ge::Shape& originSrcShape,
                                  const uint32_t stackBufferSize, const uint32_t, const bool, const bool,
                                  DeepNormTiling& tiling) {
    const sfumato_norm_host::Bsh o = sfumato_norm_host::bsh(originSrcShape);
    return sfumato_norm_host::fill(srcShape, o.ok ? o.h : 0, stackBufferSize, 1, 0, tiling);
}

// The [A, R] forms of LayerNorm (LayerNormPara) and Normalize (norm_v2.h): one block array, no row buffer.
inline bool ar_bounds(const ge::Shape& shape, uint32_t& maxValue, uint32_t& minValue) {
    maxValue = minValue = 0;
    if (shape.GetDimNum() != 2 || shape.GetDim(0) <= 0 || shape.GetDim(1) <= 0 || shape.GetDim(0) > 65536 ||
        shape.GetDim(1) > (1 << 20))
        return false;
    const uint32_t a = static_cast<uint32_t>(shape.GetDim(0)), r = static_cast<uint32_t>(shape.GetDim(1));
    minValue = static_cast<uint32_t>(sfumato_adv::norm_slice_bytes(std::min(a, 8u), r, 1, 0));
    maxValue =
        static_cast<uint32_t>(sfumato_adv::norm_slice_bytes(std::min(a, sfumato_adv::kMaxRepeat), r, 1, 0));
    return true;
}
inline void GetLayerNormMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t, const bool, const bool,
                                      const bool, uint32_t& maxValue, uint32_t& minValue) {
    ar_bounds(srcShape, maxValue, minValue);
}
inline void GetLayerNormNDTilingInfo(const ge::Shape& srcShape, const uint32_t stackBufferSize,
                                     const uint32_t, const bool, const bool,
                                     LayerNormSeparateTiling& tiling) {
    tiling = LayerNormSeparateTiling{};
    uint32_t mx = 0, mn = 0;
    if (!ar_bounds(srcShape, mx, mn)) return;
    tiling.aLength = static_cast<uint32_t>(srcShape.GetDim(0)),
    tiling.rLength = static_cast<uint32_t>(srcShape.GetDim(1));
    tiling.sliceRows = sfumato_adv::norm_rows_fitting(stackBufferSize, tiling.aLength, tiling.rLength, 1, 0);
    tiling.stackBufferSize = stackBufferSize;
}
inline void GetNormalizeMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t, const uint32_t, const bool,
                                      const bool, const bool, uint32_t& maxValue, uint32_t& minValue) {
    ar_bounds(srcShape, maxValue, minValue);
}

// WelfordUpdate (welford.h): two float rows of rnLength x abLength; WelfordFinalize: three 256-byte rows.
inline void GetWelfordUpdateMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t, const uint32_t,
                                          const bool, const bool, uint32_t& maxValue, uint32_t& minValue) {
    const int64_t n = srcShape.GetShapeSize();
    maxValue = minValue = n > 0 && n < (int64_t{1} << 28) ? static_cast<uint32_t>(n) * 8u : 0u;
}
inline void GetWelfordFinalizeMaxMinTmpSize(const ge::Shape&, const uint32_t, const bool, uint32_t& maxValue,
                                            uint32_t& minValue) {
    maxValue = minValue = 3 * 256;
}

}  // namespace AscendC
