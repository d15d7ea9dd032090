// Host tiling of the reference matmul C (m x n) = A (m x k) x B (k x n): output tiles of
// base_m x base_n (one L0C buffer each), k walked in L1 chunks of k_l1 and, inside a chunk,
// in L0 steps of base_k. L1 (A1/B1) and L0A/L0B are double buffered; L0C (and, on coupled
// parts, the UB tile it drains into) holds one or two tiles. The output tile is chosen by a
// cost estimate from the device's parameters, as a vendor tiling function does from its
// platform info: a tile costs max(cube cycles, A+B load cycles at the per-core read rate (or
// the chip's share of the memory system), whole port cycles per row segment of a row-major
// operand) plus, with a single L0C buffer, its drain; the plan minimises waves x tile cost. A big tile halves the GM bytes per MAC (each A row panel and B
// column panel is read once per tile), so large shapes take the largest tile L0C holds even
// single-buffered; small shapes keep many tiles for the cores. The other sizes are the largest
// steps that fit. Output tiles are spread over block_dim = min(tiles, cube cores) blocks, round
// robin. Simplified: no split-k, no L1 reuse of a panel across output tiles (with k up to 64 Ki
// a full-k panel does not fit L1).
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
    uint32_t buffers = 2;      // L1 (A1, B1) and L0A/L0B
    uint32_t l0c_buffers = 2;  // L0C (CO1) and, on coupled parts, UB (CO2): 1 or 2
    // ND -> NZ by the MTE2's ND2NZ instruction (split parts) or by strided burst copies, one per
    // 16-column group (coupled parts: the vendor documents ND2NZ DataCopy for the 910B-class
    // A2 parts, not for the 910-class training parts).
    bool nd2nz_instr = true;
    // A and B stored in GM as NZ already (the framework's FRACTAL_NZ format: column groups of 16
    // elements, each holding all rows padded to a multiple of 16, the last group padded with
    // zero columns): loads are contiguous runs of whole fractal columns. The default on coupled
    // parts, whose cube kernels take NZ operands (the graph converts once, outside the kernel).
    bool gm_nz = false;
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

// Estimated cycles of one block's work under a tiling (the plan's objective; see above).
// Zero device rates (a DeviceInfo without memory figures) leave out that term.
double matmul_cost(const MatmulTiling& t, uint32_t in_es, uint32_t out_es, const DeviceInfo& dev);

// Plans a matmul of fp16/bf16 inputs (in_es bytes) and out_es-byte outputs on `dev`;
// block_dim 0 = automatic. Throws InputError when the buffers cannot hold the smallest tiles.
MatmulTiling plan_matmul(uint32_t m, uint32_t n, uint32_t k, uint32_t in_es, uint32_t out_es,
                         const DeviceInfo& dev, uint32_t block_dim = 0);

}  // namespace sfumato::ops
