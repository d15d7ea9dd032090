// The reference matmul's device kernel as a callable, so tests can run its instruction stream
// on any IInstrSink (the chip model, or a recording/functional sink without SystemC).
#pragma once
#include "isa/instr_sink.h"
#include "runtime/ops/cube_matmul.h"
#include "runtime/ops/matmul_tiling.h"

namespace sfumato::ops {

// Where the operands live in GM: A (m x k, or k x m with t.trans_a), B (k x n, or n x k with
// t.trans_b) row-major in the input type (or NZ, see MatmulTiling::gm_nz and nz_index), C (m x n)
// row-major in the output type; t.batch such matrices back to back.
struct MatmulPlan {
    MatmulTiling t;
    uint64_t a = 0, b = 0, c = 0;
    // Two-pass split-K (t.two_pass()): the fp32 partial sums, t.k_split slices of C's elements;
    // the kernel then writes them (out must be FP32) and the reduction (cube_epilogue.h) makes C.
    uint64_t ws = 0;
};

// Element (i, j) of a rows x cols matrix stored as NZ (MatmulTiling::gm_nz): its index.
inline uint64_t nz_index(uint32_t rows, uint32_t i, uint32_t j) {
    return (uint64_t{j / 16} * ((rows + 15) / 16 * 16) + i) * 16 + j % 16;
}
// Elements a rows x cols NZ matrix occupies (both sides padded to 16).
inline uint64_t nz_elems(uint32_t rows, uint32_t cols) {
    return uint64_t{(rows + 15) / 16 * 16} * ((cols + 15) / 16 * 16);
}

// One block of the kernel (its identity comes from the sink). in: fp16 | bf16 | fp32 (out: fp32 |
// fp16 | bf16) or int8 (out: int32).
void run_matmul_kernel(isa::IInstrSink& sink, const MatmulPlan& plan, isa::DType in, isa::DType out);
// Elements of C (all batches).
inline uint64_t matmul_c_elems(const MatmulTiling& t) { return uint64_t{t.batch} * t.m * t.n; }

}  // namespace sfumato::ops
