// The ISA's 4-bit integers (DType::INT4, two per byte, element 2i in the low nibble): vconv to and
// from fp16, and every other instruction rejecting them.
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

Instr conv(DType dst, DType src, uint64_t d, uint64_t s, uint16_t repeat) {
    Instr in = make_instr(Opcode::VCONV);
    in.dtype = dst;
    in.vec.src_dtype = src;
    in.dst = at(U, d);
    in.src0 = at(U, s);
    in.vec.repeat = repeat;
    return in;
}
}  // namespace

TEST_CASE("isa int4: nibble helpers and rounding saturate to -8..7") {
    uint8_t b[2] = {0, 0};
    int4_set(b, 0, 0x9);  // -7
    int4_set(b, 1, 0x7);
    int4_set(b, 3, 0x8);  // -8
    CHECK(b[0] == 0x79);
    CHECK(b[1] == 0x80);
    CHECK(int4_get(b, 0) == -7);
    CHECK(int4_get(b, 1) == 7);
    CHECK(int4_get(b, 2) == 0);
    CHECK(int4_get(b, 3) == -8);
    CHECK(round_bits(DType::INT4, 100.0) == 7u);
    CHECK(round_bits(DType::INT4, -100.0) == 8u);
    CHECK(round_bits(DType::INT4, -2.5, RoundMode::RINT) == 14u);  // -2
    CHECK(round_bits(DType::INT4, -2.5, RoundMode::FLOOR) == 13u);  // -3
    CHECK(dtype_bits(DType::INT4) == 4);
    CHECK(dtype_bits(DType::FP16) == 16);
    DType t;
    CHECK_FALSE(parse_dtype("int4", t));  // not byte addressable: no operator, trace or asm text takes it
}

TEST_CASE("isa int4: vconv fp16 -> int4 packs 128 lanes per repeat into 64 bytes, back to fp16 exactly") {
    TestMem m;
    for (uint32_t i = 0; i < 256; ++i) m.set(U, 2 * i, DType::FP16, static_cast<double>(i % 23) * 0.5 - 5.25);
    Instr n = conv(DType::INT4, DType::FP16, 0x1000, 0x0, 2);
    n.vec.dst_rep_stride = 2;
    n.vec.round = RoundMode::CEIL;
    REQUIRE(validate(n).empty());
    Extent ex[kMaxExtents];
    REQUIRE(footprint(n, ex) == 2);
    CHECK(ex[0].hi - ex[0].lo == 512);  // two repeats of 256 source bytes
    CHECK(ex[1].hi - ex[1].lo == 128);  // two repeats of 64 destination bytes
    execute(n, m);
    const uint8_t* d = &m.of(U)[0x1000];
    for (uint32_t i = 0; i < 256; ++i) {
        const double v = static_cast<double>(i % 23) * 0.5 - 5.25;
        INFO(i);
        CHECK(int4_get(d, i) == static_cast<int>(std::min(7.0, std::max(-8.0, std::ceil(v)))));
    }
    Instr w = conv(DType::FP16, DType::INT4, 0x2000, 0x1000, 2);
    w.vec.src0_rep_stride = 2;
    REQUIRE(validate(w).empty());
    execute(w, m);
    for (uint32_t i = 0; i < 256; ++i) CHECK(m.val(U, 0x2000 + 2 * i, DType::FP16) == int4_get(d, i));
}

TEST_CASE("isa int4: a dst block stride spaces each 64-nibble block, masked lanes keep their nibbles") {
    TestMem m;
    for (uint32_t i = 0; i < 128; ++i) m.set(U, 2 * i, DType::FP16, 3.0);
    for (uint32_t b = 0; b < 128; ++b) m.of(U)[0x1000 + b] = 0xee;  // -2 in both nibbles
    Instr n = conv(DType::INT4, DType::FP16, 0x1000, 0x0, 1);
    n.vec.dst_blk_stride = 2;
    n.vec.mask_lo = ~0ull >> 1, n.vec.mask_hi = ~0ull;  // lane 63 off
    execute(n, m);
    const uint8_t* d = &m.of(U)[0x1000];
    for (uint32_t l = 0; l < 128; ++l) {
        const uint32_t e = (l / 64) * 128 + l % 64;  // nibble index: block l / 64 is 64 bytes on
        CHECK(int4_get(d, e) == (l == 63 ? -2 : 3));
    }
    CHECK(d[32] == 0xee);  // the gap between the two blocks
}

TEST_CASE("isa int4: only vconv with fp16 takes int4") {
    Instr a = make_instr(Opcode::VADD);
    a.dtype = DType::INT4;
    CHECK_THAT(validate(a), Catch::Contains("int4"));
    Instr c = conv(DType::INT4, DType::FP32, 0, 0x100, 1);
    CHECK_THAT(validate(c), Catch::Contains("fp16 only"));
    Instr c2 = conv(DType::INT32, DType::INT4, 0, 0x100, 1);
    CHECK_THAT(validate(c2), Catch::Contains("fp16 only"));
    Instr mv = make_instr(Opcode::COPY_GM_TO_UB);
    mv.dtype = DType::INT4;
    CHECK_FALSE(validate(mv).empty());
    Instr f = make_instr(Opcode::FIXPIPE);
    f.dtype = DType::FP32;
    f.fix.out_dtype = DType::INT4;
    f.src0 = at(Pos::L0C, 0);
    f.dst = at(Pos::GM, 0);
    CHECK_THAT(validate(f), Catch::Contains("out dtype"));
}

TEST_CASE("isa int4: load2d transposes 64 x 64 squares of four fractals into L0B, placed by dst and frac gaps") {
    TestMem m;
    // Two squares in L1 (2 KiB each, rows of 64 nibbles); element (r, c) of square q has value v(q, r, c).
    auto v = [](uint32_t q, uint32_t r, uint32_t c) { return static_cast<int>((q * 5 + r * 3 + c * 7) % 16) - 8; };
    std::vector<uint8_t>& l1 = m.of(Pos::L1);
    for (uint32_t q = 0; q < 2; ++q)
        for (uint32_t r = 0; r < 64; ++r)
            for (uint32_t c = 0; c < 64; ++c) int4_set(l1.data() + 0x800 * (q + 1), r * 64 + c, static_cast<uint8_t>(v(q, r, c) & 0xf));
    Instr in = make_instr(Opcode::LOAD2D);
    in.dtype = DType::INT4;
    in.dst = at(Pos::L0B, 0x400);
    in.src0 = at(Pos::L1, 0);
    in.l2d.start_index = 1, in.l2d.repeat = 2, in.l2d.src_stride = 1, in.l2d.dst_gap = 0, in.l2d.frac_gap = 1;
    in.l2d.transpose = 1;
    REQUIRE(validate(in).empty());
    Extent ex[kMaxExtents];
    REQUIRE(footprint(in, ex) == 2);
    CHECK((ex[0].lo == 0x800 && ex[0].hi == 0x800 + 2 * 0x800));
    CHECK(ex[1].hi == 0x400 + (1 + 3 * 2 + 1) * 512u);  // repeat 1's last fractal: 1 + 3 x (1 + frac_gap)
    CHECK(moved_bytes(in) == 2 * 4 * 512u);
    execute(in, m);
    const uint8_t* l0b = m.of(Pos::L0B).data();
    // Repeat i's fractal j at 0x400 + (i + 2 j) x 512; its row k holds column 16 j + k of square i.
    for (uint32_t i = 0; i < 2; ++i)
        for (uint32_t j = 0; j < 4; ++j)
            for (uint32_t k = 0; k < 16; ++k)
                for (uint32_t e = 0; e < 64; ++e) {
                    INFO("repeat " << i << " fractal " << j << " row " << k << " element " << e);
                    CHECK(int4_get(l0b + 0x400 + (i + 2 * j) * 512, k * 64 + e) == v(i, e, 16 * j + k));
                }
    Instr a = in;
    a.dst.pos = Pos::L0A;  // the reference: L0A takes no int4
    CHECK_THAT(validate(a), Catch::Contains("L0B"));
    a = in;
    a.l2d.transpose = 0;
    CHECK_THAT(validate(a), Catch::Contains("int8"));
}
