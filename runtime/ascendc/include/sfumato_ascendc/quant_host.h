// Host functions giving the quantisation APIs' sharedTmpBuffer sizes (the reference's signatures), for
// sfumato's kernels (quant.h): AscendQuant of float needs 6 bytes an element (the float result and its
// half), of half 2 (per tensor or per channel); AscendDequant into half 4 an element (the float product)
// and 4 a column; AscendAntiQuant needs none.
#pragma once
#include <algorithm>
#include <cstdint>

#include "sfumato_ascendc/activation_host.h"
#include "sfumato_ascendc/adv_common.h"
#include "sfumato_ascendc/ge_shape.h"

namespace AscendC {

inline void GetAscendQuantMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize,
                                        uint32_t& maxValue, uint32_t& minValue) {
    maxValue = minValue = sfumato_act::elems_bytes(srcShape, typeSize == 4 ? 6u : 2u);
}
// Into half the float product of every element (and a half scale row as float); into float none.
inline void GetAscendDequantMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t, uint32_t& maxValue,
                                          uint32_t& minValue) {
    const int64_t n = srcShape.GetDimNum() ? srcShape.GetDim(srcShape.GetDimNum() - 1) : 0;
    maxValue = minValue = sfumato_act::elems_bytes(srcShape, 4) + static_cast<uint32_t>(std::max<int64_t>(n, 0) * 4);
}
inline void GetAscendAntiQuantMaxMinTmpSize(const ge::Shape&, const ge::Shape&, bool, ge::DataType,
                                            ge::DataType, uint32_t& maxValue, uint32_t& minValue) {
    maxValue = minValue = 0;
}

// Sort (sort_adv.h): a full sort of n elements merges through a buffer of n 8-byte structures.
inline void GetSortMaxMinTmpSize(const ge::Shape& srcShape, const ge::DataType, const ge::DataType,
                                 const bool, const SortConfig&, uint32_t& maxValue, uint32_t& minValue) {
    maxValue = minValue = sfumato_act::elems_bytes(srcShape, 8);
}

}  // namespace AscendC
