// The kernel's view of the high-level APIs' tiling data (TCubeTiling for Matmul, SoftMaxTiling).
#pragma once
#include "sfumato_ascendc/cube_tiling.h"
#include "sfumato_ascendc/softmax_tiling_data.h"
#include "sfumato_ascendc/norm_tiling_data.h"
#include "sfumato_ascendc/norm_more_tiling.h"
#include "sfumato_ascendc/transform_tiling.h"
#include "sfumato_ascendc/topk_tiling_data.h"

// The tiling structs under the library's namespace (the vendor's introduction examples name
// AscendC::tiling::TCubeTiling on the host and in the kernel).
namespace AscendC::tiling {
using TCubeTiling = ::TCubeTiling;
}  // namespace AscendC::tiling
