/* Tiling of the row-sum example in the operator-project form: declared with the tiling-data
 * macros, filled and saved by the host, read by the kernel with GET_TILING_DATA. */
#ifndef REDUCE_SUM_TILING_H
#define REDUCE_SUM_TILING_H
#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(ReduceSumTilingData)
TILING_DATA_FIELD_DEF(uint32_t, rows);         // rows in all
TILING_DATA_FIELD_DEF(uint32_t, cols);         // elements per row
TILING_DATA_FIELD_DEF(uint32_t, rowsPerBlock);
END_TILING_DATA_DEF;
REGISTER_TILING_DATA_CLASS(ReduceSumCustom, ReduceSumTilingData)
}  // namespace optiling
#endif
