// Host functions giving the activation APIs' sharedTmpBuffer sizes (the reference's signatures). The
// sizes are those of sfumato's kernels (activation.h): Sigmoid, Tanh, Swish and Silu need none (their
// chains run in dst); Gelu, FasterGelu, SwiGLU and GeGLU need one element per input element when dst
// overlaps an input, which the host cannot know, so both bounds are that size.
#pragma once
#include <cstdint>

#include "sfumato_ascendc/ge_shape.h"

namespace AscendC {
namespace sfumato_act {
inline uint32_t elems_bytes(const ge::Shape& s, uint32_t typeSize) {
    const int64_t n = s.GetShapeSize();
    if (n <= 0 || typeSize == 0 || n > int64_t{UINT32_MAX} / typeSize) return 0;
    return static_cast<uint32_t>(n) * typeSize;
}
}  // namespace sfumato_act

inline void GetSigmoidMaxMinTmpSize(const ge::Shape&, const uint32_t, const bool, uint32_t& maxValue,
                                    uint32_t& minValue) {
    maxValue = minValue = 0;
}
inline void GetTanhMaxMinTmpSize(const ge::Shape&, const uint32_t, const bool, uint32_t& maxValue,
                                 uint32_t& minValue) {
    maxValue = minValue = 0;
}
inline void GetSwishTmpSize(const ge::Shape&, const uint32_t, const bool, uint32_t& maxValue,
                            uint32_t& minValue) {
    maxValue = minValue = 0;
}
inline void GetSiluTmpSize(const ge::Shape&, const uint32_t, const bool, uint32_t& maxValue,
                           uint32_t& minValue) {
    maxValue = minValue = 0;
}
inline uint32_t GetGeluMaxTmpSize(const ge::Shape& srcShape, const uint32_t typeSize) {
    return sfumato_act::elems_bytes(srcShape, typeSize);
}
inline uint32_t GetGeluMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize) {
    return sfumato_act::elems_bytes(srcShape, typeSize);
}
inline void GetGeluMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, uint32_t& maxValue,
                                 uint32_t& minValue) {
    maxValue = minValue = sfumato_act::elems_bytes(srcShape, typeSize);
}
inline void GetSwiGLUMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, uint32_t& maxValue,
                                   uint32_t& minValue, const bool = false) {
    maxValue = minValue = sfumato_act::elems_bytes(srcShape, typeSize);
}
inline void GetGeGLUMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, const bool,
                                  uint32_t& maxValue, uint32_t& minValue) {
    maxValue = minValue = sfumato_act::elems_bytes(srcShape, typeSize);
}

}  // namespace AscendC
