// Host tiling of the reference matmul (see matmul_tiling.h): greedy halving from generous
// starting sizes until every double-buffered level fits its buffer.
#include "runtime/ops/matmul_tiling.h"

#include <algorithm>
#include <string>

#include "sim/error.h"

namespace sfumato::ops {

namespace {
uint32_t r16(uint32_t v) {
    return (v + 15) / 16 * 16;
}
// Halves a multiple of 16, staying a multiple of 16 and at least 16.
uint32_t halve(uint32_t v) {
    return std::max<uint32_t>(16, v / 2 / 16 * 16);
}
}  // namespace

MatmulTiling plan_matmul(uint32_t m, uint32_t n, uint32_t k, uint32_t in_es, uint32_t out_es,
                         const DeviceInfo& dev, uint32_t block_dim) {
    if (m == 0 || n == 0 || k == 0) throw InputError("matmul: m, n and k must be positive");
    MatmulTiling t;
    t.m = m, t.n = n, t.k = k;
    const uint64_t bufs = t.buffers;
    const bool coupled = dev.arch == "coupled";
    t.base_m = std::min<uint32_t>(r16(m), 128);
    t.base_n = std::min<uint32_t>(r16(n), 256);
    auto c_fits = [&] {
        return bufs * t.c1_bytes() <= dev.l0c_bytes &&
               (!coupled || bufs * t.c2_bytes(out_es) <= dev.ub_bytes);
    };
    while (!c_fits()) {
        if (t.base_m == 16 && t.base_n == 16)
            throw InputError("matmul: L0C/UB too small for two 16x16 accumulator tiles");
        if (t.base_n >= t.base_m && t.base_n > 16)
            t.base_n = halve(t.base_n);
        else
            t.base_m = halve(t.base_m);
    }
    t.base_k = std::min<uint32_t>(r16(k), 256);
    while (bufs * t.a2_bytes(in_es) > dev.l0a_bytes || bufs * t.b2_bytes(in_es) > dev.l0b_bytes) {
        if (t.base_k == 16) throw InputError("matmul: L0A/L0B too small for the chosen tiles");
        t.base_k = halve(t.base_k);
    }
    // L1: as many base_k steps per chunk as fit, up to what k needs.
    const uint32_t k_steps = (k + t.base_k - 1) / t.base_k;
    const uint64_t per_step = bufs * (t.a2_bytes(in_es) + t.b2_bytes(in_es));
    const uint64_t steps = std::min<uint64_t>(k_steps, dev.l1_bytes / per_step);
    if (steps == 0) throw InputError("matmul: L1 too small for the chosen tiles");
    t.k_l1 = static_cast<uint32_t>(steps) * t.base_k;
    t.tiles_m = (m + t.base_m - 1) / t.base_m;
    t.tiles_n = (n + t.base_n - 1) / t.base_n;
    const uint32_t cores = std::max<uint32_t>(1, dev.cube_cores);
    t.nd2nz_instr = !coupled;
    t.block_dim = block_dim ? block_dim : std::min(t.tiles(), cores);
    return t;
}

}  // namespace sfumato::ops
