// BatchNormTiling and GroupNormTiling with the reference's members (the kernels of norm_more.h read the shape:
// BatchNorm originalBLength and shCurLength, GroupNorm n, c, hw, g, d); the optiling names are the same
// structs, so a tiling class holding one by TILING_DATA_FIELD_DEF_STRUCT saves the bytes the kernel reads.
#pragma once
#include <cstdint>

struct BatchNormTiling {
    uint32_t originalBLength = 0, meanVarSize = 0, meanTmpTensorPos = 0, varianceTmpTensorPos = 0, tmpBufSize = 0,
             oneTmpSize = 0, firstTmpStartPos = 0, secondTmpStartPos = 0, thirdTmpStartPos = 0, loopRound = 0,
             inputTailSize = 0, inputTailPos = 0, meanVarTailSize = 0, meanVarTailPos = 0, bshCurLength = 0,
             shCurLength = 0;
    float firstDimValueBack = 0;
    uint32_t castHalfRepStride = 0, shCurLengthBlockNum = 0, castHalfOutRepStride = 0;
};
struct GroupNormTiling {
    uint32_t n = 0, c = 0, hw = 0, g = 0, d = 0, hwAlignSize = 0, dhwAlignSize = 0, inputXSize = 0, meanVarSize = 0,
             numberOfTmpBuf = 0, meanTmpTensorPos = 0, meanTmpTensorSize = 0, varianceTmpTensorPos = 0,
             varianceTmpTensorSize = 0, tmpBufSize = 0, oneTmpSize = 0, firstTmpStartPos = 0, secondTmpStartPos = 0,
             thirdTmpStartPos = 0, loopRound = 0, inputRoundSize = 0, inputTailSize = 0, inputTailPos = 0,
             meanVarRoundSize = 0, meanVarTailSize = 0, meanVarTailPos = 0, bshCurLength = 0, bsCurLength = 0;
    float factor = 0;
    bool smallShape = false;
};
namespace AscendC::tiling {
using ::BatchNormTiling;
using ::GroupNormTiling;
}  // namespace AscendC::tiling
namespace optiling {
using BatchNormTiling = ::BatchNormTiling;
using GroupNormTiling = ::GroupNormTiling;
}  // namespace optiling
