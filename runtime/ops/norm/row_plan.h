// Host tiling of the row and column kernels (runtime/ops/norm/row_kernel.h, col_kernel.h):
// the padded row length, the rows per tile that fit the core's UB next to double-buffered
// queues, and the split of work rows over the vector cores (at least a few tiles per block so
// loads, compute and stores overlap).
#pragma once
#include "runtime/ops/norm/col_kernel.h"
#include "runtime/ops/norm/row_kernel.h"
#include "sim/device_if.h"

namespace sfumato::ops::norm {

// Fills cp, k, per_block and blocks of p (whose kind, dtypes, P, Q, cols and affine/stat fields
// are set); false when not even one row fits in UB.
bool plan_rows(RowPlan& p, const DeviceInfo& dev);
// Fills ic, icp and g of p; false when not even 64 lanes of one slice fit in UB.
bool plan_cols(ColPlan& p, const DeviceInfo& dev);

}  // namespace sfumato::ops::norm
