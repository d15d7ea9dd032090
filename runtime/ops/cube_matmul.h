// The cube matmul kernel every matrix operator of the library runs (MatMul,
// Gemm, the reference `kernel matmul`, Conv's and attention's products go their
// own way but share the conventions): batched C = alpha * op(A) op(B) [+ bias],
// fp16/bf16/fp32/int8 inputs, fp32 or int32 accumulation in L0C, the FixPipe
// (split parts) or the vector pipe (coupled parts) draining tiles with the
// output cast, the alpha scale (scalar quant) and an optional ReLU.
//
// Operands in GM: A (m x k) row-major, or stored transposed (k x m, `trans_a`);
// B (k x n), or stored transposed (n x k, `trans_b`); row strides lda/ldb/ldc
// in elements; FRACTAL_NZ A and B (non-transposed 16-bit only) load as
// contiguous runs. Batches: the output's batch dimensions with, per operand, a
// stride in elements for each (0 = broadcast).
//
// How each operand reaches the cube (Cube wants A as ZZ in L0A and B as ZN in
// L0B, both with k contiguous inside a fractal row): a k-contiguous operand (A,
// or B stored n x k) is loaded to L1 as NZ by the MTE2 (ND2NZ) and reordered by
// load2d; the other form is transposed by load2d (16-bit: per fractal; fp32:
// squares of two 16 x 8 fractals, from an L1 tile laid out row block by row
// block; int8: squares of two stacked 16 x 32 fractals, with tiles padded to
// 32). On the last, odd k step of an fp32 transposed operand the second fractal
// of the last square lands past the step's k range (inside the buffer; the mad
// never reads it).
//
// Bias: the ISA has no L1 -> bias-table move, so a bias enters as one extra
// K0-deep mad per output tile that overwrites L0C before the k loop: a row bias
// (one value per column n) multiplies a filled L0A fractal (every element s)
// with B_e, whose transpose in L1 holds the bias in column 0 and zeros
// elsewhere (ND2NZ of the bias as an n x 1 matrix, so B_e is ZN already); a
// column bias (one value per row m) is the mirror image; a scalar bias reads
// one element n times. s = beta / alpha, since the FixPipe scales the whole
// accumulator by alpha. Tiling and tile order: runtime/ops/matmul_tiling.h.
//
// L2 prefetch (MatmulTiling::pf_ahead, split parts, launched as MIX): a block's AIVs run the
// same walk and read the chunks their cube is about to miss into a UB scratch buffer, a bounded
// number of steps ahead of the cube's completed loads (one cross-core flag per cube load, as
// many as each AIV waits for); the cube's loads of them then hit L2. Nothing they read is used.
//
// A resident in L1 (MatmulTiling::a_slots): A's chunks live in one L1 buffer, a slot per chunk of
// the item's k walk, and the A1 queue's buffers carry only the MTE2 -> MTE1 order of each step; a
// chunk whose slot still holds it (the block's previous item read the same A rows) is not loaded
// again, and the AIVs do not prefetch it. A slot is rewritten (a block's item on other A rows)
// only `buffers` or more steps after its last read, which the queue's order already covers.
//
// Split-K (MatmulTiling::k_split): atomic form, the kernel zeroes C, meets at a barrier and
// every part adds into C; two-pass form, every part writes its fp32 partial sum to its own
// workspace slice (c_part_stride) and a vector kernel (cube_epilogue.h, parts) adds them.
//
// The walk (which chunk of which tile a block runs at each step, where its operands sit in GM,
// what the AIVs read ahead) is runtime/ops/cube_walk.h, shared by every element type.
#pragma once
#include <vector>

#include "isa/instr_sink.h"
#include "runtime/ops/matmul_tiling.h"

namespace sfumato::ops {

struct CubeMatmulPlan {
    MatmulTiling t;
    isa::DType in = isa::DType::FP16;        // FP16 | BF16 | FP32 | INT8
    isa::DType out = isa::DType::FP32;       // FP32 | FP16 | BF16 (| INT32 for INT8 inputs)
    uint64_t a = 0, b = 0, c = 0, bias = 0;  // device addresses
    uint64_t lda = 0, ldb = 0,
             ldc = 0;  // row strides of the stored matrices (elements)
    // Batch dimensions of C (outermost first) and each operand's stride per
    // dimension.
    std::vector<uint32_t> bdims;
    std::vector<uint64_t> a_bs, b_bs, c_bs;
    BiasForm bias_form = BiasForm::None;
    double bias_scale = 1.0;  // s: the bias mad adds s * bias
    double alpha = 1.0;       // FixPipe scalar scale (skipped when 1)
    bool relu = false;        // FixPipe ReLU after the scale
    bool skip_ab = false;     // alpha == 0 with a bias: only the bias mad
    // Two-pass split-K (MatmulTiling::two_pass()): c is the fp32 workspace (out FP32) and part p
    // of a tile drains to c + p * c_part_stride elements, in C's layout (ldc, c_bs).
    uint64_t c_part_stride = 0;
};

// One block of the kernel (its identity comes from the sink).
void run_cube_matmul(isa::IInstrSink& sink, const CubeMatmulPlan& plan);

}  // namespace sfumato::ops
