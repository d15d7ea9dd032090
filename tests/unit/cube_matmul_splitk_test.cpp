// The cube matmul's deterministic two-pass split-K without the chip model: cube blocks write
// partial sums to a workspace, the vector reduction's blocks add them in a fixed order, so C's
// bits do not depend on the block count or the order blocks run in.
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
