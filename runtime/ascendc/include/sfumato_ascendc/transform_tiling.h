// The tiling data of Pad, UnPad and Transpose (ConfusionTransposeTiling) in sfumato's own layout: the
// kernels read the shape from them (transform_adv.h); the host functions (transform_host.h) fill them.
// The optiling names are the same structs, so a tiling class holding one by TILING_DATA_FIELD_DEF_STRUCT
// saves the bytes the kernel reads.
#pragma once
#include <cstdint>

namespace AscendC::tiling {
struct PadTiling {
    uint32_t srcHeight = 0;
    uint32_t srcWidth = 0;     // elements of a source row
    uint32_t srcOriWidth = 0;  // the valid ones (rows already whole 32-byte blocks)
    uint32_t reserved = 0;
};
struct UnPadTiling {
    uint32_t srcHeight = 0;
    uint32_t srcWidth = 0;
    uint32_t reserved0 = 0;
    uint32_t reserved1 = 0;
};
}  // namespace AscendC::tiling

// [B, N, S, H/N] of the transposes (param0..param3), the rest unused; 18 words as the reference's.
struct ConfusionTransposeTiling {
    uint32_t param0 = 0, param1 = 0, param2 = 0, param3 = 0, param4 = 0, param5 = 0, param6 = 0, param7 = 0,
             param8 = 0, param9 = 0, param10 = 0, param11 = 0, param12 = 0, param13 = 0, param14 = 0, param15 = 0,
             param16 = 0, param17 = 0;
};

namespace AscendC::tiling {
using ::ConfusionTransposeTiling;
}
namespace optiling {
using PadTiling = AscendC::tiling::PadTiling;
using UnPadTiling = AscendC::tiling::UnPadTiling;
using ConfusionTransposeTiling = ::ConfusionTransposeTiling;
}  // namespace optiling
