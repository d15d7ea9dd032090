// Host tiling of the cube matmul (see matmul_tiling.h): every output tile L0C
// can hold (sizes 16..256 in powers of two, clamped to the shape; one or two
// L0C buffers) is costed, and the cheapest wins; base_k and k_l1 are then the
// largest steps L0A/L0B and L1 hold.
#include "runtime/ops/matmul_tiling.h"

#include <algorithm>
#include <cmath>
#include <list>
#include <string>
#include <unordered_map>

#include "runtime/ops/op_util.h"
#include "sim/error.h"

namespace sfumato::ops {

const char* split_k_mode_name(SplitKMode m) { return m == SplitKMode::TwoPass ? "two-pass" : "atomic"; }

bool parse_split_k_mode(const std::string& s, SplitKMode& m) {
    if (s == "atomic") return m = SplitKMode::Atomic, true;
    if (s == "two-pass") return m = SplitKMode::TwoPass, true;
    return false;
}

namespace {
// Halves a multiple of `a`, staying a multiple of `a` and at least `a`.
uint32_t halve(uint32_t v, uint32_t a) { return std::max<uint32_t>(a, v / 2 / a * a); }
bool c_fits(const MatmulTiling& t, uint32_t out_es, const DeviceInfo& dev) {
    return t.l0c_buffers * t.c1_bytes() <= dev.l0c_bytes &&
           (dev.arch != "coupled" || t.l0c_buffers * t.c2_bytes(out_es) <= dev.ub_bytes);
}
// base_k: the largest step (up to 256, a multiple of the k granule) whose
// double-buffered L0A/L0B tiles fit; k_l1: as many base_k steps per chunk as L1
// holds double-buffered (a power of two of them), up to what k needs. False if
// none fit.
bool fit_k(MatmulTiling& t, uint32_t in_es, const DeviceInfo& dev) {
    const uint64_t bufs = t.buffers;
    const uint32_t gk = t.align_k;
    t.base_k = std::min<uint32_t>(rup(t.k, gk), 256);
    while (bufs * t.a2_bytes(in_es) > dev.l0a_bytes || bufs * t.b2_bytes(in_es) > dev.l0b_bytes) {
        if (t.base_k == gk) return false;
        t.base_k = halve(t.base_k, gk);
    }
    const uint32_t k_steps = (t.k + t.base_k - 1) / t.base_k;
    const uint64_t per_step = bufs * (uint64_t{t.base_m} * t.base_k + uint64_t{t.base_k} * t.base_n) * in_es;
    const uint64_t extra = bufs * (uint64_t{t.a1_extra} + t.b1_extra);
    if (dev.l1_bytes <= extra) return false;
    uint64_t steps = std::min<uint64_t>(k_steps, (dev.l1_bytes - extra) / per_step);
    if (steps == 0) return false;
    // A chunk shorter than k: a power of two of steps, so that chunk rows of A
    // stay aligned to whole L2 lines / MTE requests (5 steps of 64 fp16 make
    // 640-byte rows: 2-3 requests each).
    if (steps < k_steps) steps = uint64_t{1} << (63 - __builtin_clzll(steps));
    t.k_l1 = static_cast<uint32_t>(steps) * t.base_k;
    return true;
}
// The most parts split-K may cut a tile's k walk into (1: none): on split parts (the FixPipe adds
// into GM or writes a workspace slice; a coupled part drains through UB), at least one L1 chunk
// per part, and with the atomic form only when the plan sets the block count (its barrier needs
// every block resident). A forced count (MatmulProblem::k_split) is taken as is; otherwise up to
// enough parts for kMaxItemsPerCore work items per cube core, and the cost model decides
// (matmul_cost: waves of items, the zeroing of C or the reduction pass).
constexpr uint32_t kMaxItemsPerCore = 8;
bool split_limit_ok(const MatmulProblem& pr, const DeviceInfo& dev, uint32_t block_dim) {
    return pr.split_k_ok && dev.arch == "split" && (block_dim == 0 || pr.split_mode == SplitKMode::TwoPass);
}
uint32_t split_limit(const MatmulTiling& t, const MatmulProblem& pr, const DeviceInfo& dev, uint32_t block_dim) {
    const uint32_t cores = std::max<uint32_t>(1, dev.cube_cores);
    if (!split_limit_ok(pr, dev, block_dim)) return 1;
    if (pr.k_split) return std::max<uint32_t>(1, std::min(t.k_chunks(), pr.k_split));
    return std::max<uint32_t>(1, std::min(t.k_chunks(), kMaxItemsPerCore * cores / t.tiles()));
}

// The A slots a tiling needs to keep A resident in L1 (see MatmulTiling::a_slots), or 0: the most
// chunks an item walks, when that is more than the A1 buffers hold anyway, every item walks at
// least `buffers` chunks (a slot is rewritten, for an item on other A rows, only after the
// loads' double buffering has retired the step that last read it) and the slots fit L1 beside
// the double-buffered B chunks and the A1 queue's order tokens (kA1Token bytes each).
constexpr uint32_t kA1Token = 32;
uint32_t resident_slots(const MatmulTiling& t, uint32_t in_es, const DeviceInfo& dev) {
    uint32_t most = 0, least = ~0u;
    for (uint32_t p = 0; p < std::max<uint32_t>(1, t.k_split); ++p) {
        const uint32_t c = t.k_split > 1 ? t.part_begin(p + 1) - t.part_begin(p) : t.k_chunks();
        most = std::max(most, c), least = std::min(least, c);
    }
    if (most <= t.buffers || least < t.buffers) return 0;
    const uint64_t need = uint64_t{most} * rup(t.a1_bytes(in_es), 32) +
                          uint64_t{t.buffers} * (rup(t.b1_bytes(in_es), 32) + kA1Token);
    return need <= dev.l1_bytes ? most : 0;
}
}  // namespace

uint32_t block_items(const MatmulTiling& t, uint32_t block) {
    if (!t.unit_begin) {
        const uint32_t bd = std::max<uint32_t>(1, t.block_dim);
        return block < t.items() ? (t.items() - block + bd - 1) / bd : 0;
    }
    return static_cast<uint32_t>(block_segments(t, block).size());
}

uint32_t a_loads(const MatmulTiling& t, uint32_t block) {
    if (!t.a_slots) return block_items(t, block);
    const uint32_t split = std::max<uint32_t>(1, t.k_split);
    uint32_t loads = 0;
    uint64_t held = ~0ull;
    for (const WorkSeg& g : block_segments(t, block)) {
        const uint32_t tile = g.item / split, part = g.item % split;
        const TileCoord c = tile_coord(t, tile);
        const uint64_t key = (uint64_t{c.batch} * t.tiles_m + c.tm) * split + part;
        loads += key != held;
        held = key;
    }
    return loads;
}

TileCoord tile_coord(const MatmulTiling& t, uint32_t tile) {
    TileCoord c;
    const uint32_t per = t.tiles_m * t.tiles_n;
    c.batch = tile / per;
    uint32_t r = tile % per;
    const uint32_t gn = t.group_n ? std::min(t.group_n, t.tiles_n) : t.tiles_n;
    const uint32_t sc = r / (t.tiles_m * gn);                  // super-column
    const uint32_t width = std::min(gn, t.tiles_n - sc * gn);  // the last may be narrower
    r -= sc * t.tiles_m * gn;
    const uint32_t g = std::max<uint32_t>(1, t.group_m);
    const uint32_t s = r / (g * width);                    // group of tile rows
    const uint32_t rows = std::min(g, t.tiles_m - s * g);  // the last may be shorter
    const uint32_t q = r - s * g * width;
    c.tn = sc * gn + q / rows;
    c.tm = s * g + q % rows;
    return c;
}

void choose_tile_order(MatmulTiling& t, uint32_t in_es, uint32_t out_es, const DeviceInfo& dev) {
    t.group_m = 1, t.group_n = 0;
    const uint32_t w = std::max<uint32_t>(1, std::min(t.block_dim, t.tiles_m * t.tiles_n));
    if (dev.l2_bytes == 0 || t.tiles_m * t.tiles_n <= w) return;  // one wave: the order is moot
    const double a_panel = double(t.base_m) * t.k * in_es, b_panel = double(t.base_n) * t.k * in_es;
    const double c_tile = double(t.base_m) * t.base_n * out_es;
    const double wa = double(t.base_m) / (t.base_m + t.base_n), wb = 1.0 - wa;
    const double budget = 0.75 * double(dev.l2_bytes);
    double best = 2.0;
    // Super-columns only when even one row of tiles over all of B overflows the
    // budget (they re-read every A panel once per super-column).
    const bool narrow = a_panel + t.tiles_n * (b_panel + c_tile) > budget;
    for (uint32_t cn = t.tiles_n;; cn = (cn + 1) / 2) {
        for (uint32_t r = 1; r <= t.tiles_m; ++r) {
            const double ws = r * a_panel + cn * b_panel + double(r) * cn * c_tile;
            const double fa = std::min<double>(cn, std::max(1.0, double(w) / r)) / cn;
            const double fb = ws <= budget ? std::min<double>(r, t.tiles_m) / t.tiles_m : 1.0;
            const double wait = wa * fa + wb * fb;
            if (wait < best - 1e-12) best = wait, t.group_m = r, t.group_n = cn == t.tiles_n ? 0 : cn;
        }
        if (cn == 1 || !narrow) break;
    }
}

void choose_k_rotation(MatmulTiling& t, uint32_t in_es, uint32_t out_es, const DeviceInfo& dev) {
    t.k_rot = 1;
    const uint32_t nk = t.k_chunks();
    if (nk <= t.buffers || dev.l2_bytes == 0 || t.k_split > 1) return;
    const uint32_t w = std::max<uint32_t>(1, std::min(t.block_dim, t.tiles()));
    const uint32_t gn = t.group_n ? std::min(t.group_n, t.tiles_n) : t.tiles_n;
    const uint32_t rows = std::max<uint32_t>(1, std::min(t.group_m, t.tiles_m));
    // A wave of w tiles in the order spans w / rows columns of a group (each read by the rows
    // of the group), or, wider than a group, w / gn rows of each column.
    const uint32_t sa = std::min(gn, std::max<uint32_t>(1, (w + rows - 1) / rows));
    const uint32_t sb = std::min(t.tiles_m, std::max(rows, (w + gn - 1) / gn));
    // What one sharer brings must still be in L2 when the others reach it: the group's working
    // set (its A panels, B panels and outputs, as choose_tile_order counts it) must fit.
    const double ws = double(sb) * t.base_m * t.k * in_es + double(gn) * t.base_n * t.k * in_es +
                      double(sb) * gn * t.base_m * t.base_n * out_es;
    if (ws > 0.75 * double(dev.l2_bytes)) return;
    // A leading sharer brings its segment alone, through its own GM port; with every core
    // leading at once the chip then asks the HBM for w ports' worth. Beyond the HBM's rate the
    // leads queue there and front-load the panels' first reads at HBM speed, whereas lockstep
    // sharers split each line's fetch and overlap it with the cube: keep lockstep then.
    if (dev.core_gm_read_bytes_per_cycle > 0 && dev.gm_bytes_per_cycle > 0 &&
        w * dev.core_gm_read_bytes_per_cycle > dev.gm_bytes_per_cycle)
        return;
    t.k_rot = std::min(nk, std::max(sa, sb));
}

void choose_l2_prefetch(MatmulTiling& t, uint32_t in_es, uint32_t out_es, const DeviceInfo& dev, bool off) {
    t.pf_ahead = 0, t.pf_buf = 0, t.pf_aiv = 0;
    t.pf_marks.reset();
    if (off || dev.arch != "split" || dev.aiv_per_aic == 0 || dev.l2_bytes == 0 || dev.ub_bytes < 1024) return;
    // Blocks running at once, and the tiles they work on (split-K: k_split items per tile).
    const uint32_t blocks = std::max<uint32_t>(1, std::min(t.block_dim, t.items()));
    const uint32_t w = std::max<uint32_t>(1, blocks / t.k_split);
    // An LRU walk of the tile order over the tile order's L2 budget: A and B panels, and the
    // output tiles written (they stay in the write-back L2 until evicted). A panel is marked
    // for tile i when it (re)entered L2 at one of the w tiles up to i (those run at once).
    const double budget = 0.75 * double(dev.l2_bytes);
    const double a_panel = double(t.base_m) * t.k * in_es, b_panel = double(t.base_n) * t.k * in_es;
    const double c_tile = double(t.base_m) * t.base_n * out_es;
    std::list<std::pair<uint64_t, double>> lru;  // most recent first: key, bytes
    std::unordered_map<uint64_t, std::list<std::pair<uint64_t, double>>::iterator> where;
    std::unordered_map<uint64_t, uint32_t> entered;  // panel -> tile index it entered at
    double held = 0, brought = 0;  // bytes in the LRU; panel bytes that entered it
    auto touch = [&](uint64_t key, double bytes, uint32_t i) {
        auto it = where.find(key);
        if (it != where.end()) {
            lru.splice(lru.begin(), lru, it->second);
            return 0.0;
        }
        lru.emplace_front(key, bytes);
        where[key] = lru.begin();
        entered[key] = i;
        held += bytes;
        while (held > budget && lru.size() > 1) {
            held -= lru.back().second;
            where.erase(lru.back().first);
            lru.pop_back();
        }
        return bytes;
    };
    auto marks = std::make_shared<std::vector<uint8_t>>(t.tiles(), 0);
    const uint64_t na = uint64_t{t.batch} * t.tiles_m, nb = uint64_t{t.batch} * t.tiles_n;
    bool any = false;
    for (uint32_t i = 0; i < t.tiles(); ++i) {
        const TileCoord c = tile_coord(t, i);
        const uint64_t ka = uint64_t{c.batch} * t.tiles_m + c.tm, kb = na + uint64_t{c.batch} * t.tiles_n + c.tn;
        brought += touch(ka, a_panel, i) + touch(kb, b_panel, i);
        touch(na + nb + i, c_tile, i);
        const uint8_t m = static_cast<uint8_t>((entered[ka] + w > i ? 1 : 0) | (entered[kb] + w > i ? 2 : 0));
        (*marks)[i] = m;
        any = any || m;
    }
    if (!any) return;
    // Worth it only when what the cubes gain beats what the AIVs' start costs: the panel bytes
    // that enter L2 (each once, whichever sharer leads it; per block on average) come through the
    // AIVs' ports instead of a cube's own GM port (its cube then reads them at the L2 rate),
    // while the scheduler starts 1 + aiv_per_aic cores per block instead of one, delaying the
    // last block by aiv_per_aic core starts per block.
    if (dev.core_gm_read_bytes_per_cycle > 0 && dev.core_read_max_bytes_per_cycle > dev.core_gm_read_bytes_per_cycle) {
        const double per_byte = 1.0 / dev.core_gm_read_bytes_per_cycle - 1.0 / dev.core_read_max_bytes_per_cycle;
        const double gain = brought / blocks * per_byte;
        const double start_cost = double(blocks) * dev.aiv_per_aic * dev.core_start_cycles;
        if (gain <= start_cost) return;
    }
    // Lookahead: the blocks' prefetched chunks not yet read by their cubes stay within the
    // quarter of L2 the tile order's budget leaves.
    const double chunk = double(t.a1_bytes(in_es) + t.b1_bytes(in_es));
    const double ahead = 0.25 * double(dev.l2_bytes) / (double(blocks) * chunk);
    t.pf_ahead = static_cast<uint32_t>(std::max<double>(t.buffers + 1, std::min<double>(ahead, 1u << 20)));
    t.pf_buf = static_cast<uint32_t>(std::min<uint64_t>(dev.ub_bytes / 2, 64 * 1024) / 32 * 32);
    t.pf_aiv = dev.aiv_per_aic;
    t.pf_marks = std::move(marks);
}

double matmul_cost(const MatmulTiling& t, uint32_t in_es, uint32_t out_es, const DeviceInfo& dev) {
    const uint32_t blocks = std::max<uint32_t>(1, std::min(t.items(), t.block_dim));
    const double waves = (t.items() + blocks - 1) / blocks;
    // The k of one work item: the longest part of a split tile (all of k without split-K).
    uint32_t kp = t.k;
    if (t.k_split > 1) {
        uint32_t most = 0;
        for (uint32_t p = 0; p < t.k_split; ++p) most = std::max(most, t.part_begin(p + 1) - t.part_begin(p));
        kp = std::min<uint32_t>(t.k, most * t.k_l1);
    }
    const double macs = dev.cube_macs_fp16 > 0 ? dev.cube_macs_fp16 : 16.0 * 16 * 16;
    // The cube does an m0 x n0 step of its per-type depth per cycle (fp32: a quarter of the
    // fp16 depth, int8 twice it; DeviceInfo::cube_depth_of).
    const double depth = dev.cube_depth_of(in_es), mn0 = macs / std::max(1u, dev.cube_depth_16bit);
    const double cube = double(t.base_m) * t.base_n / mn0 * std::ceil(double(kp) / depth);
    // A and B are read by every tile of their row / column; they stay in L2 when
    // they fit.
    const double footprint = (double(t.m) * t.k + double(t.k) * t.n) * in_es * t.batch;
    const bool in_l2 = dev.l2_bytes > 0 && footprint <= double(dev.l2_bytes);
    const double core_rate = in_l2 ? dev.core_read_max_bytes_per_cycle : dev.core_gm_read_bytes_per_cycle;
    const double chip_rate = (in_l2 ? dev.mem_max_bytes_per_cycle : dev.gm_bytes_per_cycle) / blocks;
    const double rate =
        core_rate > 0 && chip_rate > 0 ? std::min(core_rate, chip_rate) : std::max(core_rate, chip_rate);
    // The port moves each request in whole cycles: a row-major operand costs
    // whole cycles per row segment (A rows of k_l1 (or, transposed, k_l1 rows of
    // base_m), B rows of base_n (or base_n rows of k_l1) elements per L1 chunk),
    // which makes narrow rows dearer than their bytes; NZ operands load as long
    // contiguous runs.
    double load = 0;
    if (rate > 0) {
        auto row = [&](double bytes) { return t.gm_nz ? bytes / rate : std::ceil(bytes / rate); };
        // With A resident (a_slots) only the items that change A rows load it: the busiest block's
        // share of them.
        const double a_share =
            t.a_slots ? double(a_loads(t, 0)) / std::max<uint32_t>(1, block_items(t, 0)) : 1.0;
        auto chunk = [&](uint32_t kc) {
            const double a =
                t.trans_a ? kc * row(double(t.base_m) * in_es) : t.base_m * row(double(kc) * in_es);
            const double b =
                t.trans_b ? t.base_n * row(double(kc) * in_es) : kc * row(double(t.base_n) * in_es);
            return a * a_share + b;
        };
        const uint32_t full = kp / t.k_l1, rest = kp % t.k_l1;
        load = full * chunk(t.k_l1) + (rest ? chunk(rest) : 0.0);
    }
    const double drain = dev.core_write_max_bytes_per_cycle > 0
                             ? double(t.base_m) * t.base_n * out_es / dev.core_write_max_bytes_per_cycle
                             : 0.0;
    // With one L0C buffer the next tile's first mad waits for the drain; the last
    // drain is always exposed. Atomic split-K adds zeroing C (a drain's worth of writes per
    // block); two-pass split-K the reduction: every slice read and C written once, over the
    // whole memory system (the slices are fresh in L2).
    double split = 0;
    if (t.two_pass()) {
        const double c_elems = double(t.batch) * t.m * t.n;
        const double bytes = c_elems * (4.0 * t.k_split + out_es);
        split = dev.mem_max_bytes_per_cycle > 0 ? bytes / dev.mem_max_bytes_per_cycle : 0.0;
    } else if (t.k_split > 1) {
        split = drain;
    }
    return waves * (std::max(cube, load) + (t.l0c_buffers == 1 ? drain : 0.0)) + drain + split;
}

MatmulTiling plan_matmul(uint32_t m, uint32_t n, uint32_t k, uint32_t in_es, uint32_t out_es,
                         const DeviceInfo& dev, uint32_t block_dim) {
    MatmulProblem pr;
    pr.m = m, pr.n = n, pr.k = k, pr.in_es = in_es, pr.out_es = out_es;
    return plan_matmul(pr, dev, block_dim);
}

namespace {
// A resident in L1 (MatmulTiling::a_slots) for the planned tile: its shape and L0C buffers stay;
// the fewest split-K parts from the plan's count up (a forced count: that count only) and, with
// them, the longest chunk (fit_k's, or when B is stored k x n, whose L1 rows are base_n long
// whatever the chunk, a shorter one) whose A part fits L1 beside the B chunks replace the plan if
// the estimate gains. The least change that makes A fit: not shorter chunks with B stored n x k
// (they would cut its row segments, k_l1 elements each), not other tile shapes and not more parts
// or shorter chunks than needed, since the estimate charges narrow rows and per-chunk and per-part
// costs too little to let the A loads residency saves decide those.
void keep_a_resident(MatmulTiling& best, double best_cost, const MatmulProblem& pr, const DeviceInfo& dev,
                     uint32_t block_dim) {
    const uint32_t cores = std::max<uint32_t>(1, dev.cube_cores);
    MatmulTiling t = best;
    const uint32_t k_fit = best.k_l1;
    const uint32_t k_min = pr.trans_b ? k_fit : t.base_k;
    t.k_l1 = k_min;
    const uint32_t most = split_limit(t, pr, dev, block_dim);  // the most parts any chunk allows
    const uint32_t first = pr.k_split ? most : std::max<uint32_t>(1, best.k_split);
    for (uint32_t split = first; split <= most; ++split) {
        for (uint32_t kl = k_fit;;) {
            t.k_l1 = kl;
            if (split <= split_limit(t, pr, dev, block_dim)) {
                t.k_split = split;
                t.block_dim = block_dim ? block_dim : std::min(t.items(), cores);
                t.a_slots = resident_slots(t, pr.in_es, dev);
                if (t.a_slots) {
                    if (matmul_cost(t, pr.in_es, pr.out_es, dev) < best_cost) best = t;
                    return;
                }
            }
            const uint32_t steps = kl / t.base_k;
            if (kl <= k_min || steps <= 1) break;
            kl = (uint32_t{1} << (31 - __builtin_clz(steps - 1))) * t.base_k;  // the power of two below
        }
    }
}
}  // namespace

MatmulTiling plan_matmul(const MatmulProblem& pr, const DeviceInfo& dev, uint32_t block_dim) {
    const uint32_t m = pr.m, n = pr.n, k = pr.k;
    if (m == 0 || n == 0 || k == 0 || pr.batch == 0)
        throw InputError("matmul: m, n, k and the batch must be positive");
    const uint32_t cores = std::max<uint32_t>(1, dev.cube_cores);
    // Transpose squares of int8 operands are 32 x 32: a transposed A pads m to
    // 32, a row-major (k x n) B pads n to 32; k rows of int8 tiles pad to 32
    // (K0).
    const bool i8 = pr.in_es == 1;
    const uint32_t am = i8 && pr.trans_a ? 32 : 16, an = i8 && !pr.trans_b ? 32 : 16, ak = i8 ? 32 : 16;
    MatmulTiling best;
    double best_cost = 0, best_bytes = 0;
    bool found = false;
    // On equal cost: fewer bytes loaded (bigger tiles; what counts when the
    // device gives no rates), then two L0C buffers, then wider tiles (longer
    // contiguous B rows).
    // A forced split-K count (MatmulProblem::k_split) first among the tiles whose k walk has that
    // many chunks; if none has, the most any has.
    uint32_t need = pr.k_split > 1 && split_limit_ok(pr, dev, block_dim) ? pr.k_split : 0;
    auto consider = [&](uint32_t bufs, uint32_t bm, uint32_t bn) {
        MatmulTiling t;
        t.m = m, t.n = n, t.k = k, t.batch = pr.batch;
        t.trans_a = pr.trans_a, t.trans_b = pr.trans_b;
        t.align_m = am, t.align_n = an, t.align_k = ak;
        t.l0c_buffers = bufs;
        t.gm_nz = dev.arch == "coupled" && pr.in_es == 2 && pr.batch == 1;
        t.base_m = std::min(bm, rup(m, am));
        t.base_n = std::min(bn, rup(n, an));
        // A bias row (n of B_e^T) or column (m of A_e) takes one 32-B block per element.
        if (pr.bias == BiasForm::Row || pr.bias == BiasForm::Scalar) t.b1_extra = t.base_n * 32;
        if (pr.bias == BiasForm::Col) t.a1_extra = t.base_m * 32;
        if (!c_fits(t, pr.out_es, dev) || !fit_k(t, pr.in_es, dev)) return;
        t.tiles_m = (m + t.base_m - 1) / t.base_m;
        t.tiles_n = (n + t.base_n - 1) / t.base_n;
        const uint32_t max_split = split_limit(t, pr, dev, block_dim);
        if (need && max_split < need) return;  // a forced count: tiles whose k has the chunks
        const uint32_t min_split = pr.k_split ? max_split : 1;
        t.split_mode = pr.split_mode;
        for (uint32_t split = min_split; split <= max_split; ++split) {
            t.k_split = split;
            t.block_dim = block_dim ? block_dim : std::min(t.items(), cores);
            const double cost = matmul_cost(t, pr.in_es, pr.out_es, dev);
            const double bytes = double(t.tiles_n) * m + double(t.tiles_m) * n;  // x k x in_es
            const bool tie = found && std::abs(cost - best_cost) <= 1e-9 * best_cost;
            if (!found || (!tie && cost < best_cost) || (tie && bytes < best_bytes))
                best = t, best_cost = cost, best_bytes = bytes, found = true;
        }
    };
    // The widest side (up to 256, a multiple of `a`) one L0C buffer of `bufs` holds beside `other`
    // rows / columns: with a side clamped to a small shape (m = 160 of a decode step), the
    // power-of-two sizes leave L0C partly empty and the other operand's panels re-read more often.
    auto fill = [&](uint32_t bufs, uint32_t other, uint32_t a) {
        const uint64_t fit = dev.l0c_bytes / (uint64_t{bufs} * other * 4) / a * a;
        return static_cast<uint32_t>(std::min<uint64_t>(fit, 256));
    };
    for (int pass = 0; pass < 2 && !found; ++pass, need = 0) {
        for (uint32_t bufs : {2u, 1u})
            for (uint32_t bn = 256; bn >= an; bn /= 2) {
                if (bn > rup(n, an) && bn / 2 >= rup(n, an)) continue;  // one clamped size per shape
                for (uint32_t bm = 256; bm >= am; bm /= 2) {
                    if (bm > rup(m, am) && bm / 2 >= rup(m, am)) continue;
                    consider(bufs, bm, bn);
                    // Sizes that fill L0C beside a side clamped to the shape (powers of two above are
                    // tried already; a fill is a power of two when the other side is).
                    const uint32_t cm = std::min(bm, rup(m, am)), cn = std::min(bn, rup(n, an));
                    // On an operand's contiguous side (B's n when row-major, A's m when stored
                    // transposed) only whole 256-B row segments: a ragged one splits L2 lines between
                    // tiles that run on different cores.
                    auto seg_ok = [&](uint32_t f, bool contiguous) { return !contiguous || f * pr.in_es % 256 == 0; };
                    if (bn == 256 && (cm & (cm - 1))) {
                        const uint32_t f = fill(bufs, cm, an);
                        if (f >= an && (f & (f - 1)) && seg_ok(f, !pr.trans_b)) consider(bufs, bm, f);
                    }
                    if (bm == 256 && (cn & (cn - 1))) {
                        const uint32_t f = fill(bufs, cn, am);
                        if (f >= am && (f & (f - 1)) && seg_ok(f, pr.trans_a)) consider(bufs, f, bn);
                    }
                }
            }
    }
    if (found && pr.a_resident_ok) keep_a_resident(best, best_cost, pr, dev, block_dim);
    if (!found)
        throw InputError(
            "matmul: L0C/L0A/L0B/L1 (or UB) too small for the "
            "smallest 16x16x16 tiles");
    best.nd2nz_instr = dev.arch != "coupled";
    // A resident: the cost counted the A loads of the row-major order, whose consecutive tiles of a
    // block share A rows; a swizzled order would trade that for L2 sharing it did not cost.
    if (!best.a_slots) choose_tile_order(best, pr.in_es, pr.out_es, dev);
    choose_k_rotation(best, pr.in_es, pr.out_es, dev);
    choose_l2_prefetch(best, pr.in_es, pr.out_es, dev);
    choose_balance(best, pr.in_es, pr.out_es, dev);
    return best;
}

}  // namespace sfumato::ops
