#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>

#include "isa/instr.h"
#include "isa/semantics.h"
#include "isa_test_mem.h"

using namespace sfumato::isa;
using namespace sfumato::isa::test;

namespace {
constexpr Pos U = Pos::UB;

Instr vec(Opcode op, DType t, uint64_t d, uint64_t s0, uint64_t s1 = 0, uint16_t repeat = 1) {
    Instr in = make_instr(op);
    in.dtype = t;
    in.dst = at(U, d);
    in.src0 = at(U, s0);
    in.src1 = at(U, s1);
    in.vec.repeat = repeat;
    return in;
}
void fill_seq(TestMem& m, uint64_t base, DType t, uint32_t n, double start, double step) {
    for (uint32_t i = 0; i < n; ++i) m.set(U, base + i * dtype_size(t), t, start + step * i);
}
}  // namespace

TEST_CASE("isa vector: fp16 vadd over repeats with continuous mask leaves masked lanes untouched") {
    TestMem m;
    fill_seq(m, 0x0, DType::FP16, 256, 0, 1);
    fill_seq(m, 0x1000, DType::FP16, 256, 0.5, 0);
    for (uint32_t i = 0; i < 256; ++i) m.set(U, 0x2000 + 2 * i, DType::FP16, -7);
    Instr in = vec(Opcode::VADD, DType::FP16, 0x2000, 0x0, 0x1000, 2);
    in.vec.mask_lo = (1ull << 40) - 1, in.vec.mask_hi = 0;  // mask=40
    REQUIRE(validate(in).empty());
    execute(in, m);
    for (uint32_t r = 0; r < 2; ++r)
        for (uint32_t l = 0; l < 128; ++l) {
            const double got = m.val(U, 0x2000 + (r * 128 + l) * 2, DType::FP16);
            CHECK(got == (l < 40 ? (r * 128 + l) + 0.5 : -7.0));
        }
}

TEST_CASE("isa vector: 128-bit mask selects lanes in both halves") {
    TestMem m;
    fill_seq(m, 0x0, DType::FP16, 128, 1, 1);
    Instr in = vec(Opcode::VMULS, DType::FP16, 0x400, 0x0);
    in.scalar = 2.0;
    in.vec.mask_lo = 0x5ull, in.vec.mask_hi = 0x8000000000000000ull;  // lanes 0, 2, 127
    execute(in, m);
    CHECK(m.val(U, 0x400 + 0, DType::FP16) == 2.0);
    CHECK(m.val(U, 0x400 + 2, DType::FP16) == 0.0);
    CHECK(m.val(U, 0x400 + 4, DType::FP16) == 6.0);
    CHECK(m.val(U, 0x400 + 254, DType::FP16) == 256.0);
}

TEST_CASE("isa vector: block and repeat strides address the right bytes (fp32)") {
    TestMem m;
    // src0: blocks spaced 2 blocks apart, repeats 20 blocks apart; dst contiguous.
    Instr in = vec(Opcode::VABS, DType::FP32, 0x4000, 0x0, 0, 3);
    in.vec.src0_blk_stride = 2, in.vec.src0_rep_stride = 20;
    for (uint32_t r = 0; r < 3; ++r)
        for (uint32_t l = 0; l < 64; ++l)
            m.set(U, (r * 20 + (l / 8) * 2) * 32 + (l % 8) * 4, DType::FP32, -(r * 1000.0 + l));
    execute(in, m);
    for (uint32_t r = 0; r < 3; ++r)
        for (uint32_t l = 0; l < 64; ++l)
            CHECK(m.val(U, 0x4000 + (r * 64 + l) * 4, DType::FP32) == r * 1000.0 + l);
    Extent ex[kMaxExtents];
    REQUIRE(footprint(in, ex) == 2);
    CHECK(ex[0].lo == 0);
    CHECK(ex[0].hi == (2 * 20 + 7 * 2) * 32 + 32);
    CHECK(ex[1].hi - ex[1].lo == 3 * 256);
    CHECK(ex[1].write);
}

TEST_CASE("isa vector: in-place ops read a repeat's sources before writing it") {
    TestMem m;
    fill_seq(m, 0x0, DType::FP32, 64, 1, 1);
    // dst overlaps src0 shifted by one block: hardware reads the whole repeat first.
    Instr in = vec(Opcode::VADD, DType::FP32, 0x20, 0x0, 0x0);
    execute(in, m);
    for (uint32_t l = 0; l < 64; ++l) CHECK(m.val(U, 0x20 + l * 4, DType::FP32) == 2.0 * (l + 1));
}

TEST_CASE("isa vector: fp16 arithmetic rounds once to fp16 and saturates to inf") {
    TestMem m;
    m.set(U, 0x0, DType::FP16, 2048), m.set(U, 0x100, DType::FP16, 1);       // 2049 ties to 2048
    m.set(U, 0x2, DType::FP16, 2048), m.set(U, 0x102, DType::FP16, 3);       // 2051 ties to 2052
    m.set(U, 0x4, DType::FP16, 60000), m.set(U, 0x104, DType::FP16, 60000);  // overflow
    m.set(U, 0x6, DType::FP16, std::ldexp(1.0, -24)), m.set(U, 0x106, DType::FP16, std::ldexp(1.0, -24));
    Instr in = vec(Opcode::VADD, DType::FP16, 0x200, 0x0, 0x100);
    in.vec.mask_lo = 0xf, in.vec.mask_hi = 0;
    execute(in, m);
    CHECK(m.val(U, 0x200, DType::FP16) == 2048);
    CHECK(m.val(U, 0x202, DType::FP16) == 2052);
    CHECK(std::isinf(m.val(U, 0x204, DType::FP16)));
    CHECK(m.val(U, 0x206, DType::FP16) == std::ldexp(1.0, -23));  // denormals are kept
}

TEST_CASE("isa vector: unary ops and nan/inf edge values (fp32)") {
    TestMem m;
    const double in_vals[] = {4.0, -1.0, 0.0, INFINITY, NAN, -0.0, 1e-40, 2.0};
    for (int i = 0; i < 8; ++i) m.set(U, i * 4, DType::FP32, in_vals[i]);
    auto run = [&](Opcode op, double s = 0.0) {
        Instr in = vec(op, DType::FP32, 0x400, 0x0);
        in.vec.mask_lo = 0xff, in.vec.mask_hi = 0;
        in.scalar = s;
        execute(in, m);
        std::vector<double> r;
        for (int i = 0; i < 8; ++i) r.push_back(m.val(U, 0x400 + i * 4, DType::FP32));
        return r;
    };
    auto sq = run(Opcode::VSQRT);
    CHECK(sq[0] == 2.0);
    CHECK(std::isnan(sq[1]));
    CHECK(std::isinf(sq[3]));
    auto ln = run(Opcode::VLN);
    CHECK(std::isinf(ln[2]));
    CHECK(ln[2] < 0);
    CHECK(ln[7] == static_cast<float>(std::log(2.0)));
    auto rs = run(Opcode::VRSQRT);
    CHECK(rs[0] == 0.5);
    CHECK(rs[3] == 0.0);
    auto rc = run(Opcode::VREC);
    CHECK(rc[0] == 0.25);
    CHECK(std::isinf(rc[5]));
    CHECK(rc[5] < 0);  // 1 / -0 = -inf
    auto ex = run(Opcode::VEXP);
    CHECK(ex[2] == 1.0);
    CHECK(ex[7] == static_cast<float>(std::exp(2.0)));
    auto relu = run(Opcode::VRELU);
    CHECK(relu[1] == 0.0);
    CHECK(std::isnan(relu[4]));
    CHECK(relu[6] == static_cast<float>(1e-40));  // fp32 denormal kept
    auto lr = run(Opcode::VLRELU, 0.25);
    CHECK(lr[1] == -0.25);
    CHECK(lr[0] == 4.0);
    auto ab = run(Opcode::VABS);
    CHECK(ab[1] == 1.0);
    CHECK(!std::signbit(ab[5]));
}

TEST_CASE("isa vector: fused madd, mla, axpy and add-relu") {
    TestMem m;
    for (int i = 0; i < 64; ++i) {
        m.set(U, i * 4, DType::FP32, i);          // src0
        m.set(U, 0x100 + i * 4, DType::FP32, 3);  // src1
    }
    auto reset_dst = [&] {
        for (int i = 0; i < 64; ++i) m.set(U, 0x200 + i * 4, DType::FP32, 10);
    };
    auto check_all = [&](auto f) {
        for (int i = 0; i < 64; ++i) CHECK(m.val(U, 0x200 + i * 4, DType::FP32) == f(i));
    };
    reset_dst();
    execute(vec(Opcode::VMADD, DType::FP32, 0x200, 0x0, 0x100), m);
    check_all([](int i) { return i * 10.0 + 3; });
    reset_dst();
    execute(vec(Opcode::VMLA, DType::FP32, 0x200, 0x0, 0x100), m);
    check_all([](int i) { return i * 3.0 + 10; });
    reset_dst();
    Instr ax = vec(Opcode::VAXPY, DType::FP32, 0x200, 0x0);
    ax.scalar = -2.0;
    execute(ax, m);
    check_all([](int i) { return 10 - 2.0 * i; });
    Instr ar = vec(Opcode::VADDRELU, DType::FP32, 0x200, 0x0, 0x100);
    for (int i = 0; i < 64; ++i) m.set(U, 0x100 + i * 4, DType::FP32, -5);
    execute(ar, m);
    check_all([](int i) { return std::max(i - 5.0, 0.0); });
}

TEST_CASE("isa vector: integer ops wrap, bitwise ops, max/min") {
    TestMem m;
    m.put<int32_t>(U, 0x0, 0x7fffffff), m.put<int32_t>(U, 0x100, 1);
    m.put<int32_t>(U, 0x4, -5), m.put<int32_t>(U, 0x104, 3);
    Instr add = vec(Opcode::VADD, DType::INT32, 0x200, 0x0, 0x100);
    add.vec.mask_lo = 3, add.vec.mask_hi = 0;
    execute(add, m);
    CHECK(m.get<int32_t>(U, 0x200) == INT32_MIN);
    CHECK(m.get<int32_t>(U, 0x204) == -2);
    Instr mx = add;
    mx.op = Opcode::VMAX;
    execute(mx, m);
    CHECK(m.get<int32_t>(U, 0x204) == 3);
    m.put<int16_t>(U, 0x300, 0x0ff0), m.put<int16_t>(U, 0x400, 0x3c3c);
    Instr a = vec(Opcode::VAND, DType::INT16, 0x500, 0x300, 0x400);
    a.vec.mask_lo = 1, a.vec.mask_hi = 0;
    execute(a, m);
    CHECK(m.get<int16_t>(U, 0x500) == 0x0c30);
    a.op = Opcode::VOR;
    execute(a, m);
    CHECK(m.get<int16_t>(U, 0x500) == 0x3ffc);
    a.op = Opcode::VNOT;
    execute(a, m);
    CHECK(m.get<int16_t>(U, 0x500) == static_cast<int16_t>(~0x0ff0));
    Instr bad = vec(Opcode::VAND, DType::FP16, 0, 0, 0);
    CHECK_FALSE(validate(bad).empty());
    Instr bad2 = vec(Opcode::VEXP, DType::INT32, 0, 0);
    CHECK_FALSE(validate(bad2).empty());
}

TEST_CASE("isa vector: vconv with each rounding mode, saturation and widening") {
    TestMem m;
    const double src[] = {2.5, -2.5, 3.5, 1e6, -1e6, NAN, 0.49999997, -0.5};
    for (int i = 0; i < 8; ++i) m.set(U, i * 4, DType::FP32, src[i]);
    auto run = [&](DType to, RoundMode rm) {
        Instr in = vec(Opcode::VCONV, to, 0x400, 0x0);
        in.vec.src_dtype = DType::FP32;
        in.vec.round = rm;
        in.vec.mask_lo = 0xff, in.vec.mask_hi = 0;
        REQUIRE(validate(in).empty());
        execute(in, m);
        std::vector<double> r;
        for (int i = 0; i < 8; ++i) r.push_back(m.val(U, 0x400 + i * dtype_size(to), to));
        return r;
    };
    auto rint = run(DType::INT32, RoundMode::RINT);
    CHECK(rint == std::vector<double>{2, -2, 4, 1e6, -1e6, 0, 0, -0.0});
    auto rnd = run(DType::INT32, RoundMode::ROUND);
    CHECK(rnd == std::vector<double>{3, -3, 4, 1e6, -1e6, 0, 0, -1});
    auto fl = run(DType::INT32, RoundMode::FLOOR);
    CHECK(fl == std::vector<double>{2, -3, 3, 1e6, -1e6, 0, 0, -1});
    auto ce = run(DType::INT32, RoundMode::CEIL);
    CHECK(ce == std::vector<double>{3, -2, 4, 1e6, -1e6, 0, 1, 0});
    auto tr = run(DType::INT32, RoundMode::TRUNC);
    CHECK(tr == std::vector<double>{2, -2, 3, 1e6, -1e6, 0, 0, 0});
    // fp32 -> fp32 (the A2 unit's vconv_f322f32*): an integral fp32 value per mode, nan kept.
    auto integral = [&](RoundMode rm) {
        auto r = run(DType::FP32, rm);
        CHECK(std::isnan(r[5]));
        r[5] = 0;
        return r;
    };
    CHECK(integral(RoundMode::RINT) == std::vector<double>{2, -2, 4, 1e6, -1e6, 0, 0, -0.0});
    CHECK(integral(RoundMode::ROUND) == std::vector<double>{3, -3, 4, 1e6, -1e6, 0, 0, -1});
    CHECK(integral(RoundMode::FLOOR) == std::vector<double>{2, -3, 3, 1e6, -1e6, 0, 0, -1});
    CHECK(integral(RoundMode::CEIL) == std::vector<double>{3, -2, 4, 1e6, -1e6, 0, 1, 0});
    CHECK(integral(RoundMode::TRUNC) == std::vector<double>{2, -2, 3, 1e6, -1e6, 0, 0, 0});
    {
        Instr same = vec(Opcode::VCONV, DType::FP16, 0x400, 0x0);
        same.vec.src_dtype = DType::FP16;
        CHECK(validate(same).find("to itself") != std::string::npos);  // only fp32 converts to itself
        same.dtype = same.vec.src_dtype = DType::FP32;
        same.vec.round = RoundMode::ODD;
        CHECK(validate(same).find("odd") != std::string::npos);
    }
    auto h = run(DType::FP16, RoundMode::RINT);
    CHECK(std::isinf(h[3]));
    CHECK(std::isnan(h[5]));
    auto i16 = run(DType::INT16, RoundMode::RINT);
    CHECK(i16[3] == 32767);
    CHECK(i16[4] == -32768);
    // Widening fp16 -> fp32 is exact; int8 -> fp16 too.
    m.set(U, 0x800, DType::FP16, 0.1);
    Instr w = vec(Opcode::VCONV, DType::FP32, 0x900, 0x800);
    w.vec.src_dtype = DType::FP16, w.vec.mask_lo = 1, w.vec.mask_hi = 0;
    execute(w, m);
    CHECK(m.val(U, 0x900, DType::FP32) == f16_to_f32(f32_to_f16(0.1f)));
    // fp32 -> fp16 narrows: 64 lanes per repeat, dst uses 4 blocks.
    Instr n = vec(Opcode::VCONV, DType::FP16, 0x1000, 0x0, 0, 2);
    n.vec.src_dtype = DType::FP32;
    Extent ex[kMaxExtents];
    REQUIRE(footprint(n, ex) == 2);
    CHECK(ex[0].hi - ex[0].lo == 2 * 256);
    CHECK(ex[1].hi - ex[1].lo == 256 + 128);
}

TEST_CASE("isa vector: compare writes a lane bitmask, select picks by it") {
    TestMem m;
    for (int i = 0; i < 128; ++i) {
        m.set(U, i * 2, DType::FP16, i);
        m.set(U, 0x100 + i * 2, DType::FP16, 64);
    }
    Instr c = vec(Opcode::VCMP, DType::FP16, 0x400, 0x0, 0x100);
    c.vec.cmp = CmpMode::LT;
    execute(c, m);
    for (int b = 0; b < 16; ++b) CHECK(m.of(U)[0x400 + b] == (b < 8 ? 0xff : 0x00));
    Instr cs = vec(Opcode::VCMPS, DType::FP16, 0x400, 0x0);
    cs.vec.cmp = CmpMode::EQ;
    cs.scalar = 9;
    execute(cs, m);
    CHECK(m.of(U)[0x401] == 0x02);
    CHECK(m.of(U)[0x400] == 0x00);
    c.vec.cmp = CmpMode::GE;
    execute(c, m);  // bits set for lanes >= 64
    Instr s = vec(Opcode::VSEL, DType::FP16, 0x600, 0x0, 0x100);
    s.src2 = at(U, 0x400);
    REQUIRE(validate(s).empty());
    execute(s, m);
    for (int i = 0; i < 128; ++i) CHECK(m.val(U, 0x600 + i * 2, DType::FP16) == (i >= 64 ? i : 64));
    // Tensor-scalar mode (idx=1): src1's first element for every lane, which is all the instruction reads of it.
    m.set(U, 0x800, DType::FP16, -3);
    m.set(U, 0x802, DType::FP16, 77);  // not read
    s.src1 = at(U, 0x800);
    s.vec.with_index = 1, s.vec.src1_blk_stride = 0, s.vec.src1_rep_stride = 0;
    REQUIRE(validate(s).empty());
    execute(s, m);
    for (int i = 0; i < 128; ++i) CHECK(m.val(U, 0x600 + i * 2, DType::FP16) == (i >= 64 ? i : -3));
    Extent ex[kMaxExtents];
    const int ne = footprint(s, ex);
    CHECK(std::any_of(ex, ex + ne, [](const Extent& e) { return e.lo == 0x800 && e.hi == 0x802 && !e.write; }));
    s.vec.with_index = 2;
    CHECK_FALSE(validate(s).empty());
    // nan compares false except ne.
    m.set(U, 0x0, DType::FP16, NAN);
    c.vec.cmp = CmpMode::EQ;
    execute(c, m);
    CHECK((m.of(U)[0x400] & 1) == 0);
    c.vec.cmp = CmpMode::NE;
    execute(c, m);
    CHECK((m.of(U)[0x400] & 1) == 1);
}

TEST_CASE("isa vector: per-repeat and whole reductions with index") {
    TestMem m;
    for (int i = 0; i < 128; ++i) m.set(U, i * 4, DType::FP32, (i * 37) % 101 - 50);  // 2 repeats of 64
    double sum[2] = {0, 0}, mx[2] = {-1e9, -1e9};
    int mi[2] = {0, 0};
    for (int i = 0; i < 128; ++i) {
        double v = (i * 37) % 101 - 50;
        sum[i / 64] += v;
        if (v > mx[i / 64]) mx[i / 64] = v, mi[i / 64] = i % 64;
    }
    Instr r = vec(Opcode::VRED_SUM, DType::FP32, 0x800, 0x0, 0, 2);
    r.vec.dst_rep_stride = 1;
    execute(r, m);
    CHECK(m.val(U, 0x800, DType::FP32) == sum[0]);
    CHECK(m.val(U, 0x804, DType::FP32) == sum[1]);
    r.op = Opcode::VRED_MAX;
    r.vec.with_index = 1;
    execute(r, m);
    CHECK(m.val(U, 0x800, DType::FP32) == mx[0]);
    CHECK(m.get<uint32_t>(U, 0x804) == static_cast<uint32_t>(mi[0]));
    CHECK(m.val(U, 0x808, DType::FP32) == mx[1]);
    CHECK(m.get<uint32_t>(U, 0x80c) == static_cast<uint32_t>(mi[1]));
    Instr w = vec(Opcode::VREDALL_MIN, DType::FP32, 0x900, 0x0, 0, 2);
    w.vec.with_index = 1;
    execute(w, m);
    double mn = 1e9;
    uint32_t mni = 0;
    for (int i = 0; i < 128; ++i) {
        double v = (i * 37) % 101 - 50;
        if (v < mn) mn = v, mni = i;
    }
    CHECK(m.val(U, 0x900, DType::FP32) == mn);
    CHECK(m.get<uint32_t>(U, 0x904) == mni);
    // Masked lanes are excluded; fp16 sum rounds once.
    Instr s = vec(Opcode::VREDALL_SUM, DType::FP16, 0xa00, 0xb00, 0, 1);
    for (int i = 0; i < 128; ++i) m.set(U, 0xb00 + i * 2, DType::FP16, i < 3 ? 1024.0 + i : 1e4);
    s.vec.mask_lo = 7, s.vec.mask_hi = 0;
    execute(s, m);
    CHECK(m.val(U, 0xa00, DType::FP16) == 3076.0);  // 3075 ties to even in fp16 (ulp 2)
}

TEST_CASE("isa vector: dup, brcb, transpose and gather") {
    TestMem m;
    Instr d = vec(Opcode::VDUP, DType::FP16, 0x0, 0, 0, 2);
    d.scalar = 1.5;
    d.vec.dst_rep_stride = 16;  // leave one repeat gap
    execute(d, m);
    CHECK(m.val(U, 0x0, DType::FP16) == 1.5);
    CHECK(m.val(U, 0x200 + 254, DType::FP16) == 1.5);
    CHECK(m.val(U, 0x100, DType::FP16) == 0.0);

    for (int i = 0; i < 8; ++i) m.set(U, 0x1000 + i * 4, DType::FP32, i + 1);
    Instr b = vec(Opcode::VBRCB, DType::FP32, 0x2000, 0x1000);
    execute(b, m);
    for (int blk = 0; blk < 8; ++blk)
        for (int e = 0; e < 8; ++e) CHECK(m.val(U, 0x2000 + blk * 32 + e * 4, DType::FP32) == blk + 1);

    for (int i = 0; i < 256; ++i) m.put<uint16_t>(U, 0x3000 + i * 2, static_cast<uint16_t>(i));
    Instr t = vec(Opcode::VTRANSPOSE, DType::FP16, 0x4000, 0x3000);
    execute(t, m);
    for (int i = 0; i < 16; ++i)
        for (int j = 0; j < 16; ++j) CHECK(m.get<uint16_t>(U, 0x4000 + (j * 16 + i) * 2) == i * 16 + j);

    for (int i = 0; i < 64; ++i) m.set(U, 0x5000 + i * 4, DType::FP32, 100 + i);
    for (int i = 0; i < 64; ++i) m.put<uint32_t>(U, 0x6000 + i * 4, static_cast<uint32_t>((63 - i) * 4));
    Instr g = vec(Opcode::VGATHER, DType::FP32, 0x7000, 0x5000, 0x6000);
    g.vec.gather_span = 256;
    execute(g, m);
    for (int i = 0; i < 64; ++i) CHECK(m.val(U, 0x7000 + i * 4, DType::FP32) == 163 - i);
    m.put<uint32_t>(U, 0x6000, 256);
    CHECK_THROWS_AS(execute(g, m), std::invalid_argument);
}

TEST_CASE("isa vector: vci counts across repeats and lanes, vcpadd sums lane pairs per repeat") {
    TestMem m;
    Instr c = vec(Opcode::VCI, DType::INT16, 0x0, 0, 0, 2);
    c.scalar = -5;
    c.vec.mask_lo = 0xffff, c.vec.mask_hi = 0;  // lanes 0..15 of each 128-lane repeat
    execute(c, m);
    for (int r = 0; r < 2; ++r)
        for (int l = 0; l < 128; ++l)
            CHECK(m.val(U, (r * 128 + l) * 2, DType::INT16) == (l < 16 ? -5 + r * 128 + l : 0));
    Instr f = vec(Opcode::VCI, DType::FP16, 0x1000, 0);
    f.scalar = 2047;  // 2047 + 1 is exact in fp16, 2047 + 2 ties to even (2048), 2047 + 3 is 2050
    execute(f, m);
    CHECK(m.val(U, 0x1000 + 2, DType::FP16) == 2048.0);
    CHECK(m.val(U, 0x1000 + 4, DType::FP16) == 2048.0);
    CHECK(m.val(U, 0x1000 + 6, DType::FP16) == 2050.0);
    CHECK(!validate(vec(Opcode::VCI, DType::INT8, 0, 0)).empty());

    for (int i = 0; i < 128; ++i) m.set(U, 0x2000 + i * 4, DType::FP32, i * 0.5);
    Instr p = vec(Opcode::VCPADD, DType::FP32, 0x3000, 0x2000, 0, 2);
    p.vec.dst_rep_stride = 2;  // results of repeat 1 start 2 x 128 bytes on
    p.vec.mask_lo = 0xfffffffffffffff3ull;  // pair 1 (lanes 2, 3) off: its result stays as it was
    m.set(U, 0x3000 + 4, DType::FP32, -1.0);
    execute(p, m);
    for (int r = 0; r < 2; ++r)
        for (int j = 0; j < 32; ++j) {
            const double sum = (r * 64 + 2 * j) * 0.5 + (r * 64 + 2 * j + 1) * 0.5;
            const double want = j == 1 ? (r == 0 ? -1.0 : 0.0) : sum;
            CHECK(m.val(U, 0x3000 + r * 256 + j * 4, DType::FP32) == want);
        }
    CHECK(!validate(vec(Opcode::VCPADD, DType::INT32, 0, 0)).empty());
}

TEST_CASE("isa vector: vreducev2 packs the lanes a fixed or bit pattern keeps, the mask on the last repeat") {
    TestMem m;
    for (int i = 0; i < 256; ++i) m.set(U, 0x2000 + i * 4, DType::FP32, i + 0.25);
    // Pattern 4 (lane 1 of every four) over 2 repeats of 64 lanes, the last limited to 10 lanes:
    // lanes 1, 5, ..., 61 of repeat 0, then 1, 5, 9 of repeat 1, packed.
    Instr f = vec(Opcode::VREDUCEV2, DType::FP32, 0x3000, 0x2000, 0, 2);
    f.scalar = 4;
    f.vec.mask_lo = (1ull << 10) - 1, f.vec.mask_hi = 0;
    m.set(U, 0x3000 + 19 * 4, DType::FP32, -9.0);  // past the 19 kept: left as it was
    execute(f, m);
    for (int j = 0; j < 16; ++j) CHECK(m.val(U, 0x3000 + j * 4, DType::FP32) == 4 * j + 1 + 0.25);
    for (int j = 0; j < 3; ++j) CHECK(m.val(U, 0x3000 + (16 + j) * 4, DType::FP32) == 64 + 4 * j + 1 + 0.25);
    CHECK(m.val(U, 0x3000 + 19 * 4, DType::FP32) == -9.0);

    // A bit pattern in src1 (bit l % 8 of byte l / 8), repeats 1 block apart; src0 repeats 16 blocks
    // apart: repeat 0 keeps lanes 0 and 63, repeat 1 lanes 8..15.
    m.set(U, 0x1000, DType::INT32, 1);
    m.set(U, 0x1004, DType::INT32, static_cast<double>(int32_t(0x80000000u)));
    m.set(U, 0x1020, DType::INT32, 0xff00);
    m.set(U, 0x1024, DType::INT32, 0);
    Instr b = vec(Opcode::VREDUCEV2, DType::FP32, 0x4000, 0x2000, 0x1000, 2);
    b.vec.src0_rep_stride = 16, b.vec.src1_rep_stride = 1;
    execute(b, m);
    CHECK(m.val(U, 0x4000, DType::FP32) == 0.25);
    CHECK(m.val(U, 0x4004, DType::FP32) == 63.25);
    for (int j = 0; j < 8; ++j) CHECK(m.val(U, 0x4008 + j * 4, DType::FP32) == 128 + 8 + j + 0.25);

    Instr bad = vec(Opcode::VREDUCEV2, DType::FP32, 0, 0);
    bad.scalar = 8;
    CHECK(!validate(bad).empty());
    bad.scalar = 0;  // a bit pattern needs src1 in UB
    bad.src1.pos = Pos::GM;
    CHECK(!validate(bad).empty());
    CHECK(!validate(vec(Opcode::VREDUCEV2, DType::INT8, 0, 0)).empty());
}

TEST_CASE("isa vector: validate rejects repeat 0, repeat 256, wrong positions and dtypes") {
    Instr in = vec(Opcode::VADD, DType::FP16, 0, 0, 0);
    in.vec.repeat = 0;
    CHECK(validate(in).find("repeat") != std::string::npos);
    in.vec.repeat = 256;
    CHECK(validate(in).find("repeat") != std::string::npos);
    in.vec.repeat = 255;
    CHECK(validate(in).empty());
    in.src1.pos = Pos::L1;
    CHECK(validate(in).find("src1") != std::string::npos);
    in = vec(Opcode::VADD, DType::INT8, 0, 0, 0);
    CHECK(validate(in).find("int8") != std::string::npos);
    TestMem m;
    in.vec.repeat = 0;
    CHECK_THROWS_AS(execute(in, m), std::invalid_argument);
}

TEST_CASE("isa vector: 1-byte types have 256 lanes, one mask bit per lane pair") {
    TestMem m;
    for (int i = 0; i < 256; ++i) m.of(U)[i] = static_cast<uint8_t>(i), m.of(U)[0x100 + i] = 0x0f;
    Instr in = vec(Opcode::VAND, DType::UINT8, 0x200, 0x0, 0x100);
    in.vec.mask_lo = 0x2, in.vec.mask_hi = 1ull << 63;  // bit 1 -> lanes 2,3; bit 127 -> lanes 254,255
    execute(in, m);
    for (int i = 0; i < 256; ++i) {
        const bool on = i == 2 || i == 3 || i >= 254;
        CHECK(m.of(U)[0x200 + i] == (on ? (i & 0x0f) : 0));
    }
}

TEST_CASE("isa vector: bf16 arithmetic rounds once to bf16") {
    TestMem m;
    m.set(U, 0x0, DType::BF16, 1.0), m.set(U, 0x100, DType::BF16, std::ldexp(1.0, -8));  // tie -> 1.0
    m.set(U, 0x2, DType::BF16, 1.0 + std::ldexp(1.0, -7)),
        m.set(U, 0x102, DType::BF16, std::ldexp(1.0, -8));  // tie -> up
    Instr in = vec(Opcode::VADD, DType::BF16, 0x200, 0x0, 0x100);
    in.vec.mask_lo = 3, in.vec.mask_hi = 0;
    execute(in, m);
    CHECK(m.val(U, 0x200, DType::BF16) == 1.0);
    CHECK(m.val(U, 0x202, DType::BF16) == 1.0 + std::ldexp(1.0, -6));
}

TEST_CASE("isa vector: destination block and repeat strides (fp16), gaps stay untouched") {
    TestMem m;
    for (int i = 0; i < 256; ++i) m.set(U, i * 2, DType::FP16, i);
    for (uint32_t i = 0x1000; i < 0x4000; ++i) m.of(U)[i] = 0xaa;
    Instr in = vec(Opcode::VADDS, DType::FP16, 0x1000, 0x0, 0, 2);
    in.scalar = 1;
    in.vec.dst_blk_stride = 3, in.vec.dst_rep_stride = 30;
    execute(in, m);
    for (uint32_t r = 0; r < 2; ++r)
        for (uint32_t l = 0; l < 128; ++l)
            CHECK(m.val(U, 0x1000 + (r * 30 + (l / 16) * 3) * 32 + (l % 16) * 2, DType::FP16) ==
                  r * 128 + l + 1);
    CHECK(m.of(U)[0x1000 + 32] == 0xaa);       // block 1 of the stride-3 gap
    CHECK(m.of(U)[0x1000 + 22 * 32] == 0xaa);  // between repeat 0's last block (21) and repeat 1 (30)
}

TEST_CASE("isa vector: vdiv (fp16 rounding, division by zero), vmaxs/vmins with nan, vred_min and vredall_max") {
    TestMem m;
    const double num[] = {1, 1, 0, -3, 2, NAN};
    const double den[] = {3, 0, 0, 0, -0.0, 1};
    for (int i = 0; i < 6; ++i) m.set(U, i * 2, DType::FP16, num[i]), m.set(U, 0x100 + i * 2, DType::FP16, den[i]);
    Instr d = vec(Opcode::VDIV, DType::FP16, 0x200, 0x0, 0x100);
    d.vec.mask_lo = 0x3f, d.vec.mask_hi = 0;
    execute(d, m);
    CHECK(m.get<uint16_t>(U, 0x200) == round_bits(DType::FP16, 1.0 / 3));  // one rounding of 1/3
    CHECK(m.val(U, 0x202, DType::FP16) == INFINITY);
    CHECK(std::isnan(m.val(U, 0x204, DType::FP16)));
    CHECK(m.val(U, 0x206, DType::FP16) == -INFINITY);
    CHECK(m.val(U, 0x208, DType::FP16) == -INFINITY);  // 2 / -0
    CHECK(std::isnan(m.val(U, 0x20a, DType::FP16)));
    Instr mx = vec(Opcode::VMAXS, DType::FP16, 0x300, 0x0);
    mx.vec.mask_lo = 0x3f, mx.vec.mask_hi = 0, mx.scalar = 0.5;
    execute(mx, m);
    CHECK(m.val(U, 0x300, DType::FP16) == 1.0);
    CHECK(m.val(U, 0x304, DType::FP16) == 0.5);
    CHECK(m.val(U, 0x30a, DType::FP16) == 0.5);  // maxNum: a nan operand loses
    mx.op = Opcode::VMINS;
    execute(mx, m);
    CHECK(m.val(U, 0x306, DType::FP16) == -3.0);
    CHECK(m.val(U, 0x300, DType::FP16) == 0.5);
    // int32 reductions: per-repeat min with index, whole max with index.
    for (int i = 0; i < 128; ++i) m.put<int32_t>(U, 0x1000 + i * 4, (i * 53) % 97 - 40);
    Instr r = vec(Opcode::VRED_MIN, DType::INT32, 0x2000, 0x1000, 0, 2);
    r.vec.with_index = 1, r.vec.dst_rep_stride = 1;
    execute(r, m);
    for (int rep = 0; rep < 2; ++rep) {
        int best = 1 << 30, bi = 0;
        for (int l = 0; l < 64; ++l)
            if ((rep * 64 + l) * 53 % 97 - 40 < best) best = (rep * 64 + l) * 53 % 97 - 40, bi = l;
        CHECK(m.get<int32_t>(U, 0x2000 + rep * 8) == best);
        CHECK(m.get<uint32_t>(U, 0x2004 + rep * 8) == static_cast<uint32_t>(bi));
    }
    Instr w = vec(Opcode::VREDALL_MAX, DType::INT32, 0x3000, 0x1000, 0, 2);
    w.vec.with_index = 1;
    execute(w, m);
    int best = -(1 << 30), bi = 0;
    for (int i = 0; i < 128; ++i)
        if (i * 53 % 97 - 40 > best) best = i * 53 % 97 - 40, bi = i;
    CHECK(m.get<int32_t>(U, 0x3000) == best);
    CHECK(m.get<uint32_t>(U, 0x3004) == static_cast<uint32_t>(bi));
}

TEST_CASE("isa vector: vreducev2 counter mode takes mask_lo elements in every repeat, past 256 bytes") {
    TestMem m;
    for (int i = 0; i < 256; ++i) m.set(U, 0x2000 + i * 4, DType::FP32, i + 0.5);
    for (int w = 0; w < 4; ++w) m.put<uint32_t>(U, 0x1000 + w * 4, 0x7E7C00A5u);
    // 2 repeats of 70 elements (more than the 64 lanes of 256 bytes), src0 repeats 4 blocks apart,
    // the same bits for both (src1rep 0): bit e of word e / 32.
    Instr in = vec(Opcode::VREDUCEV2, DType::FP32, 0x3000, 0x2000, 0x1000, 2);
    in.vec.src0_rep_stride = 4, in.vec.src1_rep_stride = 0;
    in.vec.with_index = 1, in.vec.mask_lo = 70, in.vec.mask_hi = 0;
    REQUIRE(validate(in).empty());
    execute(in, m);
    int k = 0;
    for (int r = 0; r < 2; ++r)
        for (int e = 0; e < 70; ++e)
            if ((0x7E7C00A5u >> (e % 32)) & 1u) CHECK(m.val(U, 0x3000 + 4 * k++, DType::FP32) == 32 * r + e + 0.5);
    Extent ex[kMaxExtents];
    REQUIRE(footprint(in, ex) == 3);
    CHECK(ex[0].hi == 0x2000 + (4 + 8) * 32 + 32);  // repeat 1 starts 4 blocks in, 70 floats span 9 blocks
    CHECK(ex[1].hi == 0x1000 + 9);
    in.vec.mask_lo = 0;
    CHECK(!validate(in).empty());
}
