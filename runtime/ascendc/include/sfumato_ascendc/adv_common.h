// Types the advanced APIs share: DataFormat and ShapeInfo (a tensor's shape, original shape and
// format, as the normalisation and quantisation APIs take it), with the reference's members.
#pragma once
#include <cstdint>

namespace AscendC {

enum class DataFormat : uint8_t { ND = 0, NZ, NCHW, NC1HWC0, NHWC, NCDHW, NDC1HWC0, FRACTAL_Z_3D };

constexpr uint32_t K_MAX_SHAPE_DIM = 8;

struct ShapeInfo {
    ShapeInfo() = default;
    ShapeInfo(const uint8_t inputShapeDim, const uint32_t inputShape[], const uint8_t inputOriginalShapeDim,
              const uint32_t inputOriginalShape[], const DataFormat inputFormat)
        : shapeDim(inputShapeDim), originalShapeDim(inputOriginalShapeDim), dataFormat(inputFormat) {
        for (uint32_t i = 0; i < K_MAX_SHAPE_DIM; ++i) {
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
    uint32_t shape[K_MAX_SHAPE_DIM] = {};
    uint32_t originalShape[K_MAX_SHAPE_DIM] = {};
    DataFormat dataFormat = DataFormat::ND;
};

}  // namespace AscendC
