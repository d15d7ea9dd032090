// The cube matmul with A resident in L1 (MatmulTiling::a_slots), without the chip model: when the
// plan keeps A resident (small M: every tile shares the one A row panel, and split-K gives a
// block items of one k part), what L1 holds, that a block reads its A part from GM once instead
// of once per work item (the cube and the AIVs' L2 prefetch), and that C is the host reference's
// (forced residency on a small part, plain and two-pass split-K, every operand form).
#include "runtime/ops/cube_matmul.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <random>

#include "cube_matmul_fixture.h"
#include "kapi_sink.h"

using namespace sfumato;
using namespace sfumato::ops;
using sfumato::isa::DType;
using sfumato::isa::Pos;
using sfumato::kernel::test::KapiSink;
using sfumato::test::Case;
using sfumato::test::run_case;
using sfumato::test::split_910b_like;
using sfumato::test::tiny;

namespace {

// GM reads (copy instructions) of a block's cores that start inside [lo, hi).
struct Reads {
    uint64_t cube = 0, aiv = 0;
};
Reads reads_in(const CubeMatmulPlan& p, const DeviceInfo& d, uint32_t blk, uint64_t lo, uint64_t hi) {
    Reads r;
    auto count = [&](const KapiSink& s) {
        uint64_t n = 0;
        for (const isa::Instr& in : s.instrs()) {
            isa::Extent ex[isa::kMaxExtents];
            const int cnt = isa::footprint(in, ex);
            for (int i = 0; i < cnt; ++i)
                if (ex[i].pos == Pos::GM && !ex[i].write && ex[i].lo >= lo && ex[i].lo < hi) ++n;
        }
        return n;
    };
    KapiSink cube(isa::CoreKind::Cube);
    cube.set_block(blk, p.t.block_dim);
    cube.set_buffer(Pos::L1, d.l1_bytes);
    cube.set_buffer(Pos::L0A, d.l0a_bytes);
    cube.set_buffer(Pos::L0B, d.l0b_bytes);
    cube.set_buffer(Pos::L0C, d.l0c_bytes);
    run_cube_matmul(cube, p);
    CHECK(cube.errors().empty());
    r.cube = count(cube);
    for (uint32_t sub = 0; sub < d.aiv_per_aic; ++sub) {
        KapiSink aiv(isa::CoreKind::Vector);
        aiv.set_block(blk, p.t.block_dim);
        aiv.set_sub_block(sub);
        aiv.set_buffer(Pos::UB, d.ub_bytes);
        run_cube_matmul(aiv, p);
        CHECK(aiv.errors().empty());
        r.aiv += count(aiv);
    }
    return r;
}

}  // namespace

// 160 x 4096 x 8192 fp16 on the 910B-like part (a decode step's M = 160 against a row-major
// weight): the plan keeps A resident. L1 holds the slots beside the double-buffered B chunks,
// every part walks between `buffers` and a_slots chunks, and each block's items share A rows, so
// the block loads its A part once: its cube's A reads are those of one item, against one per item
// with the same tiling and A not resident; its AIVs prefetch no A chunk the cube does not load.
TEST_CASE("cube matmul: A resident in L1 is read once per block, not once per work item") {
    const DeviceInfo d = split_910b_like(2);
    const uint32_t m = 160, n = 4096, k = 8192;
    CubeMatmulPlan p;
    p.t = plan_matmul(m, n, k, 2, 2, d);
    REQUIRE(p.t.a_slots > p.t.buffers);
    REQUIRE(p.t.tiles_m == 1);
    CHECK(uint64_t{p.t.a_slots} * p.t.a1_bytes(2) + uint64_t{p.t.buffers} * (p.t.b1_bytes(2) + 32) <=
          d.l1_bytes);
    uint32_t most = 0;
    for (uint32_t part = 0; part < p.t.k_split; ++part) {
        const uint32_t chunks = p.t.part_begin(part + 1) - p.t.part_begin(part);
        CHECK(chunks >= p.t.buffers);
        most = std::max(most, chunks);
    }
    CHECK(most == p.t.a_slots);
    p.in = DType::FP16, p.out = DType::FP16;
    p.lda = k, p.ldb = n, p.ldc = n;
    p.a = 0x1000, p.b = p.a + uint64_t{m} * k * 2, p.c = p.b + uint64_t{k} * n * 2;
    CubeMatmulPlan off = p;  // the same tiling, A in `buffers` A1 buffers
    off.t.a_slots = 0;
    for (uint32_t blk = 0; blk < p.t.block_dim; blk += 7) {
        INFO("block " << blk);
        const uint32_t items = block_items(p.t, blk);
        REQUIRE(items > 1);
        // The block's items all run one k part of the one tile row.
        if (p.t.block_dim % p.t.k_split == 0) CHECK(a_loads(p.t, blk) == 1);
        CHECK(a_loads(off.t, blk) == items);
        const Reads res = reads_in(p, d, blk, p.a, p.b), plain = reads_in(off, d, blk, p.a, p.b);
        CHECK(res.cube > 0);
        CHECK(res.cube * a_loads(off.t, blk) == plain.cube * a_loads(p.t, blk));
        // The AIVs prefetch no A chunk the cube does not load.
        CHECK(res.aiv <= res.cube);
        CHECK(res.aiv <= plain.aiv);
        // B is read by every item either way.
        CHECK(reads_in(p, d, blk, p.b, p.c).cube == reads_in(off, d, blk, p.b, p.c).cube);
    }
}

// Residency forced on a small part (A's slots hold every chunk of k; a block's tiles share the
// one tile row), blocks run one after another: C against the host reference for each operand
// form, a column bias (its tail rides in slot 0) and a row bias.
TEST_CASE("cube matmul: A resident in L1 gives the host reference's C") {
    const DeviceInfo dev = tiny();
    struct Shape {
        uint32_t m, n, k;
        DType in, out;
        bool ta, tb;
        BiasForm bias;
    };
    for (const Shape& sh : {Shape{32, 512, 768, DType::FP16, DType::FP32, false, false, BiasForm::None},
                            Shape{30, 500, 700, DType::BF16, DType::BF16, true, false, BiasForm::Col},
                            Shape{16, 384, 640, DType::FP16, DType::FP16, false, true, BiasForm::Row},
                            Shape{16, 256, 300, DType::FP32, DType::FP32, false, false, BiasForm::None},
                            Shape{32, 512, 1024, DType::INT8, DType::INT32, false, true, BiasForm::None}}) {
        INFO("shape " << sh.m << "x" << sh.n << "x" << sh.k << " " << isa::dtype_name(sh.in));
        Case c;
        c.m = sh.m, c.n = sh.n, c.k = sh.k, c.in = sh.in, c.out = sh.out, c.ta = sh.ta, c.tb = sh.tb;
        c.bias = sh.bias, c.beta = 0.5;
        c.a_resident = true;
        CHECK(run_case(c, dev, isa::CoreKind::Cube) <= 1.0);
    }
}

// Two-pass split-K with A resident (each block's items run one part of the one tile row): every
// block's partial sums match the same tiling's with A not resident, bit for bit.
TEST_CASE("cube matmul: A resident under two-pass split-K gives the same partial sums") {
    const uint32_t m = 16, n = 512, k = 2048;
    DeviceInfo dev = tiny();
    MatmulProblem pr;
    pr.m = m, pr.n = n, pr.k = k, pr.in_es = 2, pr.out_es = 4;
    pr.split_mode = SplitKMode::TwoPass, pr.k_split = 2;
    CubeMatmulPlan p;
    p.t = plan_matmul(pr, dev, 2);
    REQUIRE(p.t.two_pass());
    REQUIRE(p.t.tiles_m == 1);
    REQUIRE(p.t.tiles_n >= 2);
    p.t.gm_nz = false;
    p.t.a_slots = 0;
    for (uint32_t part = 0; part < p.t.k_split; ++part)
        p.t.a_slots = std::max(p.t.a_slots, p.t.part_begin(part + 1) - p.t.part_begin(part));
    REQUIRE(p.t.a_slots > p.t.buffers);
    p.in = DType::FP16, p.out = DType::FP32;
    p.lda = k, p.ldb = n, p.ldc = n;
    const uint64_t elems = uint64_t{m} * n;
    p.c_part_stride = elems;
    p.a = 0x1000, p.b = p.a + uint64_t{m} * k * 2, p.c = p.b + uint64_t{k} * n * 2;
    auto run = [&](const CubeMatmulPlan& plan) {
        isa::test::TestMem mem(1 << 20, p.c + p.t.k_split * elems * 4 + 4096);
        std::mt19937 gen(3);
        std::uniform_real_distribution<float> d(-1.0f, 1.0f);
        for (uint64_t i = 0; i < uint64_t{m} * k + uint64_t{k} * n; ++i)
            mem.set(Pos::GM, p.a + i * 2, DType::FP16, d(gen));
        for (uint32_t blk = 0; blk < plan.t.block_dim; ++blk) {
            KapiSink sink(isa::CoreKind::Cube, &mem);
            sink.set_block(blk, plan.t.block_dim);
            sink.set_buffer(Pos::L1, dev.l1_bytes);
            sink.set_buffer(Pos::L0A, dev.l0a_bytes);
            sink.set_buffer(Pos::L0B, dev.l0b_bytes);
            sink.set_buffer(Pos::L0C, dev.l0c_bytes);
            sink.set_event_ids(dev.event_ids);
            run_cube_matmul(sink, plan);
            CHECK(sink.errors().empty());
            CHECK(sink.flags_clear());
            CHECK(sink.first_race() == "");
        }
        std::vector<uint8_t> ws(p.t.k_split * elems * 4);
        for (uint64_t i = 0; i < ws.size(); ++i) ws[i] = mem.of(Pos::GM)[p.c + i];
        return ws;
    };
    CubeMatmulPlan off = p;
    off.t.a_slots = 0;
    for (uint32_t blk = 0; blk < p.t.block_dim; ++blk) CHECK(a_loads(p.t, blk) < a_loads(off.t, blk));
    CHECK(run(p) == run(off));
}
