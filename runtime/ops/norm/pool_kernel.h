// The pooling kernel of MaxPool and AveragePool (1 to 3 spatial dims) on the vector unit. A tile
// is a range of planes (n, c) and a box of output positions; its input box is loaded into UB in
// fp32 with the padding already in place: each input row is one burst whose left/right padding
// the MTE2 fills with the pad value (max: -inf, average: 0), rows outside the input are set by
// the vector unit, and the ceil-mode overhang counts as padding. Every window tap is then one
// gather over all output positions of the tile (byte offsets = the window origins, built once
// per tile shape from an on-device iota, plus the tap's constant offset) followed by a max or an
// add. AveragePool divides by the product of per-dim tap counts (computed on the vector unit from
// the positions: inside the input, or inside the padded input with count_include_pad).
// MaxPool's Indices: per tap the candidate's flat input index (window origin + the tap's
// constant, int32), kept where the tap value is strictly greater (compare + select): the first
// maximum wins.
#pragma once
#include <cstdint>

#include "isa/dtype.h"
#include "isa/instr_sink.h"

namespace sfumato::ops::norm {

constexpr int kMaxPoolDims = 3;

struct PoolPlan {
    bool is_max = true;
    bool count_include_pad = false;
    isa::DType xt = isa::DType::FP16;
    uint64_t x = 0, y = 0;
    uint64_t planes = 1;
    int nd = 2;  // spatial dims
    int64_t in[kMaxPoolDims] = {1, 1, 1}, out[kMaxPoolDims] = {1, 1, 1}, k[kMaxPoolDims] = {1, 1, 1},
            s[kMaxPoolDims] = {1, 1, 1}, d[kMaxPoolDims] = {1, 1, 1}, pb[kMaxPoolDims] = {0, 0, 0},
            pe[kMaxPoolDims] = {0, 0, 0};
    // Tile: tp planes x a box of tb[i] output positions per dim (tb == out: whole planes).
    uint64_t tp = 1;
    int64_t tb[kMaxPoolDims] = {1, 1, 1};
    uint64_t per_block = 1;  // tiles per block
    uint32_t buffers = 2;    // input staging buffers (1 when a double-buffered box does not fit)
    bool indices = false;    // MaxPool's Indices output (flat input index, int32)
    int storage_order = 0;   // indices: 0 row-major, 1 column-major over the spatial dims
    uint64_t ind = 0;        // GM of the indices
    uint32_t blocks = 1;
    uint64_t tiles() const;
};

uint64_t pool_ub_bytes(const PoolPlan& p);
// Picks the tile; false when not even one output row segment fits.
bool plan_pool(PoolPlan& p, uint64_t ub_bytes, uint32_t cores);
void pool_kernel(isa::IInstrSink& sink, const PoolPlan& p);

}  // namespace sfumato::ops::norm
