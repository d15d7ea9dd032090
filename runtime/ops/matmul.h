// The reference matmul's device kernel as a callable, so tests can run its instruction stream
// on any IInstrSink (the chip model, or a recording/functional sink without SystemC).
#pragma once
#include "isa/instr_sink.h"
#include "runtime/ops/matmul_tiling.h"

namespace sfumato::ops {

// Where the operands live in GM: A (m x k), B (k x n) row-major in the input type, C (m x n)
// row-major in the output type.
struct MatmulPlan {
    MatmulTiling t;
    uint64_t a = 0, b = 0, c = 0;
};

// One block of the kernel (its identity comes from the sink). in: fp16 | bf16;
// out: fp32 | fp16 | bf16.
void run_matmul_kernel(isa::IInstrSink& sink, const MatmulPlan& plan, isa::DType in, isa::DType out);

}  // namespace sfumato::ops
