// Parameters of one AI core (scalar unit, pipes, local buffers), read from `chip.aicore.*`.
// Plain C++: loading them needs no SystemC, so `sfumato params`/`info` never elaborate a core.
#pragma once
#include "sim/config.h"

namespace sfumato {

struct BufferParams {
    Param<uint64_t> size;
    Param<uint64_t> align;
    BufferParams(const ParamScope& s, uint64_t size_def, uint64_t align_def, const char* what);
};

struct CoreParams {
    explicit CoreParams(const ParamScope& s);
    ParamScope scope;
    // Scalar unit and pipe queues.
    Param<uint32_t> scalar_issue_cycles;
    Param<uint32_t> queue_depth;
    Param<uint32_t> event_ids;
    Param<uint32_t> flag_latency;
    // Local buffers.
    BufferParams ub, l1, l0a, l0b, l0c;
    // Vector unit.
    Param<uint32_t> vec_cycles_per_repeat;
    Param<uint32_t> vec_startup;
    // Cube unit (a fractal step: m0 x k0 x n0 MACs per cycle; k0 depends on the input type).
    Param<uint32_t> cube_m0, cube_n0, cube_k0_16bit, cube_k0_int8, cube_k0_fp32;
    // MTE pipes.
    Param<uint32_t> mte_request_bytes;
    Param<uint32_t> mte_max_outstanding;
    Param<uint32_t> mte2_startup;
    Param<uint32_t> mte3_startup;
};

}  // namespace sfumato
