// The cube matmul kernel's walk (runtime/ops/cube_matmul.h): which chunk of which output tile a
// block works on at each step, where each chunk's operands sit in GM, and what the block's AIVs
// read ahead into L2. Independent of the element types (only their size matters), so the
// kernel's instantiations share one copy.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "runtime/ops/cube_matmul.h"

namespace sfumato::ops {

class CubeWalk {
public:
    // es: bytes of an A/B element; block: the block whose work this is.
    CubeWalk(const CubeMatmulPlan& p, uint32_t es, uint32_t block);

    struct Step {
        bool valid = false;
        uint32_t seg = 0;                       // the block's segment (block_segments)
        uint32_t item = 0, tile = 0, part = 0;  // work item = (tile in the order, split-K part)
        uint32_t nk = 0;                        // chunks of the segment's k walk
        uint32_t kidx = 0, k0 = 0;  // kidx: position in the segment's k walk (see k_rot)
        bool tile_first = false;    // the tile's first chunk (part 0, its walk's first position)
        uint32_t m0 = 0, n0 = 0, tm = 0, tn = 0, kc = 0;
        uint64_t ao = 0, bo = 0, co = 0;  // batch offsets (elements)
    };
    Step at(uint32_t seg, uint32_t kidx) const;
    Step next(const Step& s) const;
    const std::vector<WorkSeg>& segs() const { return m_segs; }
    // The bias enters once per tile: with split-K, through the first part (the segment that
    // holds its first chunk).
    bool has_bias(const Step& s) const { return m_p.bias_form != BiasForm::None && s.tile_first; }
    uint32_t m_pad(const Step& s) const;
    uint32_t n_pad(const Step& s) const;
    uint32_t k_rows_pad(uint32_t kc) const;

    static constexpr uint32_t kA1Token = 32;  // bytes of an A1 order token (A resident)
    uint64_t a1_stride() const;
    // The A1 key slot of a step's chunk: its L1 slot when A is resident, else the A1 buffer the
    // queue gives the p-th load of the block's walk (buffers taken in turn).
    size_t a1_slot(const Step& s, uint32_t p) const;

    // What an L1 buffer holds (batch offset, first row or column, k chunk and bias bit).
    using Key = std::array<uint64_t, 3>;
    // Records what a buffer is about to hold; true when that differs from what it held.
    static bool swap_key(std::optional<Key>& held, const Key& k);

    // The NZ runs of a step's chunk of A or B as stored (gm_nz): the stored matrix's rows, the
    // first row and column, the column groups and the rows per group. The L1 tile is then the
    // one the ND path builds (load_nz of the stored rows x columns), so the L1 -> L0 moves are
    // the same: a transposed operand (A stored k x m, B stored n x k) is the NZ of its stored
    // matrix, as a framework's format conversion leaves it.
    struct NzRun {
        uint32_t rows = 0, r0 = 0, c0 = 0, groups = 0, rows_pad = 0;
    };
    NzRun nz_run_a(const Step& s) const;
    NzRun nz_run_b(const Step& s) const;

    // Split-K: whether a block's segments zero any tile of C (they hold a tile's first chunk).
    static bool zeroes(const std::vector<WorkSeg>& segs, uint32_t split);

    // ---- L2 prefetch by the AIVs (see MatmulTiling::pf_ahead) ----
    struct PfItem {
        uint32_t p = 0;  // step index in the block's walk
        Step s;
        bool b = false;  // B (else A)
    };
    // What the block's AIVs read ahead, in walk order: the chunks of marked panels in the tile's
    // lead segment, past the first `buffers` steps (the cube loads those at once itself).
    std::vector<PfItem> pf_items() const;
    // Completed cube loads an AIV waits for: item p needs steps [0, p - pf_ahead] loaded; every
    // AIV takes all of them (the last item's), so the cube sets exactly as many as each waits.
    static uint32_t pf_signals(const std::vector<PfItem>& v, uint32_t pf_ahead);
    // The GM bytes an item's load reads, as row segments: first element, rows, bytes per row,
    // row stride in elements.
    struct Region {
        uint64_t at = 0;
        uint32_t rows = 0, len = 0;
        uint64_t ld = 0;
    };
    Region pf_region(const PfItem& it) const;
    // The AIV that reads each item: the one with the fewest bytes so far (ties: the lower index).
    std::vector<uint32_t> pf_owners(const std::vector<PfItem>& items) const;

private:
    const CubeMatmulPlan& m_p;
    const MatmulTiling& m_t;
    uint32_t m_es;
    std::vector<WorkSeg> m_segs;  // this block's work (block_segments)
};

}  // namespace sfumato::ops
