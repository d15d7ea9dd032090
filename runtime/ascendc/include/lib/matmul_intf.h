// The high-level Matmul's kernel interface (AscendC::Matmul, MatmulType, MatmulConfig and the
// CFG_* templates, REGIST_MATMUL_OBJ): see sfumato_ascendc/matmul.h.
#pragma once
#include "kernel_operator.h"
#include "kernel_tiling/kernel_tiling.h"
#include "sfumato_ascendc/matmul.h"
