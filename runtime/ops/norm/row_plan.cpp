// Host tiling of the row and column kernels (runtime/ops/norm/row_plan.h).
#include "runtime/ops/norm/row_plan.h"

#include <algorithm>

#include "runtime/ops/norm/common.h"
#include "runtime/ops/norm/vec_nest.h"

namespace sfumato::ops::norm {

bool plan_rows(RowPlan& p, const DeviceInfo& dev) {
    p.cp = static_cast<uint32_t>(up(std::max<uint64_t>(p.cols, 1), 64));
    if (up(p.cols, 64) > (1ull << 32)) return false;
    p.buffers = 2;
    p.nch = 1;
    if (row_ub_bytes(p, 1) > dev.ub_bytes) {
        {
            // Two passes over chunks: the largest chunk (multiple of 64) that fits.
            p.cp = 64;
            if (row_ub_bytes(p, 1) > dev.ub_bytes) return false;
            while (true) {
                RowPlan q = p;
                q.cp = p.cp + 64;
                if (q.cp >= up(p.cols, 64) || row_ub_bytes(q, 1) > dev.ub_bytes) break;
                p.cp = q.cp;
            }
            p.nch = cdiv(p.cols, p.cp);
            p.k = 1;
            const WorkSplit w = split_work(p.P * p.Q, dev.vector_cores);
            p.per_block = w.per_block;
            p.blocks = w.blocks;
            return true;
        }
    }
    const WorkSplit w = split_work(p.P * p.Q, dev.vector_cores);
    p.per_block = w.per_block;
    p.blocks = w.blocks;
    // Rows per tile: what fits, but at least ~4 tiles per block so the pipes overlap, and a
    // tile of at most 64 Ki elements (beyond that, larger tiles only lengthen fill and drain).
    const uint64_t cap = std::min<uint64_t>({std::max<uint64_t>(1, p.per_block / 4), std::max<uint64_t>(1, 65536 / p.cp),
                                             p.Q, 1024});
    uint32_t k = 1;
    while (k < cap && row_ub_bytes(p, k + 1) <= dev.ub_bytes) ++k;
    p.k = k;
    return true;
}

bool plan_cols(ColPlan& p, const DeviceInfo& dev) {
    const uint64_t budget = dev.ub_bytes;
    // Whole inner rows when they fit (several outer slices per tile if the lanes are few), else
    // chunks of 64-lane multiples.
    const uint64_t icp_full = up(p.inner, 16);
    p.buffers = 2;
    if (col_ub_bytes(p, 1, std::min<uint64_t>(icp_full, 64)) > budget) p.buffers = 1;
    if (col_ub_bytes(p, 1, icp_full) <= budget) {
        p.ic = p.inner, p.icp = static_cast<uint32_t>(icp_full);
        uint32_t g = 1;
        const uint64_t want = std::max<uint64_t>(1, 4096 / icp_full);  // lanes per tile to aim for
        while (g < want && g < p.outer && col_ub_bytes(p, g + 1, icp_full) <= budget) ++g;
        p.g = g;
    } else {
        // Chunks of 64-lane multiples, or of 16 when not even 64 lanes of every row fit.
        const uint64_t step = col_ub_bytes(p, 1, 64) <= budget ? 64 : 16;
        uint64_t ic = step;
        if (col_ub_bytes(p, 1, ic) > budget) return false;
        while (ic + step < p.inner && col_ub_bytes(p, 1, ic + step) <= budget) ic += step;
        p.ic = ic, p.icp = static_cast<uint32_t>(ic), p.g = 1;
    }
    return true;
}

}  // namespace sfumato::ops::norm
