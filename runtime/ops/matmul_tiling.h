// Host tiling of the reference matmul C (m x n) = A (m x k) x B (k x n): output tiles of
// base_m x base_n (one L0C buffer each), k walked in L1 chunks of k_l1 and, inside a chunk,
// in L0 steps of base_k. Every level is double buffered (two L1 buffers each of A and B, two
// L0A/L0B buffers, two L0C buffers; on coupled parts two UB buffers for the drained tile), and
// the sizes are the largest power-of-two steps that fit the device's buffers. Output tiles are
// spread over block_dim = min(tiles, cube cores) blocks, round robin. Simplified: one strategy
// for every shape (the operator-library issue tunes small and skinny shapes).
#pragma once
#include <cstdint>

#include "isa/dtype.h"
#include "sim/device_if.h"

namespace sfumato::ops {

struct MatmulTiling {
    uint32_t m = 0, n = 0, k = 0;
    uint32_t base_m = 0, base_n = 0, base_k = 0;
    uint32_t k_l1 = 0;  // multiple of base_k
    uint32_t tiles_m = 0, tiles_n = 0;
    uint32_t block_dim = 0;
    uint32_t buffers = 2;  // at every level
    // ND -> NZ by the MTE2's ND2NZ instruction (split parts) or by strided burst copies, one per
    // 16-column group (coupled parts: the vendor documents ND2NZ DataCopy for the 910B-class
    // A2 parts, not for the 910-class training parts).
    bool nd2nz_instr = true;
    uint32_t tiles() const { return tiles_m * tiles_n; }
    // Bytes each queue needs per buffer.
    uint64_t a1_bytes(uint32_t es) const { return uint64_t{base_m} * k_l1 * es; }
    uint64_t b1_bytes(uint32_t es) const { return uint64_t{k_l1} * base_n * es; }
    uint64_t a2_bytes(uint32_t es) const { return uint64_t{base_m} * base_k * es; }
    uint64_t b2_bytes(uint32_t es) const { return uint64_t{base_k} * base_n * es; }
    uint64_t c1_bytes() const { return uint64_t{base_m} * base_n * 4; }
    // UB row stride (elements) of a drained tile with tn columns of out_es bytes: whole 32 B.
    static uint32_t ub_row(uint32_t tn, uint32_t out_es) { return (tn * out_es + 31) / 32 * 32 / out_es; }
    uint64_t c2_bytes(uint32_t out_es) const { return uint64_t{base_m} * ub_row(base_n, out_es) * out_es; }
};

// Plans a matmul of fp16/bf16 inputs (in_es bytes) and out_es-byte outputs on `dev`;
// block_dim 0 = automatic. Throws InputError when the buffers cannot hold the smallest tiles.
MatmulTiling plan_matmul(uint32_t m, uint32_t n, uint32_t k, uint32_t in_es, uint32_t out_es,
                         const DeviceInfo& dev, uint32_t block_dim = 0);

}  // namespace sfumato::ops
