// Kernel-API queues on the real core model: the flags TQue inserts for the cube positions
// (A1/B1: MTE2->MTE1, A2/B2: MTE1->M, CO1: M->V on coupled cores, CO2: V->MTE3) carry data
// through every pipe of a coupled core, double-buffered over several rounds, and the reference
// matmul kernel gives the host's numbers there. (Split parts need the model's memory path for
// FixPipe to GM and ND2NZ loads; tests/unit/matmul_kernel_test.cpp covers their instruction
// streams functionally meanwhile.)
#include <catch2/catch.hpp>
#include <cmath>
#include <random>

#include "isa/layout.h"
#include "runtime/kernel/api.h"
#include "runtime/ops/matmul.h"
#include "tests/sim_harness.h"

using namespace sfumato;
using namespace sfumato::test;
using namespace sfumato::kernel;

namespace {

// `rounds` products of one 16x16 fp16 A tile (ND in GM, as NZ by one 32 B burst per row) with
// the identity B: out[r] = A[r] through L1, L0A/L0B, L0C, UB. Returns what GM holds.
void identity_rounds(isa::IInstrSink& sink, uint64_t a_gm, uint64_t eye_gm, uint64_t out_gm, int rounds) {
    KernelContext ctx(sink);
    TPipe pipe(ctx);
    TQue<TPosition::A1> qa1;
    TQue<TPosition::B1> qb1;
    TQue<TPosition::A2> qa2;
    TQue<TPosition::B2> qb2;
    TQue<TPosition::CO1> qc1;
    TQue<TPosition::CO2> qc2;
    pipe.InitBuffer(qa1, 2, 512);
    pipe.InitBuffer(qb1, 2, 512);
    pipe.InitBuffer(qa2, 2, 512);
    pipe.InitBuffer(qb2, 2, 512);
    pipe.InitBuffer(qc1, 2, 1024);
    pipe.InitBuffer(qc2, 2, 1024);
    GlobalTensor<half> ga, geye;
    GlobalTensor<float> gout;
    ga.SetGlobalBuffer(a_gm, 256 * rounds);
    geye.SetGlobalBuffer(eye_gm, 256);
    gout.SetGlobalBuffer(out_gm, 256 * rounds);
    for (int r = 0; r < rounds; ++r) {
        auto a1 = qa1.AllocTensor<half>();
        DataCopy(a1, ga[256 * r], DataCopyParams{1, 16, 0, 0});  // 16 rows of 32 B = one NZ fractal
        qa1.EnQue(a1);
        auto b1 = qb1.AllocTensor<half>();
        DataCopy(b1, geye, DataCopyParams{1, 16, 0, 0});
        qb1.EnQue(b1);
        a1 = qa1.DeQue<half>();
        b1 = qb1.DeQue<half>();
        auto a2 = qa2.AllocTensor<half>();
        LoadData(a2, a1, LoadData2DParams{0, 1, 1, 0, false});
        qa2.EnQue(a2);
        auto b2 = qb2.AllocTensor<half>();
        LoadData(b2, b1, LoadData2DParams{0, 1, 1, 0, true});
        qb2.EnQue(b2);
        qa1.FreeTensor(a1);
        qb1.FreeTensor(b1);
        a2 = qa2.DeQue<half>();
        b2 = qb2.DeQue<half>();
        auto c1 = qc1.AllocTensor<float>();
        Mmad(c1, a2, b2, MmadParams{16, 16, 16, true});
        qc1.EnQue(c1);
        qa2.FreeTensor(a2);
        qb2.FreeTensor(b2);
        c1 = qc1.DeQue<float>();
        auto c2 = qc2.AllocTensor<float>();
        DataCopy(c2, c1, FixpipeParams{16, 16});
        qc2.EnQue(c2);
        qc1.FreeTensor(c1);
        c2 = qc2.DeQue<float>();
        DataCopy(gout[256 * r], c2, 256);
        qc2.FreeTensor(c2);
    }
}

}  // namespace

TEST_CASE("kapi queues: cube positions carry data through every pipe of a coupled core, double-buffered") {
    Harness h({"chip.arch=coupled"}, "");  // the defaults: tiny's cores, coupled (no AIV keys set)
    const int rounds = 5;
    std::vector<uint16_t> a(256 * rounds), eye(256, 0);
    for (size_t i = 0; i < a.size(); ++i)
        a[i] = isa::f32_to_f16(static_cast<float>(static_cast<int>(i % 97) - 48));
    for (int i = 0; i < 16; ++i) eye[i * 16 + i] = isa::f32_to_f16(1.0f);
    const uint64_t a_gm = 0x0, eye_gm = 0x10000, out_gm = 0x20000;
    h.chip().gm()->write(a_gm, a.data(), a.size() * 2);
    h.chip().gm()->write(eye_gm, eye.data(), eye.size() * 2);
    auto t = Harness::kernel([&](isa::IInstrSink& s) { identity_rounds(s, a_gm, eye_gm, out_gm, rounds); }, 1,
                             KernelKind::Cube);
    REQUIRE(h.run({t}));
    std::vector<float> out(256 * rounds);
    h.chip().gm()->read(out_gm, out.data(), out.size() * 4);
    int bad = 0;
    for (size_t i = 0; i < out.size(); ++i) bad += out[i] != isa::f16_to_f32(a[i]);
    CHECK(bad == 0);
    for (isa::Pipe p : {isa::Pipe::MTE2, isa::Pipe::MTE1, isa::Pipe::M, isa::Pipe::V, isa::Pipe::MTE3}) {
        INFO(isa::pipe_name(p));
        CHECK(t->pipe_busy[static_cast<size_t>(p)] > 0);
    }
}

TEST_CASE("kapi queues: the reference matmul kernel on a coupled core matches the host, ragged shape") {
    Harness h({"chip.arch=coupled"}, "");  // the defaults: tiny's cores, coupled (no AIV keys set)
    const uint32_t m = 40, n = 56, k = 300;  // several k chunks on tiny buffers
    const DeviceInfo& dev = h.chip().info();
    ops::MatmulPlan p;
    p.t = ops::plan_matmul(m, n, k, 2, 4, dev);
    REQUIRE_FALSE(p.t.nd2nz_instr);
    p.t.gm_nz = false;  // row-major operands: the burst ND->NZ path (the default takes NZ)
    p.a = 0x0, p.b = 0x10000, p.c = 0x40000;
    std::mt19937 gen(3);
    std::uniform_real_distribution<float> d(-1, 1);
    std::vector<uint16_t> a(m * k), b(k * n);
    for (auto& v : a) v = isa::f32_to_f16(d(gen));
    for (auto& v : b) v = isa::f32_to_f16(d(gen));
    h.chip().gm()->write(p.a, a.data(), a.size() * 2);
    h.chip().gm()->write(p.b, b.data(), b.size() * 2);
    auto t = Harness::kernel(
        [&](isa::IInstrSink& s) { ops::run_matmul_kernel(s, p, isa::DType::FP16, isa::DType::FP32); },
        p.t.block_dim, KernelKind::Cube);
    REQUIRE(h.run({t}));
    std::vector<float> c(m * n);
    h.chip().gm()->read(p.c, c.data(), c.size() * 4);
    double worst = 0;
    const double steps = std::ceil(double(k) / p.t.base_k);
    for (uint32_t i = 0; i < m; ++i)
        for (uint32_t j = 0; j < n; ++j) {
            double s = 0, sa = 0;
            for (uint32_t kk = 0; kk < k; ++kk) {
                const double x = double(isa::f16_to_f32(a[i * k + kk])) * isa::f16_to_f32(b[kk * n + j]);
                s += x, sa += std::fabs(x);
            }
            worst = std::max(worst, std::fabs(c[i * n + j] - s) / (2 * steps * 0x1p-24 * sa + 1e-30));
        }
    CHECK(worst <= 1.0);
    CHECK(t->pipe_busy[static_cast<size_t>(isa::Pipe::M)] > 0);
}
