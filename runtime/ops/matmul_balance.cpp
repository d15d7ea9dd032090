// The split of a matmul's work over its blocks (see matmul_tiling.h: WorkSeg, block_segments,
// choose_balance). Whole items round robin, or, for atomic split-K, contiguous ranges of k-chunk
// units weighted by the blocks' staggered starts. The weights come from a fluid model of the
// launch: the task scheduler starts blocks one after another (core_start_cycles per core of a
// block), and a running block advances at its own rate (cube or its GM ports) until the running
// blocks together ask the HBM for more than it delivers, when they share it evenly. Simplified:
// the model knows no L2 hits (every unit's bytes are taken from the HBM), no start-up beyond the
// stagger (every block pays the same), and no barrier (the zeroing barrier releases once the first
// blocks, which hold part 0, have zeroed C).
#include <algorithm>
#include <cmath>

#include "runtime/ops/matmul_tiling.h"

namespace sfumato::ops {

std::vector<WorkSeg> block_segments(const MatmulTiling& t, uint32_t block) {
    std::vector<WorkSeg> v;
    const uint32_t split = std::max<uint32_t>(1, t.k_split);
    if (!t.unit_begin) {
        const uint32_t bd = std::max<uint32_t>(1, t.block_dim);
        for (uint64_t i = block; i < t.items(); i += bd) {
            const uint32_t item = static_cast<uint32_t>(i);
            v.push_back({item, 0, t.part_chunks(item % split)});
        }
        return v;
    }
    const std::vector<uint64_t>& ub = *t.unit_begin;
    if (block + 1 >= ub.size()) return v;
    // Units part by part: part p holds tiles() x part_chunks(p) units from tiles() x part_begin(p).
    uint64_t u = ub[block];
    const uint64_t end = ub[block + 1], tiles = t.tiles();
    for (uint32_t p = 0; p < split && u < end; ++p) {
        const uint64_t first = tiles * t.part_begin(p), pc = t.part_chunks(p), last = first + tiles * pc;
        while (u < end && u < last) {
            const uint64_t tile = (u - first) / pc, c = (u - first) % pc;
            const uint64_t stop = std::min(end, first + (tile + 1) * pc);
            v.push_back({static_cast<uint32_t>(tile * split + p), static_cast<uint32_t>(c),
                         static_cast<uint32_t>(c + (stop - u))});
            u = stop;
        }
    }
    return v;
}

namespace {

// The fluid model of one launch (see the file comment). Work is counted in units (one k chunk of
// one tile) and a block's fixed costs in units of its own rate.
class Fluid {
public:
    Fluid(const MatmulTiling& t, uint32_t in_es, uint32_t out_es, const DeviceInfo& dev)
        : m_out_es(out_es), m_dev(dev), m_bd(std::max<uint32_t>(1, t.block_dim)) {
        // A unit's cube cycles and the bytes it reads (B's chunk, and A's unless A is resident: a
        // block then reads its A part once, beside the B chunks of its first segment, whose steps
        // the cube bounds).
        const double macs = dev.cube_macs_fp16 > 0 ? dev.cube_macs_fp16 : 16.0 * 16 * 16;
        m_mn0 = macs / std::max(1u, dev.cube_depth_16bit);
        const double cube =
            double(t.base_m) * t.base_n / m_mn0 * std::ceil(double(t.k_l1) / dev.cube_depth_of(in_es));
        m_bytes = double(t.b1_bytes(in_es)) + (t.a_slots ? 0.0 : double(t.a1_bytes(in_es)));
        // A block's own rate: its cube, and the GM ports that read for it (the cube's, and its
        // AIVs' when they prefetch into L2, a MIX launch, whose blocks also start later apart).
        const uint32_t cores = 1 + (t.pf_ahead ? t.pf_aiv : 0);
        const double port = double(cores) * dev.core_gm_read_bytes_per_cycle;
        m_solo = std::max(cube, port > 0 ? m_bytes / port : 0.0);
        m_gap = double(cores) * dev.core_start_cycles;
    }
    bool ok() const { return m_solo > 0; }
    double solo() const { return m_solo; }

    // Units per cycle of each of n running blocks.
    double rate(uint32_t n) const {
        const double r = 1.0 / m_solo;
        return m_dev.gm_bytes_per_cycle > 0 ? std::min(r, m_dev.gm_bytes_per_cycle / (double(n) * m_bytes))
                                            : r;
    }

    // Block b's fixed costs under t's split, in units: zeroing the tiles whose first chunk it
    // runs (a K0-deep mad and a drain each, before its first unit) and a drain per segment
    // (exposed with one L0C buffer).
    std::vector<double> overheads(const MatmulTiling& t) const {
        const uint32_t split = std::max<uint32_t>(1, t.k_split);
        const double mad0 = double(t.base_m) * t.base_n / m_mn0;
        const double drain =
            m_dev.core_write_max_bytes_per_cycle > 0
                ? double(t.base_m) * t.base_n * m_out_es / m_dev.core_write_max_bytes_per_cycle
                : 0.0;
        std::vector<double> o(m_bd, 0.0);
        for (uint32_t b = 0; b < m_bd; ++b)
            for (const WorkSeg& g : block_segments(t, b)) {
                if (g.item % split == 0 && g.c_lo == 0) o[b] += (mad0 + drain) / m_solo;
                if (t.l0c_buffers == 1) o[b] += drain / m_solo;
            }
        return o;
    }

    // The split that ends every block at the same T: block b's units plus fixed costs o[b] are
    // W(T) - W(s_b), W(s_b) the work one block has done by block b's start (every started block
    // advancing at rate(N)). A block whose start and fixed costs exceed W(T) gets nothing.
    std::shared_ptr<std::vector<uint64_t>> shares(uint64_t units, const std::vector<double>& o) const {
        std::vector<double> w(m_bd, 0.0);
        for (uint32_t b = 1; b < m_bd; ++b) w[b] = w[b - 1] + m_gap * rate(b);
        uint32_t n = m_bd;
        double wt = 0;
        for (; n > 0; --n) {
            double sum = 0;
            for (uint32_t b = 0; b < n; ++b) sum += w[b] + o[b];
            wt = (double(units) + sum) / n;
            if (wt >= w[n - 1] + o[n - 1]) break;
        }
        auto ub = std::make_shared<std::vector<uint64_t>>(m_bd + 1, units);
        double acc = 0;
        for (uint32_t b = 0; b < m_bd; ++b) {
            (*ub)[b] = std::min<uint64_t>(units, static_cast<uint64_t>(std::llround(std::max(0.0, acc))));
            if (b < n) acc += std::max(0.0, wt - w[b] - o[b]);
        }
        return ub;
    }

    // When the last block of t's split ends (cycles from the first block's start), blocks dropping
    // out as they finish.
    double finish(const MatmulTiling& t) const {
        const std::vector<double> o = overheads(t);
        std::vector<double> left(m_bd);
        for (uint32_t b = 0; b < m_bd; ++b) {
            uint64_t u = 0;
            for (const WorkSeg& g : block_segments(t, b)) u += g.c_hi - g.c_lo;
            left[b] = double(u) + o[b];
        }
        std::vector<bool> done(m_bd, false);
        double now = 0, end = 0;
        for (;;) {
            uint32_t running = 0, next = m_bd;
            for (uint32_t b = 0; b < m_bd; ++b) {
                if (done[b]) continue;
                if (b * m_gap <= now)
                    ++running;
                else
                    next = std::min(next, b);
            }
            if (running == 0) {
                if (next == m_bd) return end;
                now = next * m_gap;
                continue;
            }
            // To the next event: a running block finishes, or the next block starts.
            const double r = rate(running);
            double step = next < m_bd ? next * m_gap - now : 1e300;
            for (uint32_t b = 0; b < m_bd; ++b)
                if (!done[b] && b * m_gap <= now) step = std::min(step, left[b] / r);
            for (uint32_t b = 0; b < m_bd; ++b) {
                if (done[b] || b * m_gap > now) continue;
                left[b] -= step * r;
                if (left[b] <= 1e-9) done[b] = true, end = now + step;
            }
            now += step;
        }
    }

private:
    uint32_t m_out_es;
    const DeviceInfo& m_dev;
    uint32_t m_bd;
    double m_mn0 = 0, m_bytes = 0, m_solo = 0, m_gap = 0;
};

}  // namespace

void choose_balance(MatmulTiling& t, uint32_t in_es, uint32_t out_es, const DeviceInfo& dev, bool off) {
    t.unit_begin.reset();
    if (off || t.k_split <= 1 || t.two_pass() || dev.arch != "split") return;
    const uint64_t units = uint64_t{t.tiles()} * t.k_chunks();
    if (t.block_dim <= 1 || units < t.block_dim) return;
    const Fluid f(t, in_es, out_es, dev);
    if (!f.ok()) return;
    // The fixed costs depend on the split (who zeroes which tile, how many segments): refined a
    // few times from none.
    MatmulTiling rr = t;
    std::vector<double> o(t.block_dim, 0.0);
    for (int round = 0; round < 3; ++round) {
        t.unit_begin = f.shares(units, o);
        o = f.overheads(t);
    }
    // Unless the balanced split ends at least one unit's step before whole items round robin
    // (whose extra items, with a partial last wave, go to the first blocks already), keep round
    // robin: its blocks run neighbouring tiles at once (row-major B's narrow rows then share DRAM
    // pages and L2 lines).
    if (f.finish(t) + f.solo() >= f.finish(rr)) t.unit_begin.reset();
}

}  // namespace sfumato::ops
