// The row kernel's UB buffers (runtime/ops/norm/row_kernel.h): their sizes for k rows per
// tile, and their placement for the 220x bank rules (ub_place.h): the row buffers that feed
// each other (the input and xf, xf and t, xf and the fold scratch, the scratch and the output
// that takes its alternate fold levels, the result and the output; LayerNorm also t and the
// scratch of its squares) in different 64 KiB bank spans, weighted by repeats per row; xf and
// t at the same phase (an application writes t's units in the half of xf's, away from the
// per-row vector's copy it reads) and the lane parameters in the other half.
#pragma once
#include <cstdint>

#include "runtime/ops/norm/row_kernel.h"

namespace sfumato::ops::norm {

struct Layout {
    uint64_t in, out, xf, t, scr, e, vals, blocks, gstage, gvec, par, stat;
};

// Buffer sizes with k rows per tile, each staggered (vec_nest.h) for the sequential layout.
Layout layout(const RowPlan& p, uint32_t k);

// Byte offsets of the placed buffers within a reserved range of `reserve` bytes.
struct RowPlacement {
    bool placed = false;
    uint64_t reserve = 0;
    uint64_t in[2] = {0, 0}, out[2] = {0, 0}, xf = 0, t = 0, scr = 0, e = 0, vals = 0, blocks = 0, gstage = 0,
             gvec = 0, par = 0, stat = 0;
    uint64_t in_bytes = 0, out_bytes = 0, f32_bytes = 0, scr_bytes = 0, e_bytes = 0, gvec_bytes = 0;
};

// The placement in a UB of ub bytes (tiles of p.k rows; fp32 rows are read in the input
// queue's buffers and fp32 results written into the output's); placed = false for one buffer
// per queue or buffers that do not fit whole inside bank spans: the kernel then keeps the
// sequential layout.
RowPlacement place_row(const RowPlan& p, const Layout& l, uint64_t ub);

}  // namespace sfumato::ops::norm
