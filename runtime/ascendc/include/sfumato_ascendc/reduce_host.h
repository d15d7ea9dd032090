// Host functions giving the advanced reductions' sharedTmpBuffer sizes (the reference's signatures),
// those of sfumato's kernels (reduce_adv.h): a row reduction (Sum, Mean, pattern AR) folds each row
// onto 256 bytes of scratch, at least one 32-byte block of results' rows (8 float or 16 half rows),
// at most 255 rows; with isReuseSource it folds in the source (no scratch), and a column reduction
// (RA) needs none.
#pragma once
#include <algorithm>
#include <cstdint>

#include "sfumato_ascendc/ge_shape.h"
#include "sfumato_ascendc/reduce_pattern.h"

namespace AscendC {
namespace sfumato_reduce_host {
inline void fold_sizes(uint64_t rows, uint32_t typeSize, uint32_t& maxValue, uint32_t& minValue) {
    const uint32_t per = typeSize == 2 ? 16u : 8u;
    const uint64_t most = std::min<uint64_t>(std::max<uint64_t>(rows, 1), 255 / per * per);
    minValue = per * 256u;
    maxValue = static_cast<uint32_t>(std::max<uint64_t>((most + per - 1) / per * per, per) * 256u);
}
inline uint32_t size_of(ge::DataType t) { return t == ge::DT_FLOAT16 || t == ge::DT_BF16 ? 2u : 4u; }
inline void pattern_sizes(const ge::Shape& s, ge::DataType t, ReducePattern p, bool reuse, uint32_t& maxValue,
                          uint32_t& minValue) {
    if (p != ReducePattern::AR || reuse) {
        maxValue = minValue = 0;
        return;
    }
    fold_sizes(static_cast<uint64_t>(std::max<int64_t>(s.GetDim(0), 1)), size_of(t), maxValue, minValue);
}
}  // namespace sfumato_reduce_host

inline void GetSumMaxMinTmpSize(const uint32_t n, const uint32_t typeSize, const bool isReuseSource, uint32_t& maxSize,
                                uint32_t& minSize) {
    (void)n;
    if (isReuseSource) {
        maxSize = minSize = 0;
        return;
    }
    sfumato_reduce_host::fold_sizes(255, typeSize, maxSize, minSize);
}
inline void GetMeanMaxMinTmpSize(const uint32_t n, const uint32_t srcTypeSize, const uint32_t accTypeSize,
                                 const bool isReuseSource, uint32_t& maxSize, uint32_t& minSize) {
    (void)accTypeSize;
    GetSumMaxMinTmpSize(n, srcTypeSize, isReuseSource, maxSize, minSize);
}
#define SFUMATO_REDUCE_TMP(Name)                                                                              \
    inline void Name(const ge::Shape& srcShape, const ge::DataType dataType, ReducePattern pattern,           \
                     bool isSrcInnerPad, bool isReuseSource, uint32_t& maxValue, uint32_t& minValue) {        \
        (void)isSrcInnerPad;                                                                                  \
        sfumato_reduce_host::pattern_sizes(srcShape, dataType, pattern, isReuseSource, maxValue, minValue);  \
    }
SFUMATO_REDUCE_TMP(GetReduceSumMaxMinTmpSize)
SFUMATO_REDUCE_TMP(GetReduceMeanMaxMinTmpSize)
SFUMATO_REDUCE_TMP(GetReduceMaxMaxMinTmpSize)
SFUMATO_REDUCE_TMP(GetReduceMinMaxMinTmpSize)
#undef SFUMATO_REDUCE_TMP

}  // namespace AscendC
