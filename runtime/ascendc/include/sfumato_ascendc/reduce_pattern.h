// The reduce patterns the normalisation configs and the host's reduce tiling functions name.
#pragma once
#include <cstdint>

namespace AscendC {
enum class ReducePattern : uint32_t { AR = 0, RA = 1, R = 2, RAR = 3, ARA = 4 };
}
