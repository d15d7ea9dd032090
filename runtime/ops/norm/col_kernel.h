// The column kernel of Softmax and LogSoftmax over an axis that is not the last: the input is
// [outer][len][inner] and the softmax runs along len for every (outer, inner). Rather than
// transposing, a tile loads `len` rows of an inner chunk (strided bursts: one per row, the GM
// stride inner elements) so that the reduction is elementwise across rows: the rows are folded
// pairwise (max, then sum of exponentials) with contiguous lanes along inner, and the results
// apply to every row through a repeat stride of 0. When inner is small, a tile holds several
// outer slices (g groups) to fill the lanes. Statistics in fp32.
#pragma once
#include <cstdint>

#include "isa/dtype.h"
#include "isa/instr_sink.h"

namespace sfumato::ops::norm {

struct ColPlan {
    bool log = false;
    isa::DType xt = isa::DType::FP16, yt = isa::DType::FP16;
    uint64_t x = 0, y = 0;
    uint64_t outer = 1, len = 1, inner = 1;
    uint64_t ic = 1;        // inner elements per tile (== inner when g > 1)
    uint32_t icp = 16;      // ic padded (a multiple of 16 lanes)
    uint32_t g = 1;         // outer slices per tile
    uint64_t per_block = 1; // work items per block (item = (outer group, inner chunk))
    uint32_t buffers = 2;
    uint64_t chunks() const { return (inner + ic - 1) / ic; }
    uint64_t items() const { return (outer + g - 1) / g * chunks(); }
};

uint64_t col_ub_bytes(const ColPlan& p, uint32_t g, uint64_t icp);
void col_kernel(isa::IInstrSink& sink, const ColPlan& p);

}  // namespace sfumato::ops::norm
