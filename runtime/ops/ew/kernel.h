// The device side of the elementwise kernels (runtime/ops/ew/plan.h): per core, set up the
// once-per-core operands (scalar blocks, resident rows, constant blocks), then stream its
// range of tiles through a double-buffered input queue (MTE2), the program's vector steps (V)
// and a double-buffered output queue (MTE3).
#pragma once
#include "isa/instr_sink.h"
#include "runtime/kernel/kernel_context.h"
#include "runtime/ops/ew/plan.h"

namespace sfumato::ops::ew {

void ew_kernel(isa::IInstrSink& sink, const Plan& p);

// One vector instruction per at most 252 repeats over `count` elements (a masked tail when
// count is not a whole number of repeats). An operand with stride0 is one 32-byte block read
// with block and repeat stride 0. `sel` is VSEL's bitmask, `st` VCONV's source type.
struct VOperand {
    uint32_t addr = 0;
    bool stride0 = false;
    bool used = false;
};
inline VOperand vo(uint32_t a, bool s0 = false) { return {a, s0, true}; }
void vloop(kernel::KernelContext& ctx, isa::Opcode op, isa::DType dt, isa::DType st, VOperand dst, VOperand a,
           VOperand b, VOperand sel, uint64_t count, double scalar, isa::CmpMode cmp = isa::CmpMode::EQ,
           isa::RoundMode round = isa::RoundMode::RINT);

// Spreads n 16/32-bit values (contiguous at src) over n rows of row_elems elements at dst
// (row_elems * size a multiple of 32 bytes; dst must have room for n + 8 rows).
void spread_rows(kernel::KernelContext& ctx, isa::DType t, uint32_t dst, uint32_t src, uint32_t n, uint32_t row_elems);
// dst[i] = i * step for i < n (int32), n a multiple of 8.
void iota_i32(kernel::KernelContext& ctx, uint32_t dst, uint32_t n, int32_t step);

}  // namespace sfumato::ops::ew
