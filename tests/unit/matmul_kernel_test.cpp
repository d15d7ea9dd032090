// The reference matmul without the chip model: host tiling invariants, and the kernel's
// instruction stream for every block run in program order on a functional memory (coupled and
// split cores, fp16/bf16, ragged shapes), checked for numbers against a host reference and for
// structure (flags balanced, no unsynchronised buffer sharing between pipes).
#include <catch2/catch.hpp>
#include <cmath>
#include <random>

#include "isa/layout.h"
#include "kapi_sink.h"
#include "models/chip/chip_params.h"
#include "runtime/ops/matmul.h"
#include "sim/error.h"

using namespace sfumato;
using namespace sfumato::ops;
using sfumato::isa::DType;
using sfumato::isa::Pos;
using sfumato::kernel::test::KapiSink;

namespace {

DeviceInfo device(const std::string& arch, uint32_t cores, uint64_t l1, uint64_t l0ab, uint64_t l0c,
                  uint64_t ub) {
    DeviceInfo d;
    d.arch = arch;
    d.cube_cores = cores;
    d.l1_bytes = l1, d.l0a_bytes = d.l0b_bytes = l0ab, d.l0c_bytes = l0c, d.ub_bytes = ub;
    d.event_ids = 8;
    return d;
}
// What a chip built from the preset reports (sizes, cores, and the memory figures the tiling's
// cost estimate uses), read from configs/ rather than copied.
DeviceInfo preset(const std::string& name) {
    Config c;
    c.load_ini(std::string(SFUMATO_SOURCE_DIR) + "/configs/" + name + ".ini");
    const ChipParams p(c);
    return device_info(p, true);
}
DeviceInfo tiny() { return preset("tiny"); }
DeviceInfo like910() { return preset("ascend910-like"); }
DeviceInfo like910b() { return preset("ascend910b-like"); }

void check_fits(const MatmulTiling& t, const DeviceInfo& d, uint32_t es, uint32_t eo) {
    CHECK(t.base_m % 16 == 0);
    CHECK(t.base_n % 16 == 0);
    CHECK(t.base_k % 16 == 0);
    CHECK(t.k_l1 % t.base_k == 0);
    CHECK(t.l0c_buffers * t.c1_bytes() <= d.l0c_bytes);
    CHECK((t.l0c_buffers == 1 || t.l0c_buffers == 2));
    CHECK(t.buffers * t.a2_bytes(es) <= d.l0a_bytes);
    CHECK(t.buffers * t.b2_bytes(es) <= d.l0b_bytes);
    CHECK(t.buffers * (t.a1_bytes(es) + t.b1_bytes(es)) <= d.l1_bytes);
    if (d.arch == "coupled") CHECK(t.l0c_buffers * t.c2_bytes(eo) <= d.ub_bytes);
    CHECK(uint64_t{t.tiles_m} * t.base_m >= t.m);
    CHECK(uint64_t{t.tiles_m - 1} * t.base_m < t.m);
    CHECK(uint64_t{t.tiles_n} * t.base_n >= t.n);
    CHECK(t.block_dim == std::min(t.items(), d.cube_cores));
    CHECK(t.k_split >= 1);
    // Split-K only while the work items stay few per core (kMaxItemsPerCore, 8).
    if (t.k_split > 1) CHECK(t.items() <= 8 * d.cube_cores);
}

// Runs every block of the kernel on `kind` cores against one functional memory; returns C.
struct Run {
    std::vector<double> a, b, c;
    double worst_ratio = 0;  // max |err| / tolerance
    size_t instrs = 0;
};

Run run_matmul(const DeviceInfo& dev, isa::CoreKind kind, uint32_t m, uint32_t n, uint32_t k, DType in,
               DType out, int nd2nz = -1, int gm_nz = -1) {
    const uint32_t es = isa::dtype_size(in), eo = isa::dtype_size(out);
    MatmulPlan p;
    // Blocks run one after another here, so split-K's cross-core barrier (zero C before any
    // part adds into it) cannot hold: plan without it (tests/regression/split_k_cli_test.cpp
    // runs split-K on the chip model).
    MatmulProblem pr;
    pr.m = m, pr.n = n, pr.k = k, pr.in_es = es, pr.out_es = eo, pr.split_k_ok = false;
    p.t = plan_matmul(pr, dev);
    if (nd2nz >= 0) p.t.nd2nz_instr = nd2nz == 1;
    if (gm_nz >= 0) p.t.gm_nz = gm_nz == 1;
    // GM: A and B row-major, or as NZ (zero-padded to 16 x 16 fractals).
    const bool nz = p.t.gm_nz;
    auto a_at = [&](uint64_t i, uint64_t j) { return nz ? nz_index(m, i, j) : i * k + j; };
    auto b_at = [&](uint64_t i, uint64_t j) { return nz ? nz_index(k, i, j) : i * n + j; };
    const uint64_t a_elems = nz ? nz_elems(m, k) : uint64_t{m} * k, b_elems = nz ? nz_elems(k, n) : uint64_t{k} * n;
    p.a = 0x1000;
    p.b = p.a + (a_elems * es + 4095) / 4096 * 4096;
    p.c = p.b + (b_elems * es + 4095) / 4096 * 4096;
    isa::test::TestMem mem(1 << 20, p.c + uint64_t{m} * n * eo + 4096);
    for (auto& byte : mem.of(Pos::GM)) byte = 0xff;  // poison: unwritten outputs are nan
    if (nz)  // NZ padding is zeros in GM
        for (uint64_t i = 0; i < (a_elems + b_elems) * es; ++i) mem.of(Pos::GM)[p.a + i] = 0;
    Run r;
    std::mt19937 gen(7);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    for (uint64_t i = 0; i < uint64_t{m} * k; ++i) {
        const uint64_t at = p.a + a_at(i / k, i % k) * es;
        mem.set(Pos::GM, at, in, d(gen));
        r.a.push_back(mem.val(Pos::GM, at, in));
    }
    for (uint64_t i = 0; i < uint64_t{k} * n; ++i) {
        const uint64_t at = p.b + b_at(i / n, i % n) * es;
        mem.set(Pos::GM, at, in, d(gen));
        r.b.push_back(mem.val(Pos::GM, at, in));
    }
    for (uint32_t blk = 0; blk < p.t.block_dim; ++blk) {
        KapiSink sink(kind, &mem);
        sink.set_block(blk, p.t.block_dim);
        sink.set_buffer(Pos::L1, dev.l1_bytes);
        sink.set_buffer(Pos::L0A, dev.l0a_bytes);
        sink.set_buffer(Pos::L0B, dev.l0b_bytes);
        sink.set_buffer(Pos::L0C, dev.l0c_bytes);
        if (kind == isa::CoreKind::Coupled) sink.set_buffer(Pos::UB, dev.ub_bytes);
        sink.set_event_ids(dev.event_ids);
        run_matmul_kernel(sink, p, in, out);
        INFO("block " << blk);
        CHECK(sink.errors().empty());
        if (!sink.errors().empty()) FAIL_CHECK(sink.errors().front());
        CHECK(sink.flags_clear());
        CHECK(sink.first_race() == "");
        CHECK(sink.count(isa::Opcode::MAD) > 0);
        r.instrs += sink.issued().size();
    }
    // Same tolerance as the op's check: 2 * (k steps) * 2^-24 * sum|ab| + output rounding.
    const double u = out == DType::FP16 ? 0x1p-11 : out == DType::BF16 ? 0x1p-8 : 0.0;
    const double steps = std::ceil(double(k) / p.t.base_k);
    for (uint32_t i = 0; i < m; ++i)
        for (uint32_t j = 0; j < n; ++j) {
            double s = 0, sa = 0;
            for (uint32_t kk = 0; kk < k; ++kk)
                s += r.a[uint64_t{i} * k + kk] * r.b[uint64_t{kk} * n + j],
                    sa += std::fabs(r.a[uint64_t{i} * k + kk] * r.b[uint64_t{kk} * n + j]);
            const double got = mem.val(Pos::GM, p.c + (uint64_t{i} * n + j) * eo, out);
            r.c.push_back(got);
            const double tol = 2 * steps * 0x1p-24 * sa + u * std::fabs(s) + 0x1p-25;
            r.worst_ratio = std::max(r.worst_ratio, std::isnan(got) ? 1e9 : std::fabs(got - s) / tol);
        }
    return r;
}

}  // namespace

TEST_CASE("matmul tiling: every level double-buffered within the device's buffers") {
    for (const DeviceInfo& d : {tiny(), like910(), like910b()})
        for (auto [m, n, k] : {std::array<uint32_t, 3>{512, 512, 512},
                               {17, 33, 1000},
                               {4096, 4096, 4096},
                               {1, 1, 1},
                               {300, 2000, 70}}) {
            INFO(d.arch << " " << d.l0c_bytes << " " << m << "x" << n << "x" << k);
            for (uint32_t eo : {4u, 2u}) check_fits(plan_matmul(m, n, k, 2, eo, d), d, 2, eo);
        }
    // A large shape fills the cores: 910B-like L0C (128 KiB) holds one 128x256 fp32 tile.
    const MatmulTiling t = plan_matmul(4096, 4096, 4096, 2, 4, like910b());
    CHECK(t.l0c_buffers * t.c1_bytes() == like910b().l0c_bytes);
    CHECK(t.block_dim == like910b().cube_cores);
    CHECK(t.nd2nz_instr);
    CHECK_FALSE(plan_matmul(64, 64, 64, 2, 4, like910()).nd2nz_instr);
    CHECK(plan_matmul(64, 64, 64, 2, 4, like910b(), 5).block_dim == 5);
    check_fits(plan_matmul(4096, 4096, 4096, 2, 4, like910b()), like910b(), 2, 4);
    CHECK_THROWS_AS(plan_matmul(0, 4, 4, 2, 4, tiny()), InputError);
    CHECK_THROWS_AS(plan_matmul(64, 64, 64, 2, 4, device("split", 1, 128 << 10, 16 << 10, 512, 0)),
                    InputError);
}

TEST_CASE("matmul tiling: the cost estimate picks big single-buffered tiles for big shapes, many for small") {
    const DeviceInfo d = like910b();
    // 4096^3: a 128x128 tile (two fit L0C) loads (128 + 128) x 16 x 2 B per 64 cube cycles,
    // 128 B/cycle > the 110 B/cycle port: loads bound it. The single-buffered tile of twice the
    // area needs 96 B/cycle: cube-bound, and its drain is short next to k = 4096.
    const MatmulTiling big = plan_matmul(4096, 4096, 4096, 2, 4, d);
    CHECK(big.l0c_buffers == 1);
    CHECK(big.c1_bytes() == d.l0c_bytes);
    CHECK((big.base_m + big.base_n) * 2.0 * d.cube_macs_fp16 / (double(big.base_m) * big.base_n) <=
          d.core_read_max_bytes_per_cycle);
    // A chunk shorter than k holds a power of two of base_k steps.
    const uint32_t steps = big.k_l1 / big.base_k;
    CHECK(big.k_l1 < big.k);
    CHECK((steps & (steps - 1)) == 0);
    // The choice is never worse, by its own estimate, than the fixed 128x128 double-buffered plan.
    for (auto [m, n, k] : {std::array<uint32_t, 3>{512, 512, 512},
                           {1024, 1024, 1024},
                           {4096, 4096, 4096},
                           {1000, 3000, 700},
                           {300, 2000, 70}}) {
        INFO(m << "x" << n << "x" << k);
        const MatmulTiling t = plan_matmul(m, n, k, 2, 4, d);
        check_fits(t, d, 2, 4);
        MatmulTiling fixed = t;
        fixed.base_m = std::min<uint32_t>(128, (m + 15) / 16 * 16);
        fixed.base_n = std::min<uint32_t>(128, (n + 15) / 16 * 16);
        fixed.l0c_buffers = 2;
        fixed.tiles_m = (m + fixed.base_m - 1) / fixed.base_m, fixed.tiles_n = (n + fixed.base_n - 1) / fixed.base_n;
        fixed.block_dim = std::min(fixed.tiles(), d.cube_cores);
        CHECK(matmul_cost(t, 2, 4, d) <= matmul_cost(fixed, 2, 4, d));
    }
    // 512^3: a 128x256 tile would leave 16 of 24 cores idle; the plan keeps at least as many
    // tiles as 128x128 does.
    CHECK(plan_matmul(512, 512, 512, 2, 4, d).tiles() >= 16);
}

TEST_CASE(
    "matmul kernel: split (cube core, FixPipe to GM) fp16 and bf16, ragged shapes, several tiles and k "
    "chunks") {
    for (DType in : {DType::FP16, DType::BF16}) {
        INFO(isa::dtype_name(in));
        const Run r = run_matmul(tiny(), isa::CoreKind::Cube, 100, 70, 300, in, DType::FP32);
        CHECK(r.worst_ratio <= 1.0);
    }
    const Run r = run_matmul(tiny(), isa::CoreKind::Cube, 33, 47, 61, DType::FP16, DType::FP16);
    CHECK(r.worst_ratio <= 1.0);
    // Either ND->NZ route gives the same numbers.
    const Run burst = run_matmul(tiny(), isa::CoreKind::Cube, 33, 47, 61, DType::FP16, DType::FP16, 0);
    CHECK(burst.c == r.c);
    CHECK(burst.instrs > r.instrs);
    // And NZ operands in GM (contiguous loads) too.
    CHECK_FALSE(plan_matmul(33, 47, 61, 2, 2, tiny()).gm_nz);
    const Run nz = run_matmul(tiny(), isa::CoreKind::Cube, 33, 47, 61, DType::FP16, DType::FP16, -1, 1);
    CHECK(nz.c == r.c);
}

TEST_CASE("matmul kernel: coupled (L0C -> UB -> GM through V and MTE3), ragged shapes, fp16/bf16 outputs") {
    DeviceInfo d = tiny();
    d.arch = "coupled";
    for (DType out : {DType::FP32, DType::FP16, DType::BF16}) {
        INFO(isa::dtype_name(out));
        const Run r = run_matmul(d, isa::CoreKind::Coupled, 100, 70, 300, DType::BF16, out);
        CHECK(r.worst_ratio <= 1.0);
    }
    // 910-like buffers: one big tile per block, 4 event ids per pipe pair suffice.
    DeviceInfo d910 = like910();
    d910.event_ids = 4;
    const Run r = run_matmul(d910, isa::CoreKind::Coupled, 130, 260, 700, DType::FP16, DType::FP32);
    CHECK(r.worst_ratio <= 1.0);
    const Run instr = run_matmul(d, isa::CoreKind::Coupled, 100, 70, 300, DType::BF16, DType::FP32, 1, 0);
    CHECK(instr.worst_ratio <= 1.0);
    // Coupled parts take NZ operands by default; row-major ones (burst ND->NZ) give the same C.
    CHECK(plan_matmul(100, 70, 300, 2, 4, d).gm_nz);
    const Run nz = run_matmul(d, isa::CoreKind::Coupled, 100, 70, 300, DType::BF16, DType::FP32);
    const Run nd = run_matmul(d, isa::CoreKind::Coupled, 100, 70, 300, DType::BF16, DType::FP32, 0, 0);
    CHECK(nz.worst_ratio <= 1.0);
    CHECK(nz.c == nd.c);
    CHECK(nz.instrs < nd.instrs);  // one burst per fractal column group instead of one per row
}
