// The kernel's view of the high-level APIs' tiling data (TCubeTiling for Matmul).
#pragma once
#include "sfumato_ascendc/cube_tiling.h"
