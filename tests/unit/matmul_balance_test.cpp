// The balanced split of atomic split-K work over the blocks (MatmulTiling::unit_begin,
// choose_balance): every unit (one k chunk of one tile) runs exactly once, segments stay inside
// one split-K part of one tile, only the first blocks zero C, and the blocks that start later
// (the scheduler starts MIX blocks (1 + AIVs) x core_start_cycles apart) take fewer units.
#include <algorithm>
#include <catch2/catch.hpp>
#include <vector>

#include "cube_matmul_fixture.h"
#include "runtime/ops/matmul_tiling.h"

using namespace sfumato;
using namespace sfumato::ops;
using sfumato::test::split_910b_like;

namespace {

struct Split {
    std::vector<uint64_t> units;  // per block
    std::vector<bool> zeroes;     // runs some tile's first chunk
};

// Checks the segments cover every unit once, each inside its part; returns the per-block figures.
Split check_cover(const MatmulTiling& t) {
    const uint32_t split = std::max<uint32_t>(1, t.k_split);
    std::vector<uint32_t> seen(uint64_t{t.tiles()} * t.k_chunks(), 0);
    Split s;
    for (uint32_t b = 0; b < t.block_dim; ++b) {
        uint64_t n = 0;
        bool z = false;
        for (const WorkSeg& g : block_segments(t, b)) {
            const uint32_t tile = g.item / split, part = g.item % split;
            REQUIRE(tile < t.tiles());
            REQUIRE(g.c_lo < g.c_hi);
            REQUIRE(g.c_hi <= t.part_chunks(part));
            for (uint32_t c = g.c_lo; c < g.c_hi; ++c)
                ++seen[uint64_t{tile} * t.k_chunks() + t.part_begin(part) + c];
            n += g.c_hi - g.c_lo;
            z = z || (part == 0 && g.c_lo == 0);
        }
        s.units.push_back(n);
        s.zeroes.push_back(z);
    }
    CHECK(std::all_of(seen.begin(), seen.end(), [](uint32_t v) { return v == 1; }));
    return s;
}

}  // namespace

// 160 x 4096 x 8192 fp16 on the 910B-like part's figures (M = 160 of a decode step against a
// row-major weight): atomic split-K with A resident and the AIVs' L2 prefetch (a MIX launch).
TEST_CASE("matmul balance: atomic split-K units cover the work once, later blocks take less") {
    DeviceInfo d = split_910b_like(2);
    d.core_start_cycles = 360;
    const MatmulTiling t = plan_matmul(160, 4096, 8192, 2, 2, d);
    REQUIRE(t.k_split > 1);
    REQUIRE(!t.two_pass());
    REQUIRE(t.pf_ahead > 0);
    REQUIRE(t.unit_begin);
    const Split s = check_cover(t);
    // The blocks that zero C are the first ones (they hold part 0), so the barrier the atomic
    // adds wait for does not wait for the last block's start.
    const auto last_zero = std::find(s.zeroes.rbegin(), s.zeroes.rend(), true);
    const uint32_t zeroers = static_cast<uint32_t>(s.zeroes.rend() - last_zero);
    CHECK(zeroers < t.block_dim / 2);
    for (uint32_t b = 0; b < zeroers; ++b) CHECK(s.zeroes[b]);
    // Among the blocks that zero nothing, a later start means no more units, up to the rounding
    // and one segment's drain (at most one unit of cube time here) between neighbours.
    for (uint32_t b = zeroers + 1; b < t.block_dim; ++b) CHECK(s.units[b] <= s.units[b - 1] + 1);
    // The last block starts 23 MIX gaps after the first: it takes clearly less than the first
    // block that zeroes nothing; whole items round robin gave both the same.
    const uint64_t per = uint64_t{t.tiles()} * t.k_chunks() / t.block_dim;
    CHECK(s.units.back() + per / 4 < s.units[zeroers]);
}

TEST_CASE("matmul balance: without a start stagger whole items round robin are kept") {
    // 192 items on 24 blocks that start together: round robin already ends every block at once
    // (up to the zeroing of the first blocks), so the fluid model finds no unit's step to gain
    // and the plan keeps the neighbouring tiles round robin runs at once.
    DeviceInfo d = split_910b_like(2);
    d.core_start_cycles = 0;
    const MatmulTiling t = plan_matmul(160, 4096, 8192, 2, 2, d);
    REQUIRE(t.k_split > 1);
    REQUIRE(t.items() % t.block_dim == 0);
    CHECK(!t.unit_begin);
    check_cover(t);
}

TEST_CASE("matmul balance: plans without atomic split-K keep whole items round robin") {
    DeviceInfo d = split_910b_like(2);
    d.core_start_cycles = 360;
    const MatmulTiling big = plan_matmul(4096, 4096, 4096, 2, 4, d);
    CHECK(big.k_split == 1);
    CHECK(!big.unit_begin);
    MatmulProblem pr;
    pr.m = 160, pr.n = 4096, pr.k = 8192, pr.in_es = 2, pr.out_es = 4;
    pr.split_mode = SplitKMode::TwoPass;
    const MatmulTiling tp = plan_matmul(pr, d);
    CHECK(!tp.unit_begin);
    for (const MatmulTiling* t : {&big, &tp}) {
        const uint32_t split = std::max<uint32_t>(1, t->k_split);
        for (uint32_t b = 0; b < t->block_dim; b += 5) {
            uint32_t i = b;
            for (const WorkSeg& g : block_segments(*t, b)) {
                CHECK(g.item == i);
                CHECK(g.c_lo == 0);
                CHECK(g.c_hi == t->part_chunks(g.item % split));
                i += t->block_dim;
            }
            CHECK(i >= t->items());
        }
    }
}
