// sfumato's kernel_operator.h: the public Ascend C kernel API (namespace AscendC, alias tik2) on
// sfumato's kernel API. Kernels written for the chip compile against it unchanged as host C++;
// launched through ICPU_RUN_KF (tikicpulib.h) or a rewritten <<<...>>> (scripts/ascendc-build),
// every block runs on a core of the simulated chip and each call issues the ISA instructions
// the kernel API issues. See runtime/ascendc/README.md for what is supported.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "sfumato_ascendc/activation.h"
#include "sfumato_ascendc/bufpool.h"
#include "sfumato_ascendc/cache.h"
#include "sfumato_ascendc/core_state.h"
#include "sfumato_ascendc/cube.h"
#include "sfumato_ascendc/cube_more.h"
#include "sfumato_ascendc/data_copy.h"
#include "sfumato_ascendc/data_copy_more.h"
#include "sfumato_ascendc/defs.h"
#include "sfumato_ascendc/fixpipe_more.h"
#include "sfumato_ascendc/gather.h"
#include "sfumato_ascendc/launch.h"
#include "sfumato_ascendc/math_adv.h"
#include "sfumato_ascendc/math_trig.h"
#include "sfumato_ascendc/reduce_adv.h"
#include "sfumato_ascendc/filter_adv.h"
#include "sfumato_ascendc/transform_adv.h"
#include "sfumato_ascendc/transdata.h"
#include "sfumato_ascendc/misc.h"
#include "sfumato_ascendc/norm.h"
#include "sfumato_ascendc/norm_grad.h"
#include "sfumato_ascendc/norm_more.h"
#include "sfumato_ascendc/norm_v2.h"
#include "sfumato_ascendc/pipe.h"
#include "sfumato_ascendc/quant.h"
#include "sfumato_ascendc/securec.h"
#include "sfumato_ascendc/select.h"
#include "sfumato_ascendc/softmax.h"
#include "sfumato_ascendc/softmax_more.h"
#include "sfumato_ascendc/softmax_v3.h"
#include "sfumato_ascendc/sort.h"
#include "sfumato_ascendc/sort_adv.h"
#include "sfumato_ascendc/stack_buffer.h"
#include "sfumato_ascendc/std_traits.h"
#include "sfumato_ascendc/sync.h"
#include "sfumato_ascendc/tensor.h"
#include "sfumato_ascendc/tiling.h"
#include "sfumato_ascendc/topk.h"
#include "sfumato_ascendc/trans_5hd.h"
#include "sfumato_ascendc/vector.h"
#include "sfumato_ascendc/vector_forms.h"
#include "sfumato_ascendc/vector_more.h"
#include "sfumato_ascendc/welford.h"
