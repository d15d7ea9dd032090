// Host functions giving the advanced math APIs' sharedTmpBuffer sizes (the reference's signatures).
// The sizes are those of sfumato's kernels (math_adv.h): a few float-sized buffers (and bit masks) per
// element; the minimum holds one slice of 256 elements, the maximum the whole shape in one slice.
#pragma once
#include <algorithm>
#include <cstdint>

#include "sfumato_ascendc/ge_shape.h"

namespace AscendC {
// The trigonometric APIs' configurations (math_trig.h): one algorithm is modelled whatever they name.
enum class SinAlgo { POLYNOMIAL_APPROXIMATION = 0, RADIAN_REDUCTION };
struct SinConfig {
    SinAlgo algo = SinAlgo::POLYNOMIAL_APPROXIMATION;
};
constexpr SinConfig defaultSinConfig = {};
enum class CosAlgo { POLYNOMIAL_APPROXIMATION = 0, RADIAN_REDUCTION };
struct CosConfig {
    CosAlgo algo = CosAlgo::POLYNOMIAL_APPROXIMATION;
};
constexpr CosConfig defaultCosConfig = {};
enum class AtanAlgo { TAYLOR_EXPANSION = 0 };
struct AtanConfig {
    AtanAlgo algo = AtanAlgo::TAYLOR_EXPANSION;
};
constexpr AtanConfig defaultAtanConfig = {};

namespace sfumato_math_host {
// Bytes of `bufs` float-sized buffers and `masks` one-bit masks of a slice of `elems` elements.
inline uint32_t slice_bytes(uint32_t bufs, uint32_t masks, uint64_t elems) {
    const uint64_t b = uint64_t{bufs} * 4 * elems + uint64_t{masks} * elems / 8;
    return b > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(b);
}
inline void sizes(const ge::Shape& s, uint32_t bufs, uint32_t masks, uint32_t& maxValue, uint32_t& minValue) {
    constexpr uint64_t grain = 256;
    const int64_t n = std::max<int64_t>(s.GetShapeSize(), 1);
    const uint64_t whole = (static_cast<uint64_t>(n) + grain - 1) / grain * grain;
    minValue = slice_bytes(bufs, masks, grain);
    maxValue = slice_bytes(bufs, masks, whole);
}
// half computes its rounding through a float buffer (math_adv.h round_integral).
inline uint32_t round_bufs(uint32_t typeSize) { return typeSize == 2 ? 1u : 0u; }
}  // namespace sfumato_math_host

#define SFUMATO_MATH_TMP(Name, BUFS, MASKS)                                                                  \
    inline void Name(const ge::Shape& srcShape, const uint32_t typeSize, const bool isReuseSource,           \
                     uint32_t& maxValue, uint32_t& minValue) {                                               \
        (void)isReuseSource;                                                                                 \
        (void)typeSize;                                                                                      \
        sfumato_math_host::sizes(srcShape, BUFS, MASKS, maxValue, minValue);                                 \
    }
SFUMATO_MATH_TMP(GetExpMaxMinTmpSize, 2 + sfumato_math_host::round_bufs(typeSize), 0)
SFUMATO_MATH_TMP(GetCeilMaxMinTmpSize, sfumato_math_host::round_bufs(typeSize), 0)
SFUMATO_MATH_TMP(GetFloorMaxMinTmpSize, sfumato_math_host::round_bufs(typeSize), 0)
SFUMATO_MATH_TMP(GetTruncMaxMinTmpSize, sfumato_math_host::round_bufs(typeSize), 0)
SFUMATO_MATH_TMP(GetFracMaxMinTmpSize, 1 + sfumato_math_host::round_bufs(typeSize), 0)
SFUMATO_MATH_TMP(GetClampMaxMinTmpSize, 0, 0)
SFUMATO_MATH_TMP(GetXorMaxMinTmpSize, 1, 0)
SFUMATO_MATH_TMP(GetErfMaxMinTmpSize, 3, 0)
SFUMATO_MATH_TMP(GetAcoshMaxMinTmpSize, 2, 0)
SFUMATO_MATH_TMP(GetFmodMaxMinTmpSize, 1 + sfumato_math_host::round_bufs(typeSize), 0)
SFUMATO_MATH_TMP(GetAxpyMaxMinTmpSize, 1, 0)
SFUMATO_MATH_TMP(GetLogMaxMinTmpSize, 0, 0)
SFUMATO_MATH_TMP(GetLog2MaxMinTmpSize, 0, 0)
SFUMATO_MATH_TMP(GetLog10MaxMinTmpSize, 0, 0)
// math_trig.h: the body's float buffers, and two more for a half source and result.
SFUMATO_MATH_TMP(GetSinMaxMinTmpSize, 4 + 2 * sfumato_math_host::round_bufs(typeSize), 0)
SFUMATO_MATH_TMP(GetCosMaxMinTmpSize, 4 + 2 * sfumato_math_host::round_bufs(typeSize), 0)
SFUMATO_MATH_TMP(GetTanMaxMinTmpSize, 4 + 2 * sfumato_math_host::round_bufs(typeSize), 0)
SFUMATO_MATH_TMP(GetAtanMaxMinTmpSize, 4 + 2 * sfumato_math_host::round_bufs(typeSize), 0)
SFUMATO_MATH_TMP(GetAsinMaxMinTmpSize, 5 + 2 * sfumato_math_host::round_bufs(typeSize), 0)
SFUMATO_MATH_TMP(GetAcosMaxMinTmpSize, 5 + 2 * sfumato_math_host::round_bufs(typeSize), 0)
SFUMATO_MATH_TMP(GetSinhMaxMinTmpSize, 2 + 2 * sfumato_math_host::round_bufs(typeSize), 0)
SFUMATO_MATH_TMP(GetCoshMaxMinTmpSize, 2 + 2 * sfumato_math_host::round_bufs(typeSize), 0)
SFUMATO_MATH_TMP(GetAtanhMaxMinTmpSize, 2 + 2 * sfumato_math_host::round_bufs(typeSize), 0)
SFUMATO_MATH_TMP(GetAsinhMaxMinTmpSize, 2 + 2 * sfumato_math_host::round_bufs(typeSize), 0)
SFUMATO_MATH_TMP(GetSignMaxMinTmpSize, 2 * sfumato_math_host::round_bufs(typeSize), 0)
SFUMATO_MATH_TMP(GetRoundMaxMinTmpSize, sfumato_math_host::round_bufs(typeSize), 0)
#undef SFUMATO_MATH_TMP
// The forms taking the configuration.
inline void GetSinMaxMinTmpSize(const SinConfig&, const ge::Shape& srcShape, const uint32_t typeSize,
                                const bool isReuseSource, uint32_t& maxValue, uint32_t& minValue) {
    GetSinMaxMinTmpSize(srcShape, typeSize, isReuseSource, maxValue, minValue);
}
inline void GetCosMaxMinTmpSize(const CosConfig&, const ge::Shape& srcShape, const uint32_t typeSize,
                                const bool isReuseSource, uint32_t& maxValue, uint32_t& minValue) {
    GetCosMaxMinTmpSize(srcShape, typeSize, isReuseSource, maxValue, minValue);
}

// Power: both shapes (one may be a scalar's [1]); the larger sets the size.
inline void GetPowerMaxMinTmpSize(const ge::Shape& srcShape1, const ge::Shape& srcShape2, const bool typeIsInt,
                                  const uint32_t typeSize, const bool isReuseSource, uint32_t& maxValue,
                                  uint32_t& minValue) {
    (void)typeIsInt;
    (void)isReuseSource;
    const ge::Shape& s = srcShape1.GetShapeSize() >= srcShape2.GetShapeSize() ? srcShape1 : srcShape2;
    sfumato_math_host::sizes(s, 4 + sfumato_math_host::round_bufs(typeSize), 1, maxValue, minValue);
}
// CumSum along the first axis works in dst: no scratch; along the last axis a copy of dst behind a zero
// block and two float buffers of every element (math_adv.h cumsum_last_axis).
inline void GetCumSumMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, const bool isLastAxis,
                                   const bool isReuseSource, uint32_t& maxValue, uint32_t& minValue) {
    (void)isReuseSource;
    if (!isLastAxis) {
        maxValue = minValue = 0;
        return;
    }
    const uint64_t n = static_cast<uint64_t>(std::max<int64_t>(srcShape.GetShapeSize(), 0));
    const uint64_t z = ((n + 32 / std::max<uint32_t>(typeSize, 1)) * typeSize + 31) / 32 * 32;
    const uint64_t b = z + n * 8 + 64;
    maxValue = minValue = b > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(b);
}

}  // namespace AscendC
