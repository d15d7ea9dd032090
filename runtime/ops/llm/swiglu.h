// SwiGlu of the LLM MLP (contract: docs/llm.md, "Operators"): y [T, I] =
// silu(gate) * up from the fused gate+up projection gate_up [T, 2I] (gate =
// columns [0, I), up = [I, 2I)), silu(g) = g / (1 + exp(-g)), in fp32. A vector
// kernel: a tile is k rows of one column chunk (the whole row when it fits, k =
// 1 and chunks of cw columns otherwise); MTE2 loads the gate and up parts of
// the tile as two strided burst sets, V computes g * u / (1 + exp(-g)) out of
// place over three fp32 buffers (placed in three UB bank spans where they fit,
// runtime/ops/norm/ub_place.h), MTE3 stores; double-buffered queues overlap the
// pipes. Work units (row, chunk) are split evenly over the vector cores.
#pragma once
#include <cstdint>

#include "isa/dtype.h"
#include "isa/instr_sink.h"
#include "sim/device_if.h"

namespace sfumato::ops::llm {

struct SwiGluPlan {
    isa::DType t = isa::DType::FP16;
    uint64_t x = 0, y = 0;         // GM
    uint64_t rows = 0, inter = 0;  // T, I
    uint32_t cw = 64, k = 1;       // columns per chunk (multiple of 64), rows per tile
    uint64_t nch = 1, per_block = 1;
    uint32_t blocks = 1;
};

uint64_t swiglu_ub_bytes(const SwiGluPlan& p, uint32_t k, uint32_t cw);
bool plan_swiglu(SwiGluPlan& p, const DeviceInfo& dev);
void swiglu_kernel(isa::IInstrSink& sink, const SwiGluPlan& p);

}  // namespace sfumato::ops::llm
