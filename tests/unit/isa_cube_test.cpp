#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>

#include "isa/asm.h"
#include "isa/instr.h"
#include "isa/layout.h"
#include "isa/semantics.h"
#include "isa_test_mem.h"

using namespace sfumato::isa;
using namespace sfumato::isa::test;

namespace {
struct Lcg {
    uint32_t s;
    int next(int lo, int hi) {
        s = s * 1664525u + 1013904223u;
        return lo + static_cast<int>((s >> 8) % static_cast<uint32_t>(hi - lo + 1));
    }
};

// A (m x k) and B (k x n) in GM as row-major fp16 -> ND2NZ into L1 -> load2d (A as is, B with
// fractal transpose) into L0A/L0B -> mad -> FixPipe NZ->ND into GM.
void matmul_on_chip(TestMem& mem, uint32_t M, uint32_t K, uint32_t N, const Instr& fix_tmpl, uint64_t out) {
    const uint32_t m1 = (M + 15) / 16, k1 = (K + 15) / 16, n1 = (N + 15) / 16;
    auto nd2nz = [&](uint64_t gm, uint64_t l1, uint32_t rows, uint32_t cols) {
        Instr in = make_instr(Opcode::COPY_GM_TO_L1_ND2NZ);
        in.src0 = at(Pos::GM, gm), in.dst = at(Pos::L1, l1);
        in.nd.n = static_cast<uint16_t>(rows), in.nd.d = static_cast<uint16_t>(cols), in.nd.src_d = cols;
        in.nd.dst_c0_stride = static_cast<uint16_t>(round_up16(rows)), in.nd.dst_n_stride = 1;
        REQUIRE(validate(in).empty());
        execute(in, mem);
    };
    nd2nz(0x0, 0x0, M, K);
    nd2nz(0x20000, 0x20000, K, N);
    for (uint32_t mb = 0; mb < m1; ++mb) {  // NZ column-major fractals -> ZZ row-major
        Instr in = make_instr(Opcode::LOAD2D);
        in.src0 = at(Pos::L1, 0x0), in.dst = at(Pos::L0A, mb * k1 * 512ull);
        in.l2d.start_index = static_cast<uint16_t>(mb), in.l2d.repeat = static_cast<uint16_t>(k1),
        in.l2d.src_stride = static_cast<uint16_t>(m1);
        execute(in, mem);
    }
    for (uint32_t kb = 0; kb < k1; ++kb) {  // NZ of B -> ZN: reorder and transpose each fractal
        Instr in = make_instr(Opcode::LOAD2D);
        in.src0 = at(Pos::L1, 0x20000), in.dst = at(Pos::L0B, kb * n1 * 512ull);
        in.l2d.start_index = static_cast<uint16_t>(kb), in.l2d.repeat = static_cast<uint16_t>(n1),
        in.l2d.src_stride = static_cast<uint16_t>(k1);
        in.l2d.transpose = 1;
        execute(in, mem);
    }
    Instr mad = make_instr(Opcode::MAD);
    mad.mad.m = static_cast<uint16_t>(M), mad.mad.k = static_cast<uint16_t>(K),
    mad.mad.n = static_cast<uint16_t>(N);
    REQUIRE(validate(mad).empty());
    execute(mad, mem);
    Instr fix = fix_tmpl;
    fix.src0 = at(Pos::L0C, 0), fix.dst = at(Pos::GM, out);
    fix.fix.m = static_cast<uint16_t>(M), fix.fix.n = static_cast<uint16_t>(N);
    fix.fix.src_stride = static_cast<uint16_t>(round_up16(M)), fix.fix.dst_stride = N, fix.fix.nz2nd = 1;
    REQUIRE(validate(fix).empty());
    execute(fix, mem);
}
}  // namespace

TEST_CASE("isa cube: ND2NZ + load2d + mad + fixpipe equals a host matmul (fp16 -> fp32 -> fp16)") {
    const uint32_t M = 40, K = 50, N = 24;
    TestMem mem;
    Lcg rng{7};
    std::vector<double> a(M * K), b(K * N);
    for (uint32_t i = 0; i < M * K; ++i)
        a[i] = rng.next(-300, 300) / 64.0, mem.set(Pos::GM, i * 2, DType::FP16, a[i]);
    for (uint32_t i = 0; i < K * N; ++i)
        b[i] = rng.next(-300, 300) / 64.0, mem.set(Pos::GM, 0x20000 + i * 2, DType::FP16, b[i]);
    for (auto& byte : mem.of(Pos::L1)) byte = 0;
    Instr fix = make_instr(Opcode::FIXPIPE);
    fix.dtype = DType::FP32;
    fix.fix.out_dtype = DType::FP16;
    matmul_on_chip(mem, M, K, N, fix, 0x40000);
    // Second drain of the same accumulator: fp32 out with ReLU.
    fix.fix.out_dtype = DType::FP32, fix.fix.relu = 1;
    Instr f2 = fix;
    f2.src0 = at(Pos::L0C, 0), f2.dst = at(Pos::GM, 0x50000);
    f2.fix.m = M, f2.fix.n = N, f2.fix.src_stride = round_up16(M), f2.fix.dst_stride = N, f2.fix.nz2nd = 1;
    execute(f2, mem);
    int mismatches = 0;
    for (uint32_t i = 0; i < M; ++i)
        for (uint32_t j = 0; j < N; ++j) {
            double s = 0;
            for (uint32_t k = 0; k < K; ++k) s += a[i * K + k] * b[k * N + j];
            const float c = static_cast<float>(s);
            mismatches +=
                mem.val(Pos::GM, 0x40000 + (i * N + j) * 2, DType::FP16) != f16_to_f32(f32_to_f16(c));
            mismatches += mem.val(Pos::GM, 0x50000 + (i * N + j) * 4, DType::FP32) != std::max(c, 0.0f);
        }
    CHECK(mismatches == 0);
}

TEST_CASE("isa cube: int8 mad accumulates into int32, fixpipe quantises back to int8") {
    const uint32_t M = 16, K = 64, N = 16;  // K0 = 32: 2 k-fractals
    TestMem mem;
    Lcg rng{11};
    std::vector<int8_t> a(M * K), b(K * N);
    for (auto& v : a) v = static_cast<int8_t>(rng.next(-128, 127));
    for (auto& v : b) v = static_cast<int8_t>(rng.next(-128, 127));
    auto za = nd_to_zz(reinterpret_cast<uint8_t*>(a.data()), M, K, DType::INT8);
    auto zb = nd_to_zn(reinterpret_cast<uint8_t*>(b.data()), K, N, DType::INT8);
    std::copy(za.begin(), za.end(), mem.of(Pos::L0A).begin());
    std::copy(zb.begin(), zb.end(), mem.of(Pos::L0B).begin());
    Instr mad = make_instr(Opcode::MAD);
    mad.dtype = DType::INT8;
    mad.mad = {M, K, N, 0, 0};
    execute(mad, mem);
    CHECK(mad_blocks(mad) == 2);
    mad.mad.accumulate = 1;  // C += A x B: doubles every entry
    execute(mad, mem);
    auto c = l0c_to_nd(mem.of(Pos::L0C).data(), M, N, DType::INT32);
    int bad = 0;
    std::vector<int32_t> ref(M * N);
    for (uint32_t i = 0; i < M; ++i)
        for (uint32_t j = 0; j < N; ++j) {
            int32_t s = 0;
            for (uint32_t k = 0; k < K; ++k) s += a[i * K + k] * b[k * N + j];
            ref[i * N + j] = 2 * s;
            int32_t got;
            std::memcpy(&got, &c[(i * N + j) * 4], 4);
            bad += got != 2 * s;
        }
    CHECK(bad == 0);
    Instr fix = make_instr(Opcode::FIXPIPE);
    fix.dtype = DType::INT32, fix.src0 = at(Pos::L0C, 0), fix.dst = at(Pos::L1, 0);
    fix.fix.m = M, fix.fix.n = N, fix.fix.out_dtype = DType::INT8, fix.fix.quant = QuantMode::SCALAR;
    fix.fix.nz2nd = 1, fix.fix.dst_stride = N;
    fix.scalar = 1.0 / 64;
    execute(fix, mem);
    bad = 0;
    for (uint32_t i = 0; i < M * N; ++i) {
        const double q = std::nearbyint(ref[i] / 64.0);
        bad += static_cast<int8_t>(mem.of(Pos::L1)[i]) !=
               static_cast<int8_t>(std::max(-128.0, std::min(127.0, q)));
    }
    CHECK(bad == 0);
}

TEST_CASE("isa cube: bias, per-channel dequant and NZ output of fixpipe") {
    TestMem mem;
    const uint32_t M = 16, K = 16, N = 32;
    std::vector<uint8_t> a(M * K * 2), b(K * N * 2);
    for (uint32_t i = 0; i < M * K; ++i)
        store_f64(DType::FP16, &a[i * 2], i % K == i / K ? 1.0 : 0.0);  // identity
    for (uint32_t i = 0; i < K * N; ++i) store_f64(DType::FP16, &b[i * 2], static_cast<double>(i % 97) - 40);
    auto za = nd_to_zz(a.data(), M, K, DType::FP16), zb = nd_to_zn(b.data(), K, N, DType::FP16);
    std::copy(za.begin(), za.end(), mem.of(Pos::L0A).begin());
    std::copy(zb.begin(), zb.end(), mem.of(Pos::L0B).begin());
    for (uint32_t j = 0; j < N; ++j) mem.set(Pos::BT, j * 4, DType::FP32, 1000.0 * j);
    Instr mad = make_instr(Opcode::MAD);
    mad.mad = {M, K, N, 0, 1};
    mad.src2 = at(Pos::BT, 0);
    REQUIRE(validate(mad).empty());
    execute(mad, mem);
    auto c = l0c_to_nd(mem.of(Pos::L0C).data(), M, N, DType::FP32);
    float c5;
    std::memcpy(&c5, &c[(3 * N + 5) * 4], 4);
    CHECK(c5 == (3 * N + 5) % 97 - 40.0f + 5000.0f);
    // One 64-bit quantisation word per column: the scale's fp32 bits in bits 31..0 (low 13 zero).
    for (uint32_t j = 0; j < N; ++j) {
        const float s = j % 2 ? 0.5f : -1.0f;
        uint32_t bits;
        std::memcpy(&bits, &s, 4);
        const uint64_t word = bits;
        std::memcpy(&mem.of(Pos::FB)[j * 8], &word, 8);
    }
    Instr fix = make_instr(Opcode::FIXPIPE);
    fix.dtype = DType::FP32, fix.src0 = at(Pos::L0C, 0), fix.dst = at(Pos::L1, 0), fix.src1 = at(Pos::FB, 0);
    fix.fix.m = M, fix.fix.n = N, fix.fix.quant = QuantMode::VECTOR, fix.fix.relu = 1;
    fix.fix.out_dtype = DType::FP16, fix.fix.nz2nd = 0, fix.fix.dst_stride = M;  // NZ: 16 rows per group
    REQUIRE(validate(fix).empty());
    execute(fix, mem);
    auto nd = nz_to_nd(mem.of(Pos::L1).data(), M, N, DType::FP16);
    int bad = 0;
    for (uint32_t i = 0; i < M; ++i)
        for (uint32_t j = 0; j < N; ++j) {
            const double v = ((i * N + j) % 97 - 40.0 + 1000.0 * j) * (j % 2 ? 0.5 : -1.0);
            bad += load_f64(DType::FP16, &nd[(i * N + j) * 2]) !=
                   f16_to_f32(f32_to_f16(static_cast<float>(std::max(v, 0.0))));
        }
    CHECK(bad == 0);
    // A word's scale keeps bits 31..13 only; a shift or an offset (bits 32..45) is refused by name.
    const float third = -1.0f / 3.0f;
    uint32_t tb;
    std::memcpy(&tb, &third, 4);
    const uint64_t tw = tb;
    std::memcpy(&mem.of(Pos::FB)[0], &tw, 8);
    execute(fix, mem);
    nd = nz_to_nd(mem.of(Pos::L1).data(), M, N, DType::FP16);
    const uint32_t kept_bits = tb & 0xffffe000u;
    float kept;
    std::memcpy(&kept, &kept_bits, 4);
    CHECK(load_f64(DType::FP16, &nd[0]) == f16_to_f32(f32_to_f16(static_cast<float>(
                                                std::max((0 % 97 - 40.0) * double{kept}, 0.0)))));
    const uint64_t shifted = tw | (uint64_t{1} << 36);
    std::memcpy(&mem.of(Pos::FB)[8], &shifted, 8);
    CHECK_THROWS_WITH(execute(fix, mem), Catch::Contains("column 1") && Catch::Contains("shift or an offset"));
    Instr l0c_ub = fix;
    l0c_ub.op = Opcode::COPY_L0C_TO_UB, l0c_ub.pipe = Pipe::V, l0c_ub.dst = at(Pos::UB, 0);
    CHECK(validate(l0c_ub).empty());
    mad.mad.accumulate = 1;
    CHECK_FALSE(validate(mad).empty());  // bias only on overwrite
}

TEST_CASE("isa cube: load3d img2col + mad equals a direct convolution (stride, dilation, padding)") {
    const uint32_t C = 16, H = 7, W = 6, KH = 3, KW = 2, SH = 2, SW = 1, DH = 1, DW = 2, PT = 1, PB = 0,
                   PL = 1, PR = 2, CO = 16;
    TestMem mem;
    Lcg rng{3};
    std::vector<double> x(C * H * W), w(CO * C * KH * KW);
    for (uint32_t c = 0; c < C; ++c)
        for (uint32_t h = 0; h < H; ++h)
            for (uint32_t ww = 0; ww < W; ++ww) {
                const double v = rng.next(-4, 4);
                x[(c * H + h) * W + ww] = v;
                mem.set(Pos::L1, ((h * W + ww) * 16 + c) * 2, DType::FP16, v);  // NC1HWC0 with C1 = 1
            }
    for (auto& v : w) v = rng.next(-3, 3);
    const uint32_t HO = (H + PT + PB - (DH * (KH - 1) + 1)) / SH + 1,
                   WO = (W + PL + PR - (DW * (KW - 1) + 1)) / SW + 1;
    const uint32_t K = KH * KW * C, MEXT = round_up16(HO * WO);
    Instr in = make_instr(Opcode::LOAD3D);
    in.src0 = at(Pos::L1, 0), in.dst = at(Pos::L0A, 0);
    in.l3d.l1_h = H, in.l3d.l1_w = W, in.l3d.c1 = 1, in.l3d.kh = KH, in.l3d.kw = KW;
    in.l3d.stride_h = SH, in.l3d.stride_w = SW, in.l3d.dil_h = DH, in.l3d.dil_w = DW;
    in.l3d.pad_top = PT, in.l3d.pad_bottom = PB, in.l3d.pad_left = PL, in.l3d.pad_right = PR;
    in.l3d.m_ext = MEXT, in.l3d.k_ext = K;
    REQUIRE(validate(in).empty());
    execute(in, mem);
    // B (k x n): k = (y * KW + xx) * C0 + c, as load3d orders the columns.
    std::vector<uint8_t> b(K * CO * 2);
    for (uint32_t y = 0; y < KH; ++y)
        for (uint32_t xx = 0; xx < KW; ++xx)
            for (uint32_t c = 0; c < C; ++c)
                for (uint32_t co = 0; co < CO; ++co)
                    store_f64(DType::FP16, &b[(((y * KW + xx) * C + c) * CO + co) * 2],
                              w[((co * C + c) * KH + y) * KW + xx]);
    auto zb = nd_to_zn(b.data(), K, CO, DType::FP16);
    std::copy(zb.begin(), zb.end(), mem.of(Pos::L0B).begin());
    Instr mad = make_instr(Opcode::MAD);
    mad.mad = {static_cast<uint16_t>(HO * WO), static_cast<uint16_t>(K), CO, 0, 0};
    execute(mad, mem);
    auto out = l0c_to_nd(mem.of(Pos::L0C).data(), HO * WO, CO, DType::FP32);
    int bad = 0;
    for (uint32_t oh = 0; oh < HO; ++oh)
        for (uint32_t ow = 0; ow < WO; ++ow)
            for (uint32_t co = 0; co < CO; ++co) {
                double s = 0;
                for (uint32_t c = 0; c < C; ++c)
                    for (uint32_t y = 0; y < KH; ++y)
                        for (uint32_t xx = 0; xx < KW; ++xx) {
                            const int ih = static_cast<int>(oh * SH + y * DH) - static_cast<int>(PT);
                            const int iw = static_cast<int>(ow * SW + xx * DW) - static_cast<int>(PL);
                            if (ih < 0 || iw < 0 || ih >= static_cast<int>(H) || iw >= static_cast<int>(W))
                                continue;
                            s += x[(c * H + ih) * W + iw] * w[((co * C + c) * KH + y) * KW + xx];
                        }
                float got;
                std::memcpy(&got, &out[((oh * WO + ow) * CO + co) * 4], 4);
                bad += got != static_cast<float>(s);
            }
    CHECK(bad == 0);
    in.l3d.m_ext = 8;
    CHECK_FALSE(validate(in).empty());
    in.l3d.m_ext = 16, in.l3d.kh = 20;
    CHECK_FALSE(validate(in).empty());
}

TEST_CASE("isa cube: load3d into L0B writes the img2col fractals in ZN order (the B operand)") {
    for (DType t : {DType::FP16, DType::FP32}) {
        INFO(dtype_name(t));
        const uint32_t es = dtype_size(t), c0 = 32 / es, C1 = 2, H = 5, W = 7;
        TestMem mem;
        Lcg rng{9};
        for (uint32_t i = 0; i < C1 * H * W * c0; ++i) mem.set(Pos::L1, i * es, t, rng.next(-4, 4));
        Instr a = make_instr(Opcode::LOAD3D);
        a.dtype = t, a.src0 = at(Pos::L1, 0), a.dst = at(Pos::L0A, 0);
        a.l3d.l1_h = H, a.l3d.l1_w = W, a.l3d.c1 = C1, a.l3d.kh = 3, a.l3d.kw = 3, a.l3d.pad_top = 1;
        a.l3d.pad_bottom = 1, a.l3d.pad_left = 1, a.l3d.pad_right = 1, a.l3d.stride_w = 2;
        a.l3d.m_start = 3, a.l3d.m_ext = 32, a.l3d.k_start = static_cast<uint16_t>(c0), a.l3d.k_ext = static_cast<uint16_t>(4 * c0);
        REQUIRE(validate(a).empty());
        execute(a, mem);
        Instr b = a;
        b.dst = at(Pos::L0B, 0);
        REQUIRE(validate(b).empty());
        execute(b, mem);
        const uint32_t m1 = 2, k1 = 4, frac = 16 * c0 * es;
        int bad = 0;
        for (uint32_t mb = 0; mb < m1; ++mb)
            for (uint32_t kb = 0; kb < k1; ++kb)
                bad += std::memcmp(&mem.of(Pos::L0A)[(mb * k1 + kb) * frac], &mem.of(Pos::L0B)[(kb * m1 + mb) * frac], frac) != 0;
        CHECK(bad == 0);
        b.dtype = DType::INT8;
        CHECK_FALSE(validate(b).empty());  // 1-byte img2col goes to L0A only
    }
}

TEST_CASE("isa cube: load3d with transpose writes the img2col matrix as B with the pixels as K, or as A") {
    for (DType t : {DType::FP16, DType::FP32}) {
        INFO(dtype_name(t));
        const uint32_t es = dtype_size(t), c0 = 32 / es, C1 = 2, H = 5, W = 7;
        TestMem mem;
        Lcg rng{11};
        for (uint32_t i = 0; i < C1 * H * W * c0; ++i) mem.set(Pos::L1, i * es, t, rng.next(-4, 4));
        Instr a = make_instr(Opcode::LOAD3D);
        a.dtype = t, a.src0 = at(Pos::L1, 0), a.dst = at(Pos::L0A, 0);
        a.l3d.l1_h = H, a.l3d.l1_w = W, a.l3d.c1 = C1, a.l3d.kh = 3, a.l3d.kw = 2, a.l3d.pad_top = 1;
        a.l3d.pad_bottom = 1, a.l3d.pad_left = 1, a.l3d.stride_h = 2;
        const uint32_t MEXT = 32, KEXT = 32;
        a.l3d.m_start = 2, a.l3d.m_ext = MEXT, a.l3d.k_start = static_cast<uint16_t>(c0), a.l3d.k_ext = KEXT;
        REQUIRE(validate(a).empty());
        execute(a, mem);  // the img2col window as A (m x k, ZZ): the reference layout
        Instr b = a;
        b.dst = at(Pos::L0B, 0), b.l3d.transpose = 1;
        REQUIRE(validate(b).empty());
        execute(b, mem);
        // Element (m, k) of the window: A's ZZ offset; B's (K = m, N = k) ZN offset.
        int bad = 0;
        for (uint32_t m = 0; m < MEXT; ++m)
            for (uint32_t k = 0; k < KEXT; ++k) {
                const uint64_t za = ((uint64_t{m / 16} * (KEXT / c0) + k / c0) * 16 * c0 + (m % 16) * c0 + k % c0) * es;
                bad += std::memcmp(&mem.of(Pos::L0A)[za], &mem.of(Pos::L0B)[zn_offset(m, k, KEXT, c0, es)], es) != 0;
            }
        CHECK(bad == 0);
        // Into L0A: A with the window's columns as rows (ZZ over m_ext columns).
        TestMem m2 = mem;
        Instr c = b;
        c.dst = at(Pos::L0A, 0x4000);
        REQUIRE(validate(c).empty());
        execute(c, m2);
        bad = 0;
        for (uint32_t m = 0; m < MEXT; ++m)
            for (uint32_t k = 0; k < KEXT; ++k) {
                const uint64_t za = ((uint64_t{m / 16} * (KEXT / c0) + k / c0) * 16 * c0 + (m % 16) * c0 + k % c0) * es;
                bad += std::memcmp(&m2.of(Pos::L0A)[za], &m2.of(Pos::L0A)[0x4000 + zz_offset(k, m, MEXT, c0, es)], es) != 0;
            }
        CHECK(bad == 0);
        if (c0 == 8) {  // fp32: a k extension of 24 pads N to 32 (whole 16-column fractals), padding untouched
            TestMem m3 = mem;
            for (uint32_t i = 0; i < MEXT * 32; ++i) m3.set(Pos::L0B, i * es, t, 99);
            Instr d = b;
            d.l3d.k_ext = 24;
            REQUIRE(validate(d).empty());
            execute(d, m3);
            bad = 0;
            for (uint32_t m = 0; m < MEXT; ++m)
                for (uint32_t k = 0; k < 32; ++k) {
                    const uint64_t za = ((uint64_t{m / 16} * (KEXT / c0) + k / c0) * 16 * c0 + (m % 16) * c0 + k % c0) * es;
                    const uint8_t* got = &m3.of(Pos::L0B)[zn_offset(m, k, 32, c0, es)];
                    bad += k < 24 ? std::memcmp(&mem.of(Pos::L0A)[za], got, es) != 0 : load_f64(t, got) != 99;
                }
            CHECK(bad == 0);
        }
    }
    Instr i8 = make_instr(Opcode::LOAD3D);
    i8.dtype = DType::INT8, i8.src0 = at(Pos::L1, 0), i8.dst = at(Pos::L0A, 0), i8.l3d.transpose = 1;
    i8.l3d.k_ext = 32;
    CHECK_FALSE(validate(i8).empty());  // 2- and 4-byte types only
}

TEST_CASE("isa cube: bf16 and fp32 inputs accumulate in fp32 (K0 = 16 and 8)") {
    for (DType t : {DType::BF16, DType::FP32}) {
        INFO(dtype_name(t));
        const uint32_t M = 20, K = 24, N = 18, es = dtype_size(t);
        TestMem mem;
        Lcg rng{5};
        std::vector<uint8_t> a(M * K * es), b(K * N * es);
        std::vector<double> av(M * K), bv(K * N);
        for (uint32_t i = 0; i < M * K; ++i)
            store_f64(t, &a[i * es], rng.next(-99, 99) / 8.0), av[i] = load_f64(t, &a[i * es]);
        for (uint32_t i = 0; i < K * N; ++i)
            store_f64(t, &b[i * es], rng.next(-99, 99) / 3.0), bv[i] = load_f64(t, &b[i * es]);
        auto za = nd_to_zz(a.data(), M, K, t), zb = nd_to_zn(b.data(), K, N, t);
        std::copy(za.begin(), za.end(), mem.of(Pos::L0A).begin());
        std::copy(zb.begin(), zb.end(), mem.of(Pos::L0B).begin());
        Instr mad = make_instr(Opcode::MAD);
        mad.dtype = t;
        mad.mad = {M, K, N, 0, 0};
        REQUIRE(validate(mad).empty());
        execute(mad, mem);
        CHECK(mad_blocks(mad) == 2 * ((K + cube_k0(t) - 1) / cube_k0(t)) * 2);
        auto c = l0c_to_nd(mem.of(Pos::L0C).data(), M, N, DType::FP32);
        int bad = 0;
        for (uint32_t i = 0; i < M; ++i)
            for (uint32_t j = 0; j < N; ++j) {
                double s = 0;
                for (uint32_t k = 0; k < K; ++k) s += av[i * K + k] * bv[k * N + j];
                float got;
                std::memcpy(&got, &c[(i * N + j) * 4], 4);
                bad += got != static_cast<float>(s);
            }
        CHECK(bad == 0);
    }
    Instr bad = make_instr(Opcode::MAD);
    bad.dtype = DType::INT16;
    CHECK_FALSE(validate(bad).empty());
}

TEST_CASE("isa cube: fp32 mad with kalign steps over A's k padding to 16 in L0A (kDirectionAlign)") {
    // A (20 x 20) stored with its rows padded to 32 k (4 fractals of 8 per row block); the fourth
    // fractal of each row block and the columns past k hold NaN, which must never be read.
    const uint32_t M = 20, K = 20, KP = 32, N = 18;
    TestMem mem;
    Lcg rng{11};
    std::vector<float> a(M * KP, std::nanf("")), b(K * N);
    for (uint32_t i = 0; i < M; ++i)
        for (uint32_t k = 0; k < K; ++k) a[i * KP + k] = static_cast<float>(rng.next(-9, 9));
    for (float& v : b) v = static_cast<float>(rng.next(-9, 9));
    auto za = nd_to_zz(reinterpret_cast<const uint8_t*>(a.data()), M, KP, DType::FP32);
    auto zb = nd_to_zn(reinterpret_cast<const uint8_t*>(b.data()), K, N, DType::FP32);
    std::copy(za.begin(), za.end(), mem.of(Pos::L0A).begin());
    std::copy(zb.begin(), zb.end(), mem.of(Pos::L0B).begin());
    Instr mad = make_instr(Opcode::MAD);
    mad.dtype = DType::FP32;
    mad.mad.m = M, mad.mad.k = K, mad.mad.n = N, mad.mad.kalign16 = 1;
    REQUIRE(validate(mad).empty());
    // A's footprint ends with row block 1's third fractal: (1 x 4 + 3) fractals of 512 B.
    Extent ex[kMaxExtents];
    REQUIRE(footprint(mad, ex) >= 1);
    CHECK(ex[0].pos == Pos::L0A);
    CHECK(ex[0].hi - ex[0].lo == (1 * 4 + 3) * 512u);
    execute(mad, mem);
    auto c = l0c_to_nd(mem.of(Pos::L0C).data(), M, N, DType::FP32);
    int bad = 0;
    for (uint32_t i = 0; i < M; ++i)
        for (uint32_t j = 0; j < N; ++j) {
            double s = 0;
            for (uint32_t k = 0; k < K; ++k) s += double{a[i * KP + k]} * double{b[k * N + j]};
            float got;
            std::memcpy(&got, &c[(i * N + j) * 4], 4);
            bad += got != static_cast<float>(s);
        }
    CHECK(bad == 0);
    // Without it, row block 1 starts at the fourth fractal (NaN): the result is not A x B.
    mad.mad.kalign16 = 0;
    execute(mad, mem);
    c = l0c_to_nd(mem.of(Pos::L0C).data(), M, N, DType::FP32);
    float r16;
    std::memcpy(&r16, &c[(16 * N) * 4], 4);
    CHECK(std::isnan(r16));
    // fp32 only, and not with GEMV; the text form round-trips.
    mad.mad.kalign16 = 1;
    CHECK(assemble(disassemble(mad))[0] == mad);
    CHECK_THAT(disassemble(mad), Catch::Contains("kalign=1"));
    Instr h = mad;
    h.dtype = DType::FP16;
    CHECK_FALSE(validate(h).empty());
    Instr g = mad;
    g.mad.m = 1, g.mad.gemv = 1;
    CHECK_FALSE(validate(g).empty());
}

TEST_CASE("isa cube: fixpipe with nd_num drains several L0C matrices to strided ND matrices") {
    // Three 20 x 24 fp32 matrices in L0C (two column fractals of 32 rows: 4 KiB each), 5 KiB apart
    // (src_nd_stride 5 x 1024 B), to GM as ND with 500 elements between the starts of consecutive
    // matrices; what lies between them is untouched.
    const uint32_t M = 20, N = 24, Q = 3, SRC = 5, DST = 500, mp = 32;
    TestMem mem;
    for (uint32_t q = 0; q < Q; ++q)
        for (uint32_t i = 0; i < mp; ++i)
            for (uint32_t j = 0; j < 32; ++j)
                mem.set(Pos::L0C, q * SRC * 1024ull + nz_offset(i, j, mp, 16, 4), DType::FP32,
                        q * 1000.0 + i * 32 + j);
    for (uint32_t e = 0; e < Q * DST; ++e) mem.set(Pos::GM, 0x1000 + e * 4ull, DType::FP32, -1.0);
    Instr fix = make_instr(Opcode::FIXPIPE);
    fix.dtype = DType::FP32, fix.src0 = at(Pos::L0C, 0), fix.dst = at(Pos::GM, 0x1000);
    fix.fix.m = M, fix.fix.n = N, fix.fix.src_stride = mp, fix.fix.dst_stride = N, fix.fix.nz2nd = 1;
    fix.fix.out_dtype = DType::FP32, fix.fix.nd_num = Q, fix.fix.src_nd_stride = SRC,
    fix.fix.dst_nd_stride = DST;
    REQUIRE(validate(fix).empty());
    CHECK(gm_bytes(fix) == uint64_t{Q} * M * N * 4);
    execute(fix, mem);
    int bad = 0;
    for (uint32_t q = 0; q < Q; ++q)
        for (uint32_t e = 0; e < DST; ++e) {
            const double want = e < M * N ? q * 1000.0 + (e / N) * 32 + e % N : -1.0;
            bad += mem.val(Pos::GM, 0x1000 + (uint64_t{q} * DST + e) * 4, DType::FP32) != want;
        }
    CHECK(bad == 0);
    Extent ex[kMaxExtents];
    REQUIRE(footprint(fix, ex) == 2);
    CHECK(ex[0].hi - ex[0].lo == (Q - 1ull) * SRC * 1024 + 2 * mp * 64);
    CHECK(ex[1].hi - ex[1].lo == ((Q - 1ull) * DST + (M - 1ull) * N + N) * 4);
    // Several matrices only with NZ -> ND; nd_num 0 is no instruction; unit flags are 0, 2 or 3.
    Instr nz = fix;
    nz.fix.nz2nd = 0, nz.fix.dst_stride = 640;
    CHECK_FALSE(validate(nz).empty());
    Instr zero = fix;
    zero.fix.nd_num = 0;
    CHECK_FALSE(validate(zero).empty());
    Instr same = fix;  // every matrix from one place: not a batch (the reference: srcNdStride 1..512)
    same.fix.src_nd_stride = 0;
    CHECK_FALSE(validate(same).empty());
    Instr uf = fix;
    uf.fix.unit_flag = 1;
    CHECK_FALSE(validate(uf).empty());
    uf.fix.unit_flag = 3;
    CHECK(validate(uf).empty());
}

TEST_CASE("isa cube: copy_l0c_to_ub drains the accumulator into UB like fixpipe") {
    TestMem mem;
    const uint32_t M = 16, N = 16;
    for (uint32_t i = 0; i < M; ++i)
        for (uint32_t j = 0; j < N; ++j) mem.set(Pos::L0C, nz_offset(i, j, 16, 16, 4), DType::FP32, i * 100.0 + j - 50.5);
    Instr in = make_instr(Opcode::COPY_L0C_TO_UB);
    in.dtype = DType::FP32, in.dst.addr = 0x40;
    in.fix.m = M, in.fix.n = N, in.fix.out_dtype = DType::FP16, in.fix.nz2nd = 1, in.fix.dst_stride = N, in.fix.relu = 1;
    REQUIRE(validate(in).empty());
    CHECK(exec_pipe(in) == Pipe::V);
    execute(in, mem);
    for (uint32_t i = 0; i < M; ++i)
        for (uint32_t j = 0; j < N; ++j)
            CHECK(mem.val(Pos::UB, 0x40 + (i * N + j) * 2, DType::FP16) ==
                  f16_to_f32(f32_to_f16(std::max(0.0f, static_cast<float>(i * 100.0 + j - 50.5)))));
}

TEST_CASE("isa cube: fixpipe with atomic add adds into GM in the output type, and only into GM") {
    TestMem mem;
    const uint32_t M = 16, N = 16;
    // L0C holds C[i][j] = i - j (fp32, NZ: column group j / 16, row i, 16 columns of 4 B).
    for (uint32_t i = 0; i < M; ++i)
        for (uint32_t j = 0; j < N; ++j) mem.set(Pos::L0C, (i * 16 + j) * 4ull, DType::FP32, double(i) - double(j));
    for (uint32_t e = 0; e < M * N; ++e) mem.set(Pos::GM, 0x1000 + e * 4ull, DType::FP32, 0.25 * e);
    for (uint32_t e = 0; e < M * N; ++e) mem.set(Pos::GM, 0x3000 + e * 2ull, DType::FP16, 1.0);
    Instr fix = make_instr(Opcode::FIXPIPE);
    fix.dtype = DType::FP32, fix.src0 = at(Pos::L0C, 0), fix.dst = at(Pos::GM, 0x1000);
    fix.fix.m = M, fix.fix.n = N, fix.fix.src_stride = 16, fix.fix.dst_stride = N, fix.fix.nz2nd = 1;
    fix.fix.out_dtype = DType::FP32, fix.fix.atomic = 1;
    REQUIRE(validate(fix).empty());
    execute(fix, mem);
    execute(fix, mem);  // twice: GM = old + 2 C
    Instr half = fix;
    half.dst = at(Pos::GM, 0x3000), half.fix.out_dtype = DType::FP16;
    execute(half, mem);
    int bad = 0;
    for (uint32_t i = 0; i < M; ++i)
        for (uint32_t j = 0; j < N; ++j) {
            const double c = double(i) - double(j);
            bad += mem.val(Pos::GM, 0x1000 + (i * N + j) * 4ull, DType::FP32) != 0.25 * (i * N + j) + 2 * c;
            bad += mem.val(Pos::GM, 0x3000 + (i * N + j) * 2ull, DType::FP16) != 1.0 + c;
        }
    CHECK(bad == 0);
    Instr to_l1 = fix;
    to_l1.dst = at(Pos::L1, 0);
    CHECK_FALSE(validate(to_l1).empty());  // atomic add only into GM
    Instr relu = fix;
    relu.fix.relu = 1;
    CHECK_FALSE(validate(relu).empty());  // a partial sum is never clipped
}
