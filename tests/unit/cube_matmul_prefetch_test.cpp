// The cube matmul's L2 prefetch by the AIVs of a split part, without the chip model: which
// tiles' panels the plan marks and when it is off, the AIVs' instruction streams (they read only
// what the cube loads too, wait for as many completed cube loads as the cube signals) and their
// share of the prefetch by bytes.
#include "runtime/ops/cube_matmul.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <random>
#include <set>

#include "cube_matmul_fixture.h"
#include "kapi_sink.h"

using namespace sfumato;
using namespace sfumato::ops;
using sfumato::isa::DType;
using sfumato::isa::Pos;
using sfumato::kernel::test::KapiSink;
using sfumato::test::split_910b_like;
using sfumato::test::tiny;
using sfumato::test::Case;
using sfumato::test::run_case;

// The AIVs' L2 prefetch (MatmulTiling::pf_ahead): which tiles' panels the plan marks, when it is
// off, and the kernel's streams: the AIVs read only row segments the cube loads too, wait for
// exactly as many completed cube loads as the cube signals, and the cube's numbers stand.
TEST_CASE("cube matmul: L2 prefetch by the AIVs of a split part") {
    const DeviceInfo d = split_910b_like(2);
    {
        // 4096^3: A, B and C (128 MiB at fp16 in, fp32 out) fit the budget, nothing is evicted: a panel is marked exactly for the tiles within one wave of its first reader.
        const MatmulTiling t = plan_matmul(4096, 4096, 4096, 2, 4, d);
        REQUIRE(t.pf_ahead > 0);
        REQUIRE(t.pf_marks);
        REQUIRE(t.pf_marks->size() == t.tiles());
        CHECK(t.pf_aiv == d.aiv_per_aic);
        CHECK(t.pf_ahead > t.buffers);
        const double chunk = double(t.a1_bytes(2) + t.b1_bytes(2));
        CHECK(double(t.block_dim) * t.pf_ahead * chunk <= 0.25 * double(d.l2_bytes));
        CHECK(t.pf_lead() * std::min(t.k_rot, t.k_chunks()) >= t.k_chunks());
        std::map<uint32_t, uint32_t> first_a, first_b;
        uint32_t marked = 0;
        for (uint32_t i = 0; i < t.tiles(); ++i) {
            const TileCoord c = tile_coord(t, i);
            first_a.emplace(c.tm, i), first_b.emplace(c.tn, i);
            const uint8_t m = (*t.pf_marks)[i];
            INFO("tile " << i);
            CHECK(((m & 1) != 0) == (first_a[c.tm] + t.block_dim > i));
            CHECK(((m & 2) != 0) == (first_b[c.tn] + t.block_dim > i));
            if (i < t.block_dim) CHECK(m == 3);
            marked += m != 0;
        }
        CHECK(marked < t.tiles());
        // Off: asked to, coupled parts (no AIVs), no L2.
        MatmulTiling o = t;
        choose_l2_prefetch(o, 2, 4, d, true);
        CHECK(o.pf_ahead == 0);
        CHECK(!o.pf_marks);
        DeviceInfo coupled = d;
        coupled.arch = "coupled", coupled.aiv_per_aic = 0;
        CHECK(plan_matmul(4096, 4096, 4096, 2, 4, coupled).pf_ahead == 0);
        DeviceInfo no_l2 = d;
        no_l2.l2_bytes = 0;
        CHECK(plan_matmul(4096, 4096, 4096, 2, 4, no_l2).pf_ahead == 0);
        // Only where the cubes gain more than the AIVs' start costs: A and B (fitting L2) each
        // enter it once; per block, their bytes come at the L2 rate instead of the GM port's,
        // against aiv_per_aic more core starts per block.
        DeviceInfo starts = d;
        starts.core_start_cycles = 360;
        bool some_on = false, some_off = false;
        for (uint32_t sz : {1024u, 2048u, 4096u}) {
            const MatmulTiling u = plan_matmul(sz, sz, sz, 2, 4, starts);
            const double gain = 2.0 * sz * sz * 2 / u.block_dim * (1.0 / 32 - 1.0 / 110);
            const double cost = double(u.block_dim) * 2 * 360;
            INFO("size " << sz << " gain " << gain << " cost " << cost);
            CHECK((u.pf_ahead > 0) == (gain > cost));
            some_on = some_on || u.pf_ahead > 0, some_off = some_off || u.pf_ahead == 0;
        }
        CHECK(some_on);
        CHECK(some_off);
    }
    // The kernel on a small split part with an L2: several tiles per block, several chunks per
    // tile, ragged and transposed shapes.
    DeviceInfo s = tiny();
    s.aiv_per_aic = 2, s.vector_cores = 4;
    s.l2_bytes = 1 << 20;
    struct Shape {
        uint32_t m, n, k;
        bool ta, tb;
        DType in;
    };
    for (const Shape& sh : {Shape{256, 256, 512, false, false, DType::FP16}, Shape{100, 70, 333, true, false, DType::FP32},
                            Shape{96, 130, 200, false, true, DType::BF16}}) {
        INFO("shape " << sh.m << "x" << sh.n << "x" << sh.k);
        Case c;
        c.m = sh.m, c.n = sh.n, c.k = sh.k, c.ta = sh.ta, c.tb = sh.tb, c.in = sh.in;
        CHECK(run_case(c, s, isa::CoreKind::Cube) <= 1.0);
        const uint32_t es = isa::dtype_size(sh.in);
        MatmulProblem pr;
        pr.m = sh.m, pr.n = sh.n, pr.k = sh.k, pr.in_es = es, pr.out_es = 4, pr.trans_a = sh.ta, pr.trans_b = sh.tb;
        pr.split_k_ok = false;  // as run_case
        CubeMatmulPlan p;
        p.t = plan_matmul(pr, s);
        REQUIRE(p.t.pf_ahead > 0);
        p.in = sh.in;
        p.lda = sh.ta ? sh.m : sh.k, p.ldb = sh.tb ? sh.k : sh.n, p.ldc = sh.n;
        p.a = 0x1000, p.b = 0x100000, p.c = 0x200000;
        size_t prefetched = 0;
        for (uint32_t blk = 0; blk < p.t.block_dim; ++blk) {
            KapiSink cube(isa::CoreKind::Cube);
            cube.set_block(blk, p.t.block_dim);
            cube.set_buffer(Pos::L1, s.l1_bytes);
            cube.set_buffer(Pos::L0A, s.l0a_bytes);
            cube.set_buffer(Pos::L0B, s.l0b_bytes);
            cube.set_buffer(Pos::L0C, s.l0c_bytes);
            run_cube_matmul(cube, p);
            CHECK(cube.errors().empty());
            std::vector<isa::Extent> loads;
            for (const isa::Instr& in : cube.instrs()) {
                isa::Extent ex[isa::kMaxExtents];
                const int n = isa::footprint(in, ex);
                for (int i = 0; i < n; ++i)
                    if (ex[i].pos == Pos::GM && !ex[i].write) loads.push_back(ex[i]);
            }
            // The cube's reads as merged ranges; a gap shorter than a row stride joins two (an
            // AIV piece may cover rows the cube loads in two instructions, and the hull of rows
            // includes the bytes between them).
            std::sort(loads.begin(), loads.end(), [](const isa::Extent& x, const isa::Extent& y) { return x.lo < y.lo; });
            const uint64_t gap = std::max(p.lda, p.ldb) * es;
            std::vector<isa::Extent> merged;
            for (const isa::Extent& l : loads)
                if (!merged.empty() && l.lo <= merged.back().hi + gap)
                    merged.back().hi = std::max(merged.back().hi, l.hi);
                else
                    merged.push_back(l);
            loads = merged;
            const size_t sets = cube.count(isa::Opcode::SET_CROSS_FLAG);
            for (uint32_t sub = 0; sub < s.aiv_per_aic; ++sub) {
                KapiSink aiv(isa::CoreKind::Vector);
                aiv.set_block(blk, p.t.block_dim);
                aiv.set_sub_block(sub);
                aiv.set_buffer(Pos::UB, s.ub_bytes);
                run_cube_matmul(aiv, p);
                INFO("block " << blk << " aiv " << sub);
                CHECK(aiv.errors().empty());
                CHECK(aiv.count(isa::Opcode::WAIT_CROSS_FLAG) == sets);
                for (const isa::Instr& in : aiv.instrs()) {
                    CHECK((in.op == isa::Opcode::COPY_GM_TO_UB || in.op == isa::Opcode::WAIT_CROSS_FLAG));
                    if (in.op != isa::Opcode::COPY_GM_TO_UB) continue;
                    ++prefetched;
                    isa::Extent ex[isa::kMaxExtents];
                    const int n = isa::footprint(in, ex);
                    for (int i = 0; i < n; ++i) {
                        if (ex[i].pos != Pos::GM) continue;
                        bool inside = false;
                        for (const isa::Extent& l : loads) inside = inside || (l.lo <= ex[i].lo && ex[i].hi <= l.hi);
                        CHECK(inside);
                    }
                }
            }
        }
        CHECK(prefetched > 0);
    }
}

// A small-M shape's walk alternates chunks of A (M rows) and B (N columns), of different sizes:
// the block's AIVs share the prefetch by bytes, so each AIV's GM reads come within one item of
// an even share (taking every other item would give one AIV all of B and leave the other's GM
// port idle half the time).
TEST_CASE("cube matmul: the AIVs of a block share the L2 prefetch evenly by bytes") {
    const DeviceInfo d = split_910b_like(2);
    const uint32_t m = 128, n = 4096, k = 8192;
    CubeMatmulPlan p;
    p.t = plan_matmul(m, n, k, 2, 2, d);
    REQUIRE(p.t.pf_ahead > 0);
    REQUIRE(p.t.tiles_m == 1);
    p.in = DType::FP16, p.out = DType::FP16;
    p.lda = k, p.ldb = n, p.ldc = n;
    p.a = 0x1000, p.b = p.a + uint64_t{m} * k * 2, p.c = p.b + uint64_t{k} * n * 2;
    // The largest item: one chunk of A or of B, whole 32-B rows.
    const uint64_t a_chunk = uint64_t{p.t.base_m} * p.t.k_l1 * 2, b_chunk = uint64_t{p.t.k_l1} * p.t.base_n * 2;
    const uint64_t item = std::max(a_chunk, b_chunk);
    REQUIRE(a_chunk != b_chunk);
    for (uint32_t blk = 0; blk < p.t.block_dim; blk += 5) {
        std::vector<uint64_t> bytes;
        for (uint32_t sub = 0; sub < d.aiv_per_aic; ++sub) {
            KapiSink aiv(isa::CoreKind::Vector);
            aiv.set_block(blk, p.t.block_dim);
            aiv.set_sub_block(sub);
            aiv.set_buffer(Pos::UB, d.ub_bytes);
            run_cube_matmul(aiv, p);
            CHECK(aiv.errors().empty());
            uint64_t b = 0;
            for (const isa::Instr& in : aiv.instrs()) {
                if (in.op != isa::Opcode::COPY_GM_TO_UB) continue;
                isa::Extent ex[isa::kMaxExtents];
                const int cnt = isa::footprint(in, ex);
                for (int i = 0; i < cnt; ++i)
                    if (ex[i].pos == Pos::UB) b += ex[i].hi - ex[i].lo;
            }
            bytes.push_back(b);
        }
        INFO("block " << blk << " aiv bytes " << bytes[0] << " " << bytes[1] << " item " << item);
        CHECK(std::min(bytes[0], bytes[1]) > 0);
        CHECK(std::max(bytes[0], bytes[1]) - std::min(bytes[0], bytes[1]) <= item);
    }
}
