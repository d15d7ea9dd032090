// The kernel's view of the softmax family's tiling data (SoftMaxTiling, the fields of the public
// reference; LogSoftMaxTiling is the same struct). sfumato's softmax kernels take their row slices
// from the sharedTmpBuffer's size (softmax.h), so they read none of these; the host functions
// (sfumato_ascendc/softmax_host.h) fill them with the slice their own kernels would use.
#pragma once
#include <cstdint>

#define SFUMATO_SOFTMAX_TILING_FIELDS(X)                                                               \
    X(srcM)                                                                                            \
    X(srcK) X(srcSize) X(outMaxM) X(outMaxK) X(outMaxSize) X(splitM) X(splitK) X(splitSize) X(reduceM) \
        X(reduceK) X(reduceSize) X(rangeM) X(tailM) X(tailSplitSize) X(tailReduceSize)

struct SoftMaxTiling {
#define SFUMATO_SOFTMAX_FIELD(name) uint32_t name = 0;
    SFUMATO_SOFTMAX_TILING_FIELDS(SFUMATO_SOFTMAX_FIELD)
#undef SFUMATO_SOFTMAX_FIELD
};
using LogSoftMaxTiling = SoftMaxTiling;

namespace AscendC::tiling {
using ::LogSoftMaxTiling;
using ::SoftMaxTiling;
}  // namespace AscendC::tiling
