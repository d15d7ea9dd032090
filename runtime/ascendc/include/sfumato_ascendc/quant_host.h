// Host functions giving the quantisation APIs' sharedTmpBuffer sizes (the reference's signatures), for
// sfumato's kernels (quant.h): AscendQuant of float needs 6 bytes an element (the float result and its
// half), of half 2; AscendDequant and AscendAntiQuant need none.
#pragma once
#include <cstdint>

#include "sfumato_ascendc/activation_host.h"
#include "sfumato_ascendc/adv_common.h"
#include "sfumato_ascendc/ge_shape.h"

namespace AscendC {

inline void GetAscendQuantMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize,
                                        uint32_t& maxValue, uint32_t& minValue) {
    maxValue = minValue = sfumato_act::elems_bytes(srcShape, typeSize == 4 ? 6u : 2u);
}
inline void GetAscendDequantMaxMinTmpSize(const ge::Shape&, const uint32_t, uint32_t& maxValue,
                                          uint32_t& minValue) {
    maxValue = minValue = 0;
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
