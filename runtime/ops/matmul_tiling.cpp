// Host tiling of the reference matmul (see matmul_tiling.h): every output tile L0C can hold
// (sizes 16..256 in powers of two, clamped to the shape; one or two L0C buffers) is costed, and
// the cheapest wins; base_k and k_l1 are then the largest steps L0A/L0B and L1 hold.
#include "runtime/ops/matmul_tiling.h"

#include <algorithm>
#include <cmath>
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
bool c_fits(const MatmulTiling& t, uint32_t out_es, const DeviceInfo& dev) {
    return t.l0c_buffers * t.c1_bytes() <= dev.l0c_bytes &&
           (dev.arch != "coupled" || t.l0c_buffers * t.c2_bytes(out_es) <= dev.ub_bytes);
}
// base_k: the largest step (up to 256) whose double-buffered L0A/L0B tiles fit; k_l1: as many
// base_k steps per chunk as L1 holds double-buffered (a power of two of them), up to what k
// needs. False if none fit.
bool fit_k(MatmulTiling& t, uint32_t in_es, const DeviceInfo& dev) {
    const uint64_t bufs = t.buffers;
    t.base_k = std::min<uint32_t>(r16(t.k), 256);
    while (bufs * t.a2_bytes(in_es) > dev.l0a_bytes || bufs * t.b2_bytes(in_es) > dev.l0b_bytes) {
        if (t.base_k == 16) return false;
        t.base_k = halve(t.base_k);
    }
    const uint32_t k_steps = (t.k + t.base_k - 1) / t.base_k;
    const uint64_t per_step = bufs * (t.a2_bytes(in_es) + t.b2_bytes(in_es));
    uint64_t steps = std::min<uint64_t>(k_steps, dev.l1_bytes / per_step);
    if (steps == 0) return false;
    // A chunk shorter than k: a power of two of steps, so that chunk rows of A stay aligned to
    // whole L2 lines / MTE requests (5 steps of 64 fp16 make 640-byte rows: 2-3 requests each).
    if (steps < k_steps) steps = uint64_t{1} << (63 - __builtin_clzll(steps));
    t.k_l1 = static_cast<uint32_t>(steps) * t.base_k;
    return true;
}
}  // namespace

double matmul_cost(const MatmulTiling& t, uint32_t in_es, uint32_t out_es, const DeviceInfo& dev) {
    const uint32_t blocks = std::max<uint32_t>(1, std::min(t.tiles(), t.block_dim));
    const double waves = (t.tiles() + blocks - 1) / blocks;
    const double macs = dev.cube_macs_fp16 > 0 ? dev.cube_macs_fp16 : 16.0 * 16 * 16;
    const double cube = double(t.base_m) * t.base_n * r16(t.k) / macs;
    // A and B are read by every tile of their row / column; they stay in L2 when they fit.
    const double footprint = (double(t.m) * t.k + double(t.k) * t.n) * in_es;
    const bool in_l2 = dev.l2_bytes > 0 && footprint <= double(dev.l2_bytes);
    const double core_rate = in_l2 ? dev.core_read_max_bytes_per_cycle : dev.core_gm_read_bytes_per_cycle;
    const double chip_rate = (in_l2 ? dev.mem_max_bytes_per_cycle : dev.gm_bytes_per_cycle) / blocks;
    const double rate = core_rate > 0 && chip_rate > 0 ? std::min(core_rate, chip_rate) : std::max(core_rate, chip_rate);
    // The port moves each request in whole cycles: a row-major operand costs whole cycles per
    // row segment (A rows of k_l1, B rows of base_n elements per L1 chunk), which makes narrow
    // rows dearer than their bytes; NZ operands load as long contiguous runs.
    double load = 0;
    if (rate > 0) {
        auto row = [&](double bytes) { return t.gm_nz ? bytes / rate : std::ceil(bytes / rate); };
        auto chunk = [&](uint32_t kc) { return t.base_m * row(double(kc) * in_es) + kc * row(double(t.base_n) * in_es); };
        const uint32_t full = t.k / t.k_l1, rest = t.k % t.k_l1;
        load = full * chunk(t.k_l1) + (rest ? chunk(rest) : 0.0);
    }
    const double drain = dev.core_write_max_bytes_per_cycle > 0
                             ? double(t.base_m) * t.base_n * out_es / dev.core_write_max_bytes_per_cycle
                             : 0.0;
    // With one L0C buffer the next tile's first mad waits for the drain; the last drain is
    // always exposed.
    return waves * (std::max(cube, load) + (t.l0c_buffers == 1 ? drain : 0.0)) + drain;
}

MatmulTiling plan_matmul(uint32_t m, uint32_t n, uint32_t k, uint32_t in_es, uint32_t out_es,
                         const DeviceInfo& dev, uint32_t block_dim) {
    if (m == 0 || n == 0 || k == 0) throw InputError("matmul: m, n and k must be positive");
    const uint32_t cores = std::max<uint32_t>(1, dev.cube_cores);
    MatmulTiling best;
    double best_cost = 0, best_bytes = 0;
    bool found = false;
    // On equal cost: fewer bytes loaded (bigger tiles; what counts when the device gives no
    // rates), then two L0C buffers, then wider tiles (longer contiguous B rows).
    for (uint32_t bufs : {2u, 1u})
        for (uint32_t bn = 256; bn >= 16; bn /= 2) {
            if (bn > r16(n) && bn / 2 >= r16(n)) continue;  // one clamped size per shape
            for (uint32_t bm = 256; bm >= 16; bm /= 2) {
                if (bm > r16(m) && bm / 2 >= r16(m)) continue;
                MatmulTiling t;
                t.m = m, t.n = n, t.k = k;
                t.l0c_buffers = bufs;
                t.gm_nz = dev.arch == "coupled";
                t.base_m = std::min(bm, r16(m));
                t.base_n = std::min(bn, r16(n));
                if (!c_fits(t, out_es, dev) || !fit_k(t, in_es, dev)) continue;
                t.tiles_m = (m + t.base_m - 1) / t.base_m;
                t.tiles_n = (n + t.base_n - 1) / t.base_n;
                t.block_dim = block_dim ? block_dim : std::min(t.tiles(), cores);
                const double cost = matmul_cost(t, in_es, out_es, dev);
                const double bytes = double(t.tiles_n) * m + double(t.tiles_m) * n;  // x k x in_es
                const bool tie = found && std::abs(cost - best_cost) <= 1e-9 * best_cost;
                if (!found || (!tie && cost < best_cost) || (tie && bytes < best_bytes))
                    best = t, best_cost = cost, best_bytes = bytes, found = true;
            }
        }
    if (!found) throw InputError("matmul: L0C/L0A/L0B/L1 (or UB) too small for the smallest 16x16x16 tiles");
    best.nd2nz_instr = dev.arch != "coupled";
    return best;
}

}  // namespace sfumato::ops
