// Types the advanced APIs share: DataFormat and ShapeInfo (a tensor's shape, original shape and
// format, as the normalisation and quantisation APIs take it), with the reference's members.
#pragma once
#include <cstdint>

namespace AscendC {

enum class DataFormat : uint8_t { ND = 0, NZ, NCHW, NC1HWC0, NHWC, NCDHW, NDC1HWC0, FRACTAL_Z_3D };

// The advanced Sort's configuration (GetSortMaxMinTmpSize takes it; Atlas A2 sorts by merging).
enum class SortType { RADIX_SORT = 0, MERGE_SORT = 1 };
struct SortConfig {
    SortType type = SortType::MERGE_SORT;
    bool isDescend = true;
};

// TopK's modes (Atlas A2: both run as one full sort per row here).
enum class TopKMode { TOPK_NORMAL = 0, TOPK_NSMALL = 1 };
namespace sfumato_topk {
// Scratch bytes one row of `inner` elements takes in sfumato's TopK (topk.h): scores (4 bytes each
// whatever the type), indices, two sort buffers of 8-byte structures, a 32-byte-aligned scratch row of k.
constexpr uint64_t row_bytes(uint32_t inner, uint32_t k) {
    return uint64_t{inner} * (4 + 4 + 8 + 8) + (uint64_t{k} * 4 + 31) / 32 * 32;
}
}  // namespace sfumato_topk

// How many dimensions a tensor's ShapeInfo keeps: 8, or what the program defines before including
// kernel_operator.h (as the vendor's headers allow; 0 keeps none, and then a shape's dimensions
// count as 0 so nothing reads past the arrays).
#ifndef K_MAX_SHAPE_DIM
#define K_MAX_SHAPE_DIM 8
#endif
static_assert(K_MAX_SHAPE_DIM >= 0 && K_MAX_SHAPE_DIM <= 255, "K_MAX_SHAPE_DIM: 0 to 255 dimensions");

struct ShapeInfo {
    ShapeInfo() = default;
    ShapeInfo(const uint8_t inputShapeDim, const uint32_t inputShape[], const uint8_t inputOriginalShapeDim,
              const uint32_t inputOriginalShape[], const DataFormat inputFormat)
        : shapeDim(inputShapeDim < K_MAX_SHAPE_DIM ? inputShapeDim : uint8_t{K_MAX_SHAPE_DIM}),
          originalShapeDim(inputOriginalShapeDim < K_MAX_SHAPE_DIM ? inputOriginalShapeDim : uint8_t{K_MAX_SHAPE_DIM}),
          dataFormat(inputFormat) {
        for (uint32_t i = 0; i < uint32_t{K_MAX_SHAPE_DIM}; ++i) {
            shape[i] = i < shapeDim ? inputShape[i] : 0;
            originalShape[i] = i < originalShapeDim ? inputOriginalShape[i] : 0;
        }
    }
    ShapeInfo(const uint8_t inputShapeDim, const uint32_t inputShape[], const DataFormat inputFormat)
        : ShapeInfo(inputShapeDim, inputShape, inputShapeDim, inputShape, inputFormat) {}
    ShapeInfo(const uint8_t inputShapeDim, const uint32_t inputShape[])
        : ShapeInfo(inputShapeDim, inputShape, inputShapeDim, inputShape, DataFormat::ND) {}
    uint8_t shapeDim = 0;
    uint8_t originalShapeDim = 0;
    uint32_t shape[K_MAX_SHAPE_DIM > 0 ? K_MAX_SHAPE_DIM : 1] = {};
    uint32_t originalShape[K_MAX_SHAPE_DIM > 0 ? K_MAX_SHAPE_DIM : 1] = {};
    DataFormat dataFormat = DataFormat::ND;
};

}  // namespace AscendC
