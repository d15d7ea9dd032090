// The CPU-debug host API: GmAlloc/GmFree give host memory that kernels see as global memory
// (mapped onto simulated device memory at each launch), ICPU_RUN_KF runs a kernel on blockDim
// blocks of the simulated chip and returns when it finished, SetKernelMode picks the cores
// (AIV, AIC or mix) on split chips. Chip, mode and output directory come from SFUMATO_CONFIG,
// SFUMATO_MODE and SFUMATO_OUT; the outputs are written when the program exits.
#pragma once
#include <cstddef>

#include "sfumato_ascendc/launch.h"

namespace AscendC {
void* GmAlloc(size_t size);
void GmFree(void* ptr);
void SetKernelMode(KernelMode mode);
}  // namespace AscendC

#define ICPU_RUN_KF(func, blockdim, ...) ::sfumato::ascendc::run_kf(func, #func, blockdim, ##__VA_ARGS__)
#define ICPU_SET_TILING_KEY(key) ((void)(key))
