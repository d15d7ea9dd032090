// What the cube matmul unit tests share (no chip model): the devices they plan and run on (a tiny
// part whose small buffers force several k chunks and steps; the 910B-like part's figures the
// plan's choices for large shapes depend on, HARDWARE.md and configs/ascend910b-like.ini), and
// run_case: every block's instruction stream run in program order on a functional memory,
// C against a host reference with the tolerance derived from the types and the k steps.
#pragma once
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kapi_sink.h"
#include "runtime/ops/cube_epilogue.h"
#include "runtime/ops/cube_matmul.h"
#include "runtime/ops/matmul.h"
#include "sim/device_if.h"

namespace sfumato::test {

inline DeviceInfo tiny(const std::string& arch = "split") {
    DeviceInfo d;
    d.arch = arch;
    d.cube_cores = 2;
    d.l1_bytes = 128 << 10, d.l0a_bytes = d.l0b_bytes = 16 << 10, d.l0c_bytes = 32 << 10,
    d.ub_bytes = 32 << 10;
    d.event_ids = 8;
    return d;
}

// aivs: vector cores per cube core (0: the cube alone, no AIV prefetch).
inline DeviceInfo split_910b_like(uint32_t aivs) {
    DeviceInfo d;
    d.arch = "split";
    d.cube_cores = 24, d.aiv_per_aic = aivs, d.vector_cores = 24 * aivs;
    d.l1_bytes = 512 << 10, d.l0a_bytes = d.l0b_bytes = 64 << 10, d.l0c_bytes = 128 << 10,
    d.ub_bytes = 192 << 10;
    d.cube_macs_fp16 = 4096;
    d.core_read_max_bytes_per_cycle = 110, d.core_gm_read_bytes_per_cycle = 32,
    d.core_write_max_bytes_per_cycle = 86;
    d.mem_max_bytes_per_cycle = 48 * 64, d.gm_bytes_per_cycle = 911;
    d.l2_bytes = 192ull << 20;
    return d;
}

using isa::DType;
using isa::Pos;
using kernel::test::KapiSink;
using ops::BiasForm;
using ops::CubeMatmulPlan;
using ops::MatmulProblem;
using ops::plan_matmul;
using ops::run_cube_matmul;

struct Case {
    uint32_t batch = 1, m = 0, n = 0, k = 0;
    DType in = DType::FP16, out = DType::FP32;
    bool ta = false, tb = false;
    bool b_broadcast = false;  // B shared by every batch (stride 0)
    BiasForm bias = BiasForm::None;
    double alpha = 1.0, beta = 1.0;
    bool relu = false;
    uint32_t k_rot = 0;  // 0: the plan's
    // A and B in GM as NZ of the matrices as stored (MatmulTiling::gm_nz; 16-bit, batch 1),
    // else row-major.
    bool nz = false;
    bool a_resident = false;  // A resident in L1 (MatmulTiling::a_slots: every chunk of k), forced
};

// Runs every block on `kind` cores; returns max |err| / tolerance over C (and C itself in `got_c`).
inline double run_case(const Case& c, const DeviceInfo& dev, isa::CoreKind kind,
                       std::vector<double>* got_c = nullptr) {
    const uint32_t es = isa::dtype_size(c.in), eo = isa::dtype_size(c.out);
    MatmulProblem pr;
    pr.batch = c.batch, pr.m = c.m, pr.n = c.n, pr.k = c.k, pr.in_es = es, pr.out_es = eo;
    pr.trans_a = c.ta, pr.trans_b = c.tb, pr.bias = c.bias;
    pr.split_k_ok = false;  // blocks run one after another here: no cross-core barrier
    CubeMatmulPlan p;
    p.t = plan_matmul(pr, dev);
    p.t.gm_nz = c.nz;
    if (c.nz) REQUIRE((es == 2 && c.batch == 1));
    if (c.k_rot) p.t.k_rot = c.k_rot;
    if (c.a_resident) {
        p.t.a_slots = p.t.k_chunks();
        REQUIRE(p.t.a_slots > p.t.buffers);
        REQUIRE(p.t.a_slots * p.t.a1_bytes(es) + p.t.buffers * (p.t.b1_bytes(es) + 32) <= dev.l1_bytes);
    }
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
    // The stored shapes (rows x columns) of A and B.
    const uint32_t ar = c.ta ? c.k : c.m, ac = c.ta ? c.m : c.k, br = c.tb ? c.n : c.k, bc = c.tb ? c.k : c.n;
    const uint64_t a_elems = c.nz ? ops::nz_elems(ar, ac) : c.batch * sa;
    const uint64_t b_elems = c.nz ? ops::nz_elems(br, bc) : nb * sb;
    p.a = 0x1000;
    p.b = p.a + up(a_elems * es);
    p.bias = p.b + up(b_elems * es);
    p.c = p.bias + up(std::max(c.m, c.n) * es);
    isa::test::TestMem mem(1 << 20, p.c + c.batch * sc * eo + 4096);
    for (auto& byte : mem.of(Pos::GM)) byte = 0xff;  // poison: unwritten outputs are nan
    std::mt19937 gen(11);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    std::uniform_int_distribution<int> di(-128, 127);
    // v[i]: element i of the row-major (rows x cols) matrix, placed row-major or, with c.nz, as NZ
    // (its padding zeros).
    auto fill = [&](uint64_t base, uint64_t count, uint32_t rows, uint32_t cols, bool nz) {
        if (nz)
            for (uint64_t i = 0; i < ops::nz_elems(rows, cols) * es; ++i) mem.of(Pos::GM)[base + i] = 0;
        std::vector<double> v(count);
        for (uint64_t i = 0; i < count; ++i) {
            const double x = c.in == DType::INT8 ? di(gen) : d(gen);
            const uint64_t at = base + (nz ? ops::nz_index(rows, i / cols, i % cols) : i) * es;
            mem.set(Pos::GM, at, c.in, x);
            v[i] = mem.val(Pos::GM, at, c.in);
        }
        return v;
    };
    const std::vector<double> a = fill(p.a, c.batch * sa, ar, ac, c.nz), b = fill(p.b, nb * sb, br, bc, c.nz);
    const std::vector<double> bias = fill(p.bias, std::max(c.m, c.n), 1, std::max(c.m, c.n), false);
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
                if (got_c) got_c->push_back(got);
            }
    return worst;
}


}  // namespace sfumato::test
