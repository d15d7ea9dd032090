// Host tiling functions of the softmax family (GetSoftMaxMinTmpSize/MaxTmpSize, SoftMaxTilingFunc,
// the FlashV2, Grad and LogSoftMax variants) and optiling::SoftMaxTiling, with the reference's
// signatures. The sizes are those of sfumato's own kernels (adv_sizes.h): the minimum holds a slice
// of 8 rows (fewer if the shape has fewer), the maximum every row at once (up to 255 rows a slice);
// not the vendor's numbers. A shape is [m0, ..., k]: the rows m are the product of every axis but
// the last.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "sfumato_ascendc/adv_sizes.h"
#include "sfumato_ascendc/ge_shape.h"
#include "sfumato_ascendc/softmax_tiling_data.h"

namespace optiling {
// The operator-project form: set_/get_ accessors, GetDataSize, SaveToBuffer (the kernel struct's
// layout, so a tiling class holding it by TILING_DATA_FIELD_DEF_STRUCT saves the kernel's bytes).
class SoftMaxTiling {
public:
#define SFUMATO_SOFTMAX_FIELD(name)           \
    uint32_t name = 0;                        \
    void set_##name(uint32_t v) { name = v; } \
    uint32_t get_##name() const { return name; }
    SFUMATO_SOFTMAX_TILING_FIELDS(SFUMATO_SOFTMAX_FIELD)
#undef SFUMATO_SOFTMAX_FIELD
    size_t GetDataSize() const { return sizeof(::SoftMaxTiling); }
    void SaveToBuffer(void* buf, size_t capacity) const {
        std::memcpy(buf, this, capacity < sizeof(::SoftMaxTiling) ? capacity : sizeof(::SoftMaxTiling));
    }
};
using LogSoftMaxTiling = SoftMaxTiling;
static_assert(sizeof(SoftMaxTiling) == sizeof(::SoftMaxTiling), "the two SoftMaxTiling layouts agree");
}  // namespace optiling

namespace AscendC {
namespace sfumato_adv {
struct HostRows {
    uint32_t m = 0, k = 0;
};
inline HostRows host_rows(const ge::Shape& s) {
    HostRows r;
    const size_t n = s.GetDimNum();
    if (n == 0) return r;
    const int64_t k = s.GetDim(n - 1);
    int64_t m = 1;
    for (size_t i = 0; i + 1 < n; ++i) {
        const int64_t d = s.GetDim(i);
        if (d <= 0 || __builtin_mul_overflow(m, d, &m) || m > INT32_MAX) return r;
    }
    if (k <= 0 || k > INT32_MAX) return r;
    r.m = static_cast<uint32_t>(m);
    r.k = static_cast<uint32_t>(k);
    return r;
}
inline uint32_t min_tmp(const ge::Shape& s) {
    const HostRows r = host_rows(s);
    return r.m ? slice_bytes(std::min(r.m, 8u)) : 0;
}
inline uint32_t max_tmp(const ge::Shape& s) {
    const HostRows r = host_rows(s);
    return r.m ? slice_bytes(std::min(r.m, kMaxRepeat)) : 0;
}
template <class Tiling>
void fill(const ge::Shape& s, uint32_t dataTypeSize, uint32_t workBytes, Tiling& t) {
    t = Tiling{};
    const HostRows r = host_rows(s);
    if (!r.m || dataTypeSize == 0) return;
    const uint32_t blk = 32u / dataTypeSize;
    const uint32_t split = rows_fitting(workBytes, r.m);
    t.srcM = r.m, t.srcK = r.k, t.srcSize = r.m * r.k;
    t.outMaxM = r.m, t.outMaxK = blk, t.outMaxSize = r.m * blk;
    t.splitM = split, t.splitK = r.k, t.splitSize = split * r.k;
    t.reduceM = split, t.reduceK = blk, t.reduceSize = split * blk;
    t.rangeM = split ? r.m / split : 0;
    t.tailM = split ? r.m % split : r.m;
    t.tailSplitSize = t.tailM * r.k, t.tailReduceSize = t.tailM * blk;
}
}  // namespace sfumato_adv

inline uint32_t GetSoftMaxMaxTmpSize(const ge::Shape& srcShape, const uint32_t, const bool) {
    return sfumato_adv::max_tmp(srcShape);
}
inline uint32_t GetSoftMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t, const bool) {
    return sfumato_adv::min_tmp(srcShape);
}
inline void SoftMaxTilingFunc(const ge::Shape& srcShape, const uint32_t dataTypeSize,
                              const uint32_t localWorkSpaceSize, optiling::SoftMaxTiling& softmaxTiling) {
    sfumato_adv::fill(srcShape, dataTypeSize, localWorkSpaceSize, softmaxTiling);
}
inline void SoftMaxTilingFunc(const ge::Shape& srcShape, const uint32_t dataTypeSize,
                              const uint32_t localWorkSpaceSize, ::SoftMaxTiling& softmaxTiling) {
    sfumato_adv::fill(srcShape, dataTypeSize, localWorkSpaceSize, softmaxTiling);
}

inline uint32_t GetSoftMaxFlashV2MinTmpSize(const ge::Shape& srcShape, const uint32_t, const uint32_t,
                                            const bool, const bool = false, const bool = false) {
    return sfumato_adv::min_tmp(srcShape);
}
inline uint32_t GetSoftMaxFlashV2MaxTmpSize(const ge::Shape& srcShape, const uint32_t, const uint32_t,
                                            const bool, const bool = false, const bool = false) {
    return sfumato_adv::max_tmp(srcShape);
}
inline void SoftMaxFlashV2TilingFunc(const ge::Shape& srcShape, const uint32_t dataTypeSize1, const uint32_t,
                                     const uint32_t localWorkSpaceSize,
                                     optiling::SoftMaxTiling& softmaxFlashTiling, const bool,
                                     const bool = false, const bool = false, const bool = false) {
    sfumato_adv::fill(srcShape, dataTypeSize1, localWorkSpaceSize, softmaxFlashTiling);
}
inline void SoftMaxFlashV2TilingFunc(const ge::Shape& srcShape, const uint32_t dataTypeSize1, const uint32_t,
                                     const uint32_t localWorkSpaceSize, ::SoftMaxTiling& softmaxFlashTiling,
                                     const bool, const bool = false, const bool = false, const bool = false) {
    sfumato_adv::fill(srcShape, dataTypeSize1, localWorkSpaceSize, softmaxFlashTiling);
}

inline uint32_t GetSoftMaxGradMaxTmpSize(const ge::Shape& srcShape, const uint32_t, const bool, const bool) {
    return sfumato_adv::max_tmp(srcShape);
}
inline uint32_t GetSoftMaxGradMinTmpSize(const ge::Shape& srcShape, const uint32_t, const bool, const bool) {
    return sfumato_adv::min_tmp(srcShape);
}
inline void SoftMaxGradTilingFunc(const ge::Shape& srcShape, const uint32_t dataTypeSize,
                                  const uint32_t localWorkSpaceSize,
                                  optiling::SoftMaxTiling& softmaxGradTiling, const bool = false) {
    sfumato_adv::fill(srcShape, dataTypeSize, localWorkSpaceSize, softmaxGradTiling);
}
inline void SoftMaxGradTilingFunc(const ge::Shape& srcShape, const uint32_t dataTypeSize,
                                  const uint32_t localWorkSpaceSize, ::SoftMaxTiling& softmaxGradTiling,
                                  const bool = false) {
    sfumato_adv::fill(srcShape, dataTypeSize, localWorkSpaceSize, softmaxGradTiling);
}

inline uint32_t GetLogSoftMaxMaxTmpSize(const ge::Shape& srcShape, const uint32_t, const bool) {
    return sfumato_adv::max_tmp(srcShape);
}
inline uint32_t GetLogSoftMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t, const bool) {
    return sfumato_adv::min_tmp(srcShape);
}
inline void LogSoftMaxTilingFunc(const ge::Shape& srcShape, const uint32_t dataTypeSize,
                                 const uint32_t localWorkSpaceSize,
                                 optiling::LogSoftMaxTiling& softmaxTiling) {
    sfumato_adv::fill(srcShape, dataTypeSize, localWorkSpaceSize, softmaxTiling);
}
inline void LogSoftMaxTilingFunc(const ge::Shape& srcShape, const uint32_t dataTypeSize,
                                 const uint32_t localWorkSpaceSize, ::LogSoftMaxTiling& softmaxTiling) {
    sfumato_adv::fill(srcShape, dataTypeSize, localWorkSpaceSize, softmaxTiling);
}

}  // namespace AscendC
