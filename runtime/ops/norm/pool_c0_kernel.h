// MaxPool over an NC1HWC0 tensor (2 spatial dims, dilation 1) the way the 5-D layout allows it:
// a pixel is one 32-byte block of C0 channels, so one window tap over 8 output pixels is one
// vector repeat whose source block stride is the pooling stride -- a vmax of whole C0 rows, no
// gather. A work item is a band of output rows of one (n, c1) plane: the input rows its windows
// reach are loaded with the left and right padding filled with the lowest value by the copy
// itself (rows above or below the input by a vector fill); per tap one instruction per group of
// 8 output pixels walks the band's rows as repeats; the band is written in one burst. Max is
// exact in the storage type, so no conversion is made.
#pragma once
#include <cstdint>

#include "isa/dtype.h"
#include "isa/instr_sink.h"

namespace sfumato::ops::norm {

struct PoolC0Plan {
    isa::DType xt = isa::DType::FP16;
    uint64_t planes = 1;  // N x C1
    int64_t H = 1, W = 1, OH = 1, OW = 1, kh = 1, kw = 1, sh = 1, sw = 1, pt = 0, pl = 0;
    int64_t Wp = 1;   // pixels of a tile row (left pad, W, right pad)
    int64_t ob = 1;   // output rows per band
    uint64_t per_block = 1;
    uint32_t blocks = 1;
    uint64_t x = 0, y = 0;
    uint64_t bands() const { return static_cast<uint64_t>((OH + ob - 1) / ob); }
    uint64_t items() const { return planes * bands(); }
    int64_t in_rows() const { return (ob - 1) * sh + kh; }
};

uint64_t pool_c0_ub_bytes(const PoolC0Plan& p);
// Fills Wp, ob and the split from the geometry; false when the form does not apply (padding
// wider than a copy pads, strides beyond the repeat fields, not one output row fits in UB).
bool plan_pool_c0(PoolC0Plan& p, uint64_t ub, uint32_t cores);
void pool_c0_kernel(isa::IInstrSink& sink, const PoolC0Plan& p);

}  // namespace sfumato::ops::norm

namespace sfumato::ops::norm {

// MaxPoolGrad over NC1HWC0 X, Y and dY (2 spatial dims, dilation 1): a work item is a band of hb
// input rows of one plane with the output rows whose windows reach it. Per window tap and group
// of 8 output pixels, over the band's rows as repeats: compare the tap's X (source block stride
// the pooling stride) with Y, select dY or zero, and add into dX at the tap's pixels -- every
// maximum of a window takes its gradient (ties too), sums in the storage type (as the ND kernel).
struct PoolC0GradPlan {
    isa::DType xt = isa::DType::FP16;
    uint64_t planes = 1;
    int64_t H = 1, W = 1, OH = 1, OW = 1, kh = 1, kw = 1, sh = 1, sw = 1, pt = 0, pl = 0;
    int64_t Wp = 1;  // pixels of a tile row
    int64_t hb = 1;  // input rows per band
    uint64_t per_block = 1;
    uint32_t blocks = 1;
    uint64_t x = 0, y = 0, dy = 0, dx = 0;
    uint64_t bands() const { return static_cast<uint64_t>((H + hb - 1) / hb); }
    uint64_t items() const { return planes * bands(); }
    int64_t out_rows() const { return (hb + kh - 2) / sh + 1; }  // output rows a band's windows span, at most
};

uint64_t pool_c0_grad_ub_bytes(const PoolC0GradPlan& p);
bool plan_pool_c0_grad(PoolC0GradPlan& p, uint64_t ub, uint32_t cores);
void pool_c0_grad_kernel(isa::IInstrSink& sink, const PoolC0GradPlan& p);

}  // namespace sfumato::ops::norm
