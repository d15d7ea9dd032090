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

#include "kapi_sink.h"
#include "runtime/ops/cube_epilogue.h"

using namespace sfumato;
using namespace sfumato::ops;
using sfumato::isa::DType;
using sfumato::isa::Pos;
using sfumato::kernel::test::KapiSink;

namespace {

DeviceInfo tiny(const std::string& arch = "split") {
    DeviceInfo d;
    d.arch = arch;
    d.cube_cores = 2;
    d.l1_bytes = 128 << 10, d.l0a_bytes = d.l0b_bytes = 16 << 10, d.l0c_bytes = 32 << 10,
    d.ub_bytes = 32 << 10;
    d.event_ids = 8;
    return d;
}

struct Case {
    uint32_t batch = 1, m = 0, n = 0, k = 0;
    DType in = DType::FP16, out = DType::FP32;
    bool ta = false, tb = false;
    bool b_broadcast = false;  // B shared by every batch (stride 0)
    BiasForm bias = BiasForm::None;
    double alpha = 1.0, beta = 1.0;
    bool relu = false;
    uint32_t k_rot = 0;  // 0: the plan's
};

// Runs every block on `kind` cores; returns max |err| / tolerance over C.
double run_case(const Case& c, const DeviceInfo& dev, isa::CoreKind kind) {
    const uint32_t es = isa::dtype_size(c.in), eo = isa::dtype_size(c.out);
    MatmulProblem pr;
    pr.batch = c.batch, pr.m = c.m, pr.n = c.n, pr.k = c.k, pr.in_es = es, pr.out_es = eo;
    pr.trans_a = c.ta, pr.trans_b = c.tb, pr.bias = c.bias;
    pr.split_k_ok = false;  // blocks run one after another here: no cross-core barrier
    CubeMatmulPlan p;
    p.t = plan_matmul(pr, dev);
    p.t.gm_nz = false;
    if (c.k_rot) p.t.k_rot = c.k_rot;
    p.in = c.in, p.out = c.out;
    p.lda = c.ta ? c.m : c.k, p.ldb = c.tb ? c.k : c.n, p.ldc = c.n;
    const uint64_t sa = uint64_t{c.m} * c.k, sb = uint64_t{c.k} * c.n, sc = uint64_t{c.m} * c.n;
    if (c.batch > 1) p.bdims = {c.batch}, p.a_bs = {sa}, p.b_bs = {c.b_broadcast ? 0 : sb}, p.c_bs = {sc};
    p.bias_form = c.bias;
    p.alpha = c.alpha, p.relu = c.relu;
    if (c.bias != BiasForm::None) {
        if (c.alpha == 0)
            p.skip_ab = true, p.alpha = 1.0, p.bias_scale = c.beta;
        else
            p.bias_scale = c.beta / c.alpha;
    }
    const uint64_t nb = c.b_broadcast ? 1 : c.batch;
    auto up = [](uint64_t v) { return (v + 4095) / 4096 * 4096; };
    p.a = 0x1000;
    p.b = p.a + up(c.batch * sa * es);
    p.bias = p.b + up(nb * sb * es);
    p.c = p.bias + up(std::max(c.m, c.n) * es);
    isa::test::TestMem mem(1 << 20, p.c + c.batch * sc * eo + 4096);
    for (auto& byte : mem.of(Pos::GM)) byte = 0xff;  // poison: unwritten outputs are nan
    std::mt19937 gen(11);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    std::uniform_int_distribution<int> di(-128, 127);
    auto fill = [&](uint64_t base, uint64_t count) {
        std::vector<double> v(count);
        for (uint64_t i = 0; i < count; ++i) {
            const double x = c.in == DType::INT8 ? di(gen) : d(gen);
            mem.set(Pos::GM, base + i * es, c.in, x);
            v[i] = mem.val(Pos::GM, base + i * es, c.in);
        }
        return v;
    };
    const std::vector<double> a = fill(p.a, c.batch * sa), b = fill(p.b, nb * sb);
    const std::vector<double> bias = fill(p.bias, std::max(c.m, c.n));
    for (uint32_t blk = 0; blk < p.t.block_dim; ++blk) {
        KapiSink sink(kind, &mem);
        sink.set_block(blk, p.t.block_dim);
        sink.set_buffer(Pos::L1, dev.l1_bytes);
        sink.set_buffer(Pos::L0A, dev.l0a_bytes);
        sink.set_buffer(Pos::L0B, dev.l0b_bytes);
        sink.set_buffer(Pos::L0C, dev.l0c_bytes);
        if (kind == isa::CoreKind::Coupled) sink.set_buffer(Pos::UB, dev.ub_bytes);
        sink.set_event_ids(dev.event_ids);
        run_cube_matmul(sink, p);
        INFO("block " << blk);
        CHECK(sink.errors().empty());
        if (!sink.errors().empty()) FAIL_CHECK(sink.errors().front());
        CHECK(sink.flags_clear());
        CHECK(sink.first_race() == "");
    }
    const double u_out = c.out == DType::FP16 ? 0x1p-11 : c.out == DType::BF16 ? 0x1p-8 : 0.0;
    const double u_in = c.in == DType::FP16 ? 0x1p-11 : c.in == DType::BF16 ? 0x1p-8 : 0x1p-24;
    const double steps = std::ceil(double(c.k) / p.t.base_k) + 1;
    double worst = 0;
    for (uint32_t bt = 0; bt < c.batch; ++bt)
        for (uint32_t i = 0; i < c.m; ++i)
            for (uint32_t j = 0; j < c.n; ++j) {
                double s = 0, sabs = 0;
                for (uint32_t kk = 0; kk < c.k; ++kk) {
                    const double x = a[bt * sa + (c.ta ? uint64_t{kk} * c.m + i : uint64_t{i} * c.k + kk)];
                    const double y = b[(c.b_broadcast ? 0 : bt) * sb +
                                       (c.tb ? uint64_t{j} * c.k + kk : uint64_t{kk} * c.n + j)];
                    s += x * y, sabs += std::fabs(x * y);
                }
                double add = 0;
                if (c.bias == BiasForm::Row) add = bias[j];
                if (c.bias == BiasForm::Col) add = bias[i];
                if (c.bias == BiasForm::Scalar) add = bias[0];
                double ref = (c.alpha == 0 ? 0.0 : c.alpha * s) + c.beta * add;
                if (c.relu) ref = std::max(ref, 0.0);
                const double got =
                    c.out == DType::INT32
                        ? double(mem.get<int32_t>(Pos::GM, p.c + ((uint64_t{bt} * c.m + i) * c.n + j) * 4))
                        : mem.val(Pos::GM, p.c + ((uint64_t{bt} * c.m + i) * c.n + j) * eo, c.out);
                const double tol =
                    c.in == DType::INT8
                        ? 0.5
                        : 2 * steps * 0x1p-24 * (std::fabs(c.alpha) * sabs + std::fabs(c.beta * add)) +
                              std::fabs(c.beta * add) * u_in + u_out * std::fabs(ref) + 0x1p-24;
                worst = std::max(worst, std::isnan(got) ? 1e9 : std::fabs(got - ref) / tol);
            }
    return worst;
}

}  // namespace

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
    "cube matmul tile order: a permutation of the tiles; groups keep "
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
    DeviceInfo d;
    d.arch = "split";
    d.cube_cores = 24;
    d.l1_bytes = 512 << 10, d.l0a_bytes = d.l0b_bytes = 64 << 10, d.l0c_bytes = 128 << 10,
    d.ub_bytes = 192 << 10;
    d.cube_macs_fp16 = 4096;
    d.core_read_max_bytes_per_cycle = 110, d.core_gm_read_bytes_per_cycle = 32,
    d.core_write_max_bytes_per_cycle = 86;
    d.mem_max_bytes_per_cycle = 48 * 64, d.gm_bytes_per_cycle = 911;
    d.l2_bytes = 192ull << 20;
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

// The AIVs' L2 prefetch (MatmulTiling::pf_ahead): which tiles' panels the plan marks, when it is
// off, and the kernel's streams: the AIVs read only row segments the cube loads too, wait for
// exactly as many completed cube loads as the cube signals, and the cube's numbers stand.
TEST_CASE("cube matmul: L2 prefetch by the AIVs of a split part") {
    DeviceInfo d;
    d.arch = "split";
    d.cube_cores = 24, d.aiv_per_aic = 2, d.vector_cores = 48;
    d.l1_bytes = 512 << 10, d.l0a_bytes = d.l0b_bytes = 64 << 10, d.l0c_bytes = 128 << 10,
    d.ub_bytes = 192 << 10;
    d.cube_macs_fp16 = 4096;
    d.core_read_max_bytes_per_cycle = 110, d.core_gm_read_bytes_per_cycle = 32,
    d.core_write_max_bytes_per_cycle = 86;
    d.mem_max_bytes_per_cycle = 48 * 64, d.gm_bytes_per_cycle = 911;
    d.l2_bytes = 192ull << 20;
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
    DeviceInfo d;
    d.arch = "split";
    d.cube_cores = 24, d.aiv_per_aic = 2, d.vector_cores = 48;
    d.l1_bytes = 512 << 10, d.l0a_bytes = d.l0b_bytes = 64 << 10, d.l0c_bytes = 128 << 10,
    d.ub_bytes = 192 << 10;
    d.cube_macs_fp16 = 4096;
    d.core_read_max_bytes_per_cycle = 110, d.core_gm_read_bytes_per_cycle = 32,
    d.core_write_max_bytes_per_cycle = 86;
    d.mem_max_bytes_per_cycle = 48 * 64, d.gm_bytes_per_cycle = 911;
    d.l2_bytes = 192ull << 20;
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

namespace {

// A two-pass split-K matmul (MatmulTiling::two_pass) run block by block in `order` (cube blocks
// writing their partial sums, then the vector reduction's blocks), with block_dim blocks; returns
// C's bytes (fp16).
std::vector<uint8_t> run_two_pass(uint32_t block_dim, bool reverse, uint32_t k_split, double* worst) {
    const uint32_t m = 16, n = 48, k = 2048;
    DeviceInfo dev = tiny();
    dev.vector_cores = 4, dev.aiv_per_aic = 2;
    MatmulProblem pr;
    pr.m = m, pr.n = n, pr.k = k, pr.in_es = 2, pr.out_es = 2;
    pr.split_mode = SplitKMode::TwoPass, pr.k_split = k_split;
    CubeMatmulPlan p;
    p.t = plan_matmul(pr, dev, block_dim);
    REQUIRE(p.t.two_pass());
    REQUIRE(p.t.k_split == k_split);
    REQUIRE(p.t.block_dim == block_dim);
    p.t.gm_nz = false;
    p.in = DType::FP16, p.out = DType::FP32;
    p.lda = k, p.ldb = n, p.ldc = n;
    const uint64_t elems = uint64_t{m} * n;
    p.c_part_stride = elems;
    p.a = 0x1000, p.b = p.a + 0x10000, p.c = p.b + 0x40000;  // c: the workspace slices
    const uint64_t y = p.c + k_split * elems * 4 + 0x1000;
    isa::test::TestMem mem(1 << 20, y + elems * 2 + 4096);
    for (auto& byte : mem.of(Pos::GM)) byte = 0xff;
    std::mt19937 gen(5);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    std::vector<double> a(uint64_t{m} * k), b(uint64_t{k} * n);
    for (uint64_t i = 0; i < a.size(); ++i) mem.set(Pos::GM, p.a + i * 2, DType::FP16, d(gen)), a[i] = mem.val(Pos::GM, p.a + i * 2, DType::FP16);
    for (uint64_t i = 0; i < b.size(); ++i) mem.set(Pos::GM, p.b + i * 2, DType::FP16, d(gen)), b[i] = mem.val(Pos::GM, p.b + i * 2, DType::FP16);
    auto run_blocks = [&](isa::CoreKind kind, uint32_t blocks, const std::function<void(isa::IInstrSink&)>& body) {
        for (uint32_t i = 0; i < blocks; ++i) {
            const uint32_t blk = reverse ? blocks - 1 - i : i;
            KapiSink sink(kind, &mem);
            sink.set_block(blk, blocks);
            sink.set_buffer(Pos::L1, dev.l1_bytes);
            sink.set_buffer(Pos::L0A, dev.l0a_bytes);
            sink.set_buffer(Pos::L0B, dev.l0b_bytes);
            sink.set_buffer(Pos::L0C, dev.l0c_bytes);
            sink.set_buffer(Pos::UB, dev.ub_bytes);
            sink.set_event_ids(dev.event_ids);
            body(sink);
            CHECK(sink.errors().empty());
            CHECK(sink.flags_clear());  // no barrier: nothing waits on another block
        }
    };
    run_blocks(isa::CoreKind::Cube, p.t.block_dim, [&](isa::IInstrSink& s) { run_cube_matmul(s, p); });
    EpiloguePlan e;
    e.x = p.c, e.y = y, e.y_dtype = DType::FP16, e.n = elems, e.parts = k_split, e.part_stride = elems;
    const KernelDesc kd = epilogue_kernel(e, dev, "reduce", "MatMul");
    run_blocks(isa::CoreKind::Vector, kd.block_dim, kd.body);
    // Within the accumulation tolerance: the fp32 mads (2 steps of 2^-24 of the sum of |a b|), the
    // fp32 adds of the parts (2 k_split of 2^-24) and one cast to fp16.
    *worst = 0;
    const double steps = std::ceil(double(k) / p.t.base_k);
    for (uint32_t i = 0; i < m; ++i)
        for (uint32_t j = 0; j < n; ++j) {
            double s = 0, sabs = 0;
            for (uint32_t kk = 0; kk < k; ++kk) s += a[i * k + kk] * b[kk * n + j], sabs += std::fabs(a[i * k + kk] * b[kk * n + j]);
            const double got = mem.val(Pos::GM, y + (uint64_t{i} * n + j) * 2, DType::FP16);
            const double tol = 2 * (steps + k_split) * 0x1p-24 * sabs + 0x1p-11 * std::fabs(s) + 0x1p-25;
            *worst = std::max(*worst, std::isnan(got) ? 1e9 : std::fabs(got - s) / tol);
        }
    std::vector<uint8_t> out(elems * 2);
    for (uint64_t i = 0; i < out.size(); ++i) out[i] = mem.of(Pos::GM)[y + i];
    return out;
}

}  // namespace

TEST_CASE("cube matmul: two-pass split-K gives the same bits for any block count and order, within the tolerance") {
    double worst = 0;
    const std::vector<uint8_t> ref = run_two_pass(2, false, 4, &worst);
    CHECK(worst <= 1.0);
    for (uint32_t bd : {1u, 2u, 3u, 4u})
        for (bool rev : {false, true}) {
            INFO("block_dim " << bd << (rev ? " reversed" : ""));
            double w = 0;
            CHECK(run_two_pass(bd, rev, 4, &w) == ref);
        }
    // Another part count changes the partial sums (and may change bits) but stays within the bound.
    run_two_pass(2, false, 2, &worst);
    CHECK(worst <= 1.0);
}
