// The library's cube matmul kernel without the chip model: every block's
// instruction stream run in program order on a functional memory (split and
// coupled cores) for each element type, transposed operands (the 16-bit
// per-fractal and the 4-/1-byte square transposes), broadcast batches, the bias
// forms (row, column, scalar, alpha == 0), the FixPipe scale and ReLU, ragged
// shapes; numbers against a host reference with the derived tolerance,
// structure (flags balanced, no unsynchronised buffer sharing). Also the tile
// order: a permutation of the tiles, and the order the plan picks for large
// shapes.
#include "runtime/ops/cube_matmul.h"

#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <set>

#include "cube_matmul_fixture.h"
#include "kapi_sink.h"
#include "runtime/ops/cube_epilogue.h"

using namespace sfumato;
using namespace sfumato::ops;
using sfumato::isa::DType;
using sfumato::isa::Pos;
using sfumato::kernel::test::KapiSink;
using sfumato::test::split_910b_like;
using sfumato::test::tiny;
using sfumato::test::Case;
using sfumato::test::run_case;


TEST_CASE(
    "cube matmul: every element type with every transpose combination, "
    "split and coupled, ragged") {
    for (DType in : {DType::FP16, DType::BF16, DType::FP32, DType::INT8})
        for (int tr = 0; tr < 4; ++tr)
            for (const char* arch : {"split", "coupled"}) {
                Case c;
                c.m = 37, c.n = 45,
                c.k = 300;  // several k chunks and steps on tiny buffers
                c.in = in, c.out = in == DType::INT8 ? DType::INT32 : DType::FP32;
                c.ta = tr & 1, c.tb = tr & 2;
                INFO(isa::dtype_name(in) << " ta " << c.ta << " tb " << c.tb << " " << arch);
                const isa::CoreKind kind =
                    std::string(arch) == "split" ? isa::CoreKind::Cube : isa::CoreKind::Coupled;
                CHECK(run_case(c, tiny(arch), kind) <= 1.0);
            }
}

TEST_CASE(
    "cube matmul: NZ operands in GM as stored (transposed A k x m, B n x k too) give the ND path's C, "
    "split and coupled, ragged") {
    // A coupled part plans NZ operands whatever the storage order (MatmulTiling::gm_nz).
    for (int tr = 0; tr < 4; ++tr) {
        MatmulProblem pr;
        pr.m = 37, pr.n = 45, pr.k = 300, pr.trans_a = tr & 1, pr.trans_b = tr & 2;
        CHECK(plan_matmul(pr, tiny("coupled")).gm_nz);
        CHECK_FALSE(plan_matmul(pr, tiny("split")).gm_nz);
    }
    for (DType in : {DType::FP16, DType::BF16})
        for (int tr = 0; tr < 4; ++tr)
            for (const char* arch : {"split", "coupled"})
                for (BiasForm bf : {BiasForm::None, BiasForm::Row, BiasForm::Col}) {
                    Case c;
                    c.m = 37, c.n = 45, c.k = 300;  // ragged in every dimension, several k chunks
                    c.in = in, c.out = DType::FP32, c.ta = tr & 1, c.tb = tr & 2, c.bias = bf;
                    INFO(isa::dtype_name(in) << " ta " << c.ta << " tb " << c.tb << " " << arch << " bias "
                                             << static_cast<int>(bf));
                    const isa::CoreKind kind =
                        std::string(arch) == "split" ? isa::CoreKind::Cube : isa::CoreKind::Coupled;
                    std::vector<double> nd, nz;
                    CHECK(run_case(c, tiny(arch), kind, &nd) <= 1.0);
                    c.nz = true;
                    CHECK(run_case(c, tiny(arch), kind, &nz) <= 1.0);
                    CHECK(nz == nd);  // the same L1 tiles, so the same bits
                }
}

TEST_CASE(
    "cube matmul: small and odd shapes hit the fp32 odd-step and int8 "
    "padding paths") {
    for (DType in : {DType::FP32, DType::INT8})
        for (auto [m, n, k] : {std::array<uint32_t, 3>{1, 1, 1}, {5, 3, 20}, {17, 9, 41}, {16, 33, 24}}) {
            for (int tr = 0; tr < 4; ++tr) {
                Case c;
                c.m = m, c.n = n, c.k = k, c.in = in, c.out = in == DType::INT8 ? DType::INT32 : DType::FP32;
                c.ta = tr & 1, c.tb = tr & 2;
                INFO(isa::dtype_name(in)
                     << " " << m << "x" << n << "x" << k << " ta " << c.ta << " tb " << c.tb);
                CHECK(run_case(c, tiny(), isa::CoreKind::Cube) <= 1.0);
            }
        }
}

TEST_CASE("cube matmul: k rotation (tiles start their k walk at different chunks and wrap)") {
    // k = 300 on tiny: several chunks, the last one short and, rotated, in the middle of a
    // walk; the bias mad and the first (overwriting) mad must follow the walk, not k = 0.
    for (BiasForm bf : {BiasForm::None, BiasForm::Row, BiasForm::Col, BiasForm::Scalar})
        for (const char* arch : {"split", "coupled"}) {
            Case c;
            c.m = 70, c.n = 90, c.k = 300, c.bias = bf, c.alpha = 0.5, c.beta = -1.5, c.k_rot = 3;
            c.in = bf == BiasForm::Col ? DType::FP32 : DType::FP16;
            c.tb = bf == BiasForm::Scalar;
            INFO("bias " << static_cast<int>(bf) << " " << arch);
            const isa::CoreKind kind =
                std::string(arch) == "split" ? isa::CoreKind::Cube : isa::CoreKind::Coupled;
            CHECK(run_case(c, tiny(arch), kind) <= 1.0);
        }
}

TEST_CASE("cube matmul: batches, a broadcast B, output casts") {
    Case c;
    c.batch = 3, c.m = 20, c.n = 24, c.k = 70, c.out = DType::FP16;
    CHECK(run_case(c, tiny(), isa::CoreKind::Cube) <= 1.0);
    c.b_broadcast = true, c.in = DType::BF16, c.out = DType::BF16, c.tb = true;
    CHECK(run_case(c, tiny(), isa::CoreKind::Cube) <= 1.0);
    c.in = DType::FP32, c.out = DType::FP32, c.ta = true;
    CHECK(run_case(c, tiny("coupled"), isa::CoreKind::Coupled) <= 1.0);
}

TEST_CASE(
    "cube matmul: bias as an extra mad (row, column, scalar), alpha in "
    "the FixPipe, ReLU") {
    for (BiasForm bf : {BiasForm::Row, BiasForm::Col, BiasForm::Scalar})
        for (DType in : {DType::FP16, DType::FP32})
            for (const char* arch : {"split", "coupled"}) {
                Case c;
                c.m = 40, c.n = 50, c.k = 100, c.in = in, c.out = in, c.bias = bf, c.alpha = 0.5,
                c.beta = -1.5;
                c.relu = bf == BiasForm::Col;
                c.tb = bf == BiasForm::Scalar;
                INFO("bias " << static_cast<int>(bf) << " " << isa::dtype_name(in) << " " << arch);
                const isa::CoreKind kind =
                    std::string(arch) == "split" ? isa::CoreKind::Cube : isa::CoreKind::Coupled;
                CHECK(run_case(c, tiny(arch), kind) <= 1.0);
            }
    // alpha == 0: only the bias mad runs.
    Case z;
    z.m = 20, z.n = 30, z.k = 50, z.bias = BiasForm::Row, z.alpha = 0.0, z.beta = 2.0;
    CHECK(run_case(z, tiny(), isa::CoreKind::Cube) <= 1.0);
}

TEST_CASE(
    "cube matmul tile order: a permutation of the tiles, groups keep "
    "their working set in L2") {
    MatmulTiling t;
    for (auto [tm, tn, g, gn] :
         {std::array<uint32_t, 4>{7, 5, 1, 0}, {7, 5, 3, 0}, {8, 8, 2, 3}, {5, 9, 4, 4}}) {
        t.tiles_m = tm, t.tiles_n = tn, t.group_m = g, t.group_n = gn, t.batch = 2;
        std::set<std::array<uint32_t, 3>> seen;
        for (uint32_t i = 0; i < t.tiles(); ++i) {
            const TileCoord c = tile_coord(t, i);
            CHECK(c.tm < tm);
            CHECK(c.tn < tn);
            seen.insert({c.batch, c.tm, c.tn});
        }
        CHECK(seen.size() == t.tiles());
    }
    // Row-major order when group_m = 1.
    t.tiles_m = 3, t.tiles_n = 4, t.group_m = 1, t.group_n = 0, t.batch = 1;
    CHECK(tile_coord(t, 5).tm == 1);
    CHECK(tile_coord(t, 5).tn == 1);
    // Groups of 2 rows go column by column.
    t.group_m = 2;
    CHECK(tile_coord(t, 1).tm == 1);
    CHECK(tile_coord(t, 1).tn == 0);
    CHECK(tile_coord(t, 2).tn == 1);

    // 910B-like 8192^3: A and B (256 MiB) overflow the 192 MiB L2. The plan
    // groups tile rows so that a group's A panels, all of B and the group's
    // outputs fit 3/4 of L2 (B stays for the next group), with more than one row
    // per group (fewer first reads of A waiting on HBM).
    const DeviceInfo d = split_910b_like(0);
    const MatmulTiling big = plan_matmul(8192, 8192, 8192, 2, 4, d);
    CHECK(big.group_m > 1);
    CHECK(big.group_n == 0);
    const double ws = big.group_m * double(big.base_m) * big.k * 2 + double(big.k) * big.n * 2 +
                      double(big.group_m) * big.tiles_n * big.base_m * big.base_n * 4;
    CHECK(ws <= 0.75 * double(d.l2_bytes));
    // A shape of one wave keeps row-major order.
    CHECK(plan_matmul(512, 512, 512, 2, 4, d).group_m == 1);

    // K rotation: each tile walks every chunk once; the tiles of the first wave that share an
    // A row panel or a B column panel start at different chunks.
    for (uint32_t s : {2048u, 4096u, 8192u}) {
        const MatmulTiling t = plan_matmul(s, s, s, 2, 4, d);
        INFO("S " << s);
        const uint32_t nk = t.k_chunks();
        REQUIRE(nk > t.buffers);
        CHECK(t.k_rot > 1);
        CHECK(t.k_rot <= nk);
        std::map<uint32_t, std::set<uint32_t>> by_row, by_col;
        for (uint32_t i = 0; i < t.block_dim; ++i) {
            const TileCoord c = tile_coord(t, i);
            std::set<uint32_t> walk;
            for (uint32_t j = 0; j < nk; ++j) walk.insert(t.k_chunk(c.tm, c.tn, j));
            CHECK(walk.size() == nk);
            CHECK(*walk.rbegin() == nk - 1);
            const uint32_t st = t.k_chunk(c.tm, c.tn, 0);
            CHECK(by_row[c.tm].insert(st).second);
            CHECK(by_col[c.tn].insert(st).second);
        }
        CHECK(by_row.size() > 1);
        CHECK(by_col.size() > 1);
    }
    // Every chunk of k in the L1 buffers (a core's next tile may reuse them): no rotation.
    const MatmulTiling one = plan_matmul(1024, 1024, 1024, 2, 4, d);
    CHECK(one.k_chunks() <= one.buffers);
    CHECK(one.k_rot == 1);
    // The running blocks' GM ports together beyond the HBM rate (leads would queue there), or
    // an L2 that cannot hold a group's panels: lockstep.
    DeviceInfo fast_ports = d;
    fast_ports.core_gm_read_bytes_per_cycle = 2 * d.gm_bytes_per_cycle / d.cube_cores;
    CHECK(plan_matmul(4096, 4096, 4096, 2, 4, fast_ports).k_rot == 1);
    DeviceInfo small_l2 = d;
    small_l2.l2_bytes = 4ull << 20;
    CHECK(plan_matmul(4096, 4096, 4096, 2, 4, small_l2).k_rot == 1);
}
