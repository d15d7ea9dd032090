// sfumato's tikicpulib.h: the CPU-debug host API (AscendC::GmAlloc/GmFree, ICPU_RUN_KF,
// AscendC::SetKernelMode) running kernels on the simulated chip instead of on the CPU.
#pragma once
#include "kernel_operator.h"
#include "sfumato_ascendc/cpu_debug.h"
