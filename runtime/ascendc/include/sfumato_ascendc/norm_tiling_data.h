// The kernel's view of the normalisation APIs' tiling data (RmsNormTiling, LayerNormTiling,
// LayerNormGradTiling, LayerNormGradBetaTiling, DeepNormTiling). sfumato's kernels (norm.h) read the
// shape from them (bLength, sLength, hLength, originalHLength); sliceRows is the number of rows one slice
// of the sharedTmpBuffer the host function was given holds (informative: the kernels size their slices
// from the buffer they get). RmsNormTiling has the reference's members, which the vendor's RmsNorm
// example fills itself.
#pragma once
#include <cstdint>

struct RmsNormTiling {
    uint32_t bLength = 0;
    uint32_t sLength = 0;
    uint32_t hLength = 0;
    uint32_t originalHLength = 0;
    float reciprocalOfHLength = 0;
    uint32_t mainBshLength = 0;
    uint32_t mainBsLength = 0;
    uint32_t mainBsLengthAlign = 0;
    uint32_t loopRound = 0;
    uint32_t inputTailPos = 0;
    uint32_t tailBshLength = 0;
    uint32_t tailBsLength = 0;
};

#define SFUMATO_NORM_TILING(Name)     \
    struct Name {                     \
        uint32_t bLength = 0;         \
        uint32_t sLength = 0;         \
        uint32_t hLength = 0;         \
        uint32_t originalHLength = 0; \
        uint32_t sliceRows = 0;       \
        uint32_t stackBufferSize = 0; \
    };
SFUMATO_NORM_TILING(LayerNormTiling)
SFUMATO_NORM_TILING(LayerNormGradTiling)
SFUMATO_NORM_TILING(LayerNormGradBetaTiling)
SFUMATO_NORM_TILING(DeepNormTiling)
#undef SFUMATO_NORM_TILING
// The LayerNorm form with LayerNormPara (norm_v2.h): [aLength, rLength] and the slice rows.
struct LayerNormSeparateTiling {
    uint32_t aLength = 0;
    uint32_t rLength = 0;
    uint32_t sliceRows = 0;
    uint32_t stackBufferSize = 0;
};

namespace AscendC::tiling {
using ::DeepNormTiling;
using ::LayerNormGradBetaTiling;
using ::LayerNormGradTiling;
using ::LayerNormSeparateTiling;
using ::LayerNormTiling;
using ::RmsNormTiling;
}  // namespace AscendC::tiling
namespace optiling {
using ::DeepNormTiling;
using ::LayerNormGradBetaTiling;
using ::LayerNormGradTiling;
using ::LayerNormSeparateTiling;
using ::LayerNormTiling;
using ::RmsNormTiling;
}  // namespace optiling
