// Host tiling of the cube matmul C (m x n) = A (m x k) x B (k x n), batched: output tiles of
// base_m x base_n (one L0C buffer each), k walked in L1 chunks of k_l1 and, inside a chunk,
// in L0 steps of base_k. L1 (A1/B1) and L0A/L0B are double buffered; L0C (and, on coupled
// parts, the UB tile it drains into) holds one or two tiles. The output tile is chosen by a
// cost estimate from the device's parameters, as a vendor tiling function does from its
// platform info: a tile costs max(cube cycles, A+B load cycles at the per-core read rate (or
// the chip's share of the memory system), whole port cycles per row segment of a row-major
// operand) plus, with a single L0C buffer, its drain; the plan minimises waves x tile cost. A
// big tile halves the GM bytes per MAC (each A row panel and B column panel is read once per
// tile), so large shapes take the largest tile L0C holds even single-buffered; small shapes
// keep many tiles for the cores. The other sizes are the largest steps that fit. Output tiles
// (over every batch) are spread over block_dim = min(tiles, cube cores) blocks, round robin,
// in a swizzled order (see group_m). Element types: fp16/bf16 (K0 = 16), fp32 (K0 = 8, the
// cube's fp32 mode), int8 (K0 = 32); transposed operands pad their L1 tiles to the transpose
// squares (int8: 32). Split-K (k_split): when there are few output tiles (up to eight work
// items per cube core; the cost estimate decides) the k walk of each tile is cut into parts that
// run on different cores and add their partial sums into C with the FixPipe's atomic add (C
// zeroed first by the kernel) or, two-pass (SplitKMode), write them to workspace slices that a
// vector kernel adds in a fixed order, so that small-M (GEMV-like, M = 1-160) and small-M*N
// large-K shapes keep every core streaming its operands. Besides the power-of-two tile sides,
// the widest side that fills L0C beside a side clamped to a small shape is tried. A resident in
// L1 (a_slots): when a block's items share A rows (small M), its A part stays in L1 across them.
// Simplified: no L1 reuse of a B panel across output tiles, no split-K on coupled parts (their
// drain goes through UB).
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "isa/dtype.h"
#include "sim/device_if.h"

namespace sfumato::ops {

// The bias operand of a fused bias (see cube_matmul.h): added as one extra K0-deep mad per tile.
enum class BiasForm : uint8_t { None, Row, Col, Scalar };

// How split-K parts combine (MatmulTiling::k_split). Atomic: every part adds its partial sum into
// C with the FixPipe's atomic add (C zeroed first, all blocks meet at a barrier); on a chip the
// order of the adds, and so the rounding of a float result, varies from run to run. TwoPass:
// part p writes its fp32 partial sum to slice p of a GM workspace (no zeroing, no barrier) and a
// vector kernel adds the slices in part order and casts once: the same bits whatever the block
// count or the order the parts ran in. Integer (int32) sums are exact in either form.
enum class SplitKMode : uint8_t { Atomic, TwoPass };
const char* split_k_mode_name(SplitKMode m);
// "atomic" | "two-pass"; false for anything else.
bool parse_split_k_mode(const std::string& s, SplitKMode& m);

// What the planner needs to know beyond m, n, k.
struct MatmulProblem {
    uint32_t batch = 1, m = 0, n = 0, k = 0;
    uint32_t in_es = 2, out_es = 4;  // element sizes: 1 (int8), 2 (fp16/bf16), 4 (fp32)
    bool trans_a = false, trans_b = false;  // A stored k x m, B stored n x k
    BiasForm bias = BiasForm::None;
    // Split-K allowed (partial sums added into C): not with a ReLU in the FixPipe, which must
    // see the whole sum.
    bool split_k_ok = true;
    // A resident in L1 allowed (MatmulTiling::a_slots): not for a caller that walks the tiles its
    // own way (the grouped matmul's groups).
    bool a_resident_ok = true;
    SplitKMode split_mode = SplitKMode::Atomic;
    // Parts to cut each tile's k walk into: 0 = the cost model's choice; n forces n (at most the
    // L1 chunks of k; 1 = no split-K).
    uint32_t k_split = 0;
};

struct MatmulTiling {
    uint32_t m = 0, n = 0, k = 0;
    uint32_t batch = 1;  // independent matmuls (broadcast batch dims), tiled alike
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
    // A transposed operand is the NZ of the matrix as stored (A k x m, B n x k): its L1 tile is
    // the one the ND path builds, with runs of whole fractal columns instead of a 32-B burst per
    // row and column group (which left a coupled part's transposed loads bound by its MTE2's
    // requests in flight, each carrying 32 B).
    bool gm_nz = false;
    // Tile order (block swizzle): the tiles of one batch are taken in super-columns of group_n
    // tile columns; inside one, in groups of group_m tile rows, column by column inside a group
    // (group_m = 1, group_n = tiles_n: row-major). The tiles running at once on the cores then
    // share A row panels and B column panels, and a group's working set stays in L2. The plan
    // picks the order that leaves the fewest loads waiting on HBM (see choose_tile_order).
    uint32_t group_m = 1;
    uint32_t group_n = 0;  // 0 = tiles_n
    // K rotation: tiles that run at once and share an A row panel or a B column panel would walk
    // k in lockstep, so every first read of a panel's chunk is a miss all of them wait for (a
    // merged miss waits the whole HBM latency, and an MTE2's bounded requests in flight then cap
    // its rate). Instead tile (tm, tn) starts its k walk at chunk ((tm + tn) % k_rot) * nk /
    // k_rot of its nk chunks and wraps: each sharer first reads its own segment and finds the
    // others' segments in L2, brought by the sharer that led them. k_rot = 1: every tile starts
    // at k = 0. Chosen by choose_k_rotation from the tile order and the cores.
    uint32_t k_rot = 1;
    // L2 prefetch by the vector cores (split parts: the kernel runs MIX, one AIC and its AIVs per
    // block). A core's MTE2 has a bounded number of requests in flight and an L2 miss's data
    // returns through the requesting core's GM port, so a cube core that misses waits: its cold
    // panels arrive at its GM port's rate. The block's AIVs, idle in a matmul, read ahead of their
    // cube the chunks it is about to miss (into a UB scratch buffer they never use), through their
    // own ports; the cube's loads of those chunks then hit L2 (or join a fill already in flight).
    // What is about to miss: a chunk of a panel the tile order brings into L2 within the current
    // wave (pf_marks, from an LRU walk of the order over the tile order's L2 budget), and with k
    // rotation only the sharer's own lead segment of it (the other sharers bring theirs).
    // pf_ahead: how many steps (k chunks of the block's walk) an AIV may run ahead of the cube's
    // completed loads, bounded by a quarter of L2 over the blocks (what the tile order leaves
    // free); 0 = off. The cube signals each completed load with a cross-core flag.
    uint32_t pf_ahead = 0;
    uint32_t pf_buf = 0;  // UB scratch bytes of an AIV
    uint32_t pf_aiv = 0;  // AIVs per block sharing the reads
    // Per tile in the order (see tile_coord): bit 0 its A row panel, bit 1 its B column panel
    // enters L2 within the tile's wave.
    std::shared_ptr<const std::vector<uint8_t>> pf_marks;
    // Chunks of a tile's k walk it leads (reads first among the sharers of a panel): all of k
    // without rotation.
    uint32_t pf_lead() const {
        const uint32_t r = std::max<uint32_t>(1, std::min(k_rot, k_chunks()));
        return (k_chunks() + r - 1) / r;
    }
    bool trans_a = false, trans_b = false;  // A stored k x m, B stored n x k
    // Padding granules of the L1 tiles: m and n rows, and k rows of a k-row-major tile (16; 32
    // for the int8 transpose squares).
    uint32_t align_m = 16, align_n = 16, align_k = 16;
    // Extra L1 bytes per A1 / B1 buffer for a bias operand (a column of m, or a row of n).
    uint32_t a1_extra = 0, b1_extra = 0;
    // Split-K: each tile's k chunks are cut into k_split parts of consecutive chunks (part p:
    // chunks [part_begin(p), part_begin(p + 1))); the work items are (tile, part) pairs, item i
    // = part i % k_split of the i / k_split-th tile in the order, spread over the blocks round
    // robin; no k rotation. split_mode Atomic: the kernel zeroes C, all blocks meet at a barrier
    // (so block_dim is at most the cube cores: every block resident) and each part adds its
    // partial sum into C with the FixPipe's atomic add. TwoPass: part p drains its fp32 partial
    // sum to workspace slice p (the caller's; see two_pass()), a vector kernel reduces them.
    uint32_t k_split = 1;
    SplitKMode split_mode = SplitKMode::Atomic;
    // A resident in L1 (a_slots > 0): L1 holds every A chunk of a work item's k walk, one slot per
    // chunk (a_slots = the most chunks an item walks), instead of `buffers` A1 buffers; a block's
    // next item on the same A rows (same batch, tile row and split-K part, see a_loads) finds them
    // there and loads only B. Small-M shapes are the case: every tile shares the one A row panel,
    // and split-K gives each block items of one k part. Chosen by the cost estimate when the
    // slots and the double-buffered B chunks fit L1 (with k_l1 as long as that allows), every
    // item walks at least `buffers` chunks (a slot is rewritten only after the loads' double
    // buffering has retired its last reader) and the blocks' items share A rows.
    uint32_t a_slots = 0;
    // Balanced split (atomic split-K only; see choose_balance): the work is cut into units, one k
    // chunk of one item, ordered part by part (all tiles' chunks of part 0 in the tile order,
    // then part 1, ...), and block b takes the contiguous units [unit_begin[b], unit_begin[b +
    // 1]) instead of whole items round robin; a run of units inside one item is a segment, which
    // adds its partial sum into C like a part. The blocks of a launch start one after another
    // (the scheduler's serial core starts), so the shares are weighted by start: every block
    // should finish at the same time. Null: whole items round robin.
    std::shared_ptr<const std::vector<uint64_t>> unit_begin;
    uint32_t part_chunks(uint32_t p) const {
        return k_split > 1 ? part_begin(p + 1) - part_begin(p) : k_chunks();
    }
    // L1 slot of a chunk of A (a_slots > 0): its index within the item's part.
    uint32_t a_slot(uint32_t part, uint32_t chunk) const {
        return chunk - (k_split > 1 ? part_begin(part) : 0);
    }
    bool two_pass() const { return k_split > 1 && split_mode == SplitKMode::TwoPass; }
    uint32_t items() const { return tiles() * k_split; }
    uint32_t part_begin(uint32_t p) const {
        return static_cast<uint32_t>(uint64_t{p} * k_chunks() / std::max<uint32_t>(1, k_split));
    }
    uint32_t tiles() const { return batch * tiles_m * tiles_n; }
    uint32_t k_chunks() const { return k_l1 ? (k + k_l1 - 1) / k_l1 : 1; }
    // The chunk a tile's k walk starts at (see k_rot).
    uint32_t k_start(uint32_t tm, uint32_t tn) const {
        const uint32_t r = std::max<uint32_t>(1, std::min(k_rot, k_chunks()));
        return static_cast<uint32_t>(uint64_t{(tm + tn) % r} * k_chunks() / r);
    }
    // The chunk at position i of tile (tm, tn)'s k walk.
    uint32_t k_chunk(uint32_t tm, uint32_t tn, uint32_t i) const { return (k_start(tm, tn) + i) % k_chunks(); }
    // Bytes each queue needs per buffer.
    uint64_t a1_bytes(uint32_t es) const { return uint64_t{base_m} * k_l1 * es + a1_extra; }
    uint64_t b1_bytes(uint32_t es) const { return uint64_t{k_l1} * base_n * es + b1_extra; }
    uint64_t a2_bytes(uint32_t es) const { return uint64_t{base_m} * base_k * es; }
    uint64_t b2_bytes(uint32_t es) const { return uint64_t{base_k} * base_n * es; }
    uint64_t c1_bytes() const { return uint64_t{base_m} * base_n * 4; }
    // UB row stride (elements) of a drained tile with tn columns of out_es bytes: whole 32 B.
    static uint32_t ub_row(uint32_t tn, uint32_t out_es) { return (tn * out_es + 31) / 32 * 32 / out_es; }
    uint64_t c2_bytes(uint32_t out_es) const { return uint64_t{base_m} * ub_row(base_n, out_es) * out_es; }
};

// A block's share of the work, in walk order: chunks [c_lo, c_hi) of work item `item` (relative to
// the start of its split-K part; with k rotation, positions in the tile's k walk). Whole items
// round robin (item = block, block + block_dim, ...), or the block's units (unit_begin).
struct WorkSeg {
    uint32_t item = 0, c_lo = 0, c_hi = 0;
};
std::vector<WorkSeg> block_segments(const MatmulTiling& t, uint32_t block);

// Work items (segments) of a block (block < block_dim) and how many of them load A (an item loads A unless
// A is resident, a_slots > 0, and the block's previous item read the same A rows: same batch,
// tile row and split-K part). Without residency every item loads A.
uint32_t block_items(const MatmulTiling& t, uint32_t block);
uint32_t a_loads(const MatmulTiling& t, uint32_t block);

// Estimated cycles of one block's work under a tiling (the plan's objective; see above).
// Zero device rates (a DeviceInfo without memory figures) leave out that term.
double matmul_cost(const MatmulTiling& t, uint32_t in_es, uint32_t out_es, const DeviceInfo& dev);

// Plans a matmul of fp16/bf16 inputs (in_es bytes) and out_es-byte outputs on `dev`;
// block_dim 0 = automatic. Throws InputError when the buffers cannot hold the smallest tiles.
MatmulTiling plan_matmul(uint32_t m, uint32_t n, uint32_t k, uint32_t in_es, uint32_t out_es,
                         const DeviceInfo& dev, uint32_t block_dim = 0);
MatmulTiling plan_matmul(const MatmulProblem& pr, const DeviceInfo& dev, uint32_t block_dim = 0);

// Picks group_m / group_n for a planned tiling. A tile reads its A row panel (base_m x k) and B
// column panel (k x base_n); a read of a line another core is still fetching waits for the HBM
// as a miss does. Run column by column in groups of R tile rows with W tiles in flight, an A
// panel is first read by the min(C, W / R) tiles of a group's first wave (of the C = group_n
// that read it): those reads wait; a B panel is first read by the R tiles of its first group,
// and again in every group unless the group's working set (R A panels, C B panels, the R x C
// output tiles it writes) stays in L2, taken as at most 3/4 of it (LRU over hashed slices
// keeps a cyclic working set of about that much). The order minimises the waiting share of the
// loads (A and B weighted by their bytes per tile) over R, with C = tiles_n unless one row of
// tiles overflows the budget (then also C = tiles_n / 2^i, super-columns re-reading A).
void choose_tile_order(MatmulTiling& t, uint32_t in_es, uint32_t out_es, const DeviceInfo& dev);

// Picks k_rot for a planned tiling and tile order: the most tiles that run at once (block_dim
// blocks over the order of group_m / group_n) and read one A panel (the columns a wave spans in
// a row) or one B panel (the rows of a group), at most the chunks of k. Those tiles get distinct
// start chunks (tm + tn differs along a row and down a column). None when the L1 buffers hold
// every chunk of k (a core's next tile then reuses the chunks of a panel it shares with the
// previous one, same chunk in the same buffer, which a different start would throw away), and
// none unless the group's working set fits the L2 budget of choose_tile_order (a segment one
// sharer brought must still be in L2 when the others reach it; lockstep sharers instead need
// only the current chunk, which suits an L2 that cannot hold the panels), and none when the
// running blocks' GM ports together exceed the HBM rate (the leads would queue at the HBM).
void choose_k_rotation(MatmulTiling& t, uint32_t in_es, uint32_t out_es, const DeviceInfo& dev);

// Picks pf_ahead / pf_marks for a planned tiling, tile order and k rotation (see pf_ahead): on split
// parts with AIVs and an L2, unless `off`.
void choose_l2_prefetch(MatmulTiling& t, uint32_t in_es, uint32_t out_es, const DeviceInfo& dev, bool off = false);

// Picks unit_begin for a planned atomic split-K tiling (after choose_l2_prefetch, which decides
// whether the launch is MIX). The scheduler starts blocks one after another, (1 + AIVs per block)
// x core_start_cycles apart, and whole items round robin give the last block as much work as
// the first, so the first blocks finish early and the last ones run alone at their cube's rate
// while the HBM idles. A fluid model of the launch sets the shares instead: block b runs from
// its start s_b; while N blocks run each advances at min(one block's own rate: max(cube, its
// ports' load time) per unit, the HBM's rate / (N x bytes per unit)); block b's share is the work
// W(T) - W(s_b) that puts every block's end at the same T, each block's fixed costs (zeroing its
// tiles, a drain per segment) counted as work. The same model run to the end keeps round robin
// unless the balanced split ends at least one unit's step earlier (round robin's blocks run
// neighbouring tiles at once). `off`: round robin.
void choose_balance(MatmulTiling& t, uint32_t in_es, uint32_t out_es, const DeviceInfo& dev,
                    bool off = false);

// The cube's k step for an element size (32 B of k per fractal row).
inline uint32_t cube_k0_of(uint32_t es) { return 32 / es; }
// Tile coordinates of the i-th tile in the plan's order (see group_m).
struct TileCoord {
    uint32_t batch = 0, tm = 0, tn = 0;
};
TileCoord tile_coord(const MatmulTiling& t, uint32_t tile);

}  // namespace sfumato::ops
