// VNCHWCONV (TransDataTo5HD) against host references of the vendor's reference mapping: 2-byte elements
// transposed 16 x 16, 4-byte 16 x 8 into rows of two blocks, 1-byte halves; address lists in any order and
// place; the repeat strides (a single repeat adds them once); validate's rejections; the text form keeps
// the packed source list.
#include <catch2/catch.hpp>
#include <cstdint>

#include "isa/asm.h"
#include "isa/instr.h"
#include "isa/semantics.h"
#include "isa_test_mem.h"

using namespace sfumato::isa;
using namespace sfumato::isa::test;

namespace {
constexpr Pos U = Pos::UB;

// Source i of repeat r at 0x1000 + 128 i (every fourth block) + r x srcrep blocks; destination j at
// 0x8000 + 32 x perm(j) + r x dstrep blocks, perm a permutation of 0..15 (the lists need not be in order).
int perm(int j) { return (j * 7 + 3) % 16; }
Instr nchw(DType t, uint8_t repeat, uint16_t dstrep, uint16_t srcrep) {
    Instr in = make_instr(Opcode::VNCHWCONV);
    in.dtype = t;
    uint64_t d[kNchwList], s[kNchwList];
    for (int i = 0; i < kNchwList; ++i) s[i] = 0x1000 + 128u * i, d[i] = 0x8000 + 32u * perm(i);
    REQUIRE(set_nchw_lists(in, d, s).empty());
    in.nchw.repeat = repeat, in.nchw.dst_rep_stride = dstrep, in.nchw.src_rep_stride = srcrep;
    for (int i = 0; i < kNchwList; ++i) {
        CHECK(nchw_src_addr(in, i) == s[i]);
        CHECK(nchw_dst_addr(in, i) == d[i]);
    }
    return in;
}
uint8_t byte_of(uint32_t r, uint32_t i, uint32_t b) { return static_cast<uint8_t>(r * 101u + i * 37u + b * 3u + 1u); }
}  // namespace

TEST_CASE("isa nchw: 2- and 4-byte elements, lists in any order, repeats advance by the strides") {
    for (DType t : {DType::FP16, DType::FP32}) {
        const uint32_t es = dtype_size(t);
        const uint8_t reps = 3;
        const uint16_t srcrep = 1, dstrep = 32;  // sources: the next block; destinations: 1 KiB on
        TestMem m;
        for (uint32_t r = 0; r < reps; ++r)
            for (uint32_t i = 0; i < 16; ++i)
                for (uint32_t b = 0; b < 32; ++b) m.put<uint8_t>(U, 0x1000 + 128 * i + 32 * r * srcrep + b, byte_of(r, i, b));
        Instr in = nchw(t, reps, dstrep, srcrep);
        REQUIRE(validate(in).empty());
        execute(in, m);
        for (uint32_t r = 0; r < reps; ++r)
            for (uint32_t j = 0; j < 16; ++j) {
                const uint64_t dst = 0x8000 + 32u * perm(static_cast<int>(j)) + 32u * r * dstrep;
                for (uint32_t e = 0; e < 32 / es; ++e) {
                    // 2 bytes: element e of destination j is element j of source e. 4 bytes: element e of
                    // destination j = 2 row + h is element row of source 8 h + e.
                    const uint32_t src = es == 2 ? e : 8 * (j % 2) + e, elem = es == 2 ? j : j / 2;
                    for (uint32_t b = 0; b < es; ++b) {
                        INFO("dtype " << dtype_name(t) << " repeat " << r << " dst " << j << " elem " << e);
                        CHECK(m.get<uint8_t>(U, dst + es * e + b) == byte_of(r, src, es * elem + b));
                    }
                }
            }
    }
}

TEST_CASE("isa nchw: 1-byte elements move half blocks, the other half kept") {
    for (uint8_t dh : {0, 1})
        for (uint8_t sh : {0, 1}) {
            TestMem m;
            for (uint32_t i = 0; i < 16; ++i)
                for (uint32_t b = 0; b < 32; ++b) m.put<uint8_t>(U, 0x1000 + 128 * i + b, byte_of(0, i, b));
            for (uint32_t j = 0; j < 16; ++j)
                for (uint32_t b = 0; b < 32; ++b) m.put<uint8_t>(U, 0x8000 + 32 * j + b, 0xee);
            Instr in = nchw(DType::INT8, 1, 0, 0);
            in.nchw.dst_high = dh, in.nchw.src_high = sh;
            REQUIRE(validate(in).empty());
            execute(in, m);
            for (uint32_t j = 0; j < 16; ++j) {
                const uint64_t dst = 0x8000 + 32u * perm(static_cast<int>(j));
                for (uint32_t i = 0; i < 16; ++i) {
                    INFO("dh " << int(dh) << " sh " << int(sh) << " dst " << j << " byte " << i);
                    CHECK(m.get<uint8_t>(U, dst + 16 * dh + i) == byte_of(0, i, 16 * sh + j));
                    CHECK(m.get<uint8_t>(U, dst + 16 * (1 - dh) + i) == 0xee);
                }
            }
        }
}

TEST_CASE("isa nchw: a single repeat adds the strides once, footprint and validate follow") {
    TestMem m;
    for (uint32_t i = 0; i < 16; ++i) m.put<uint16_t>(U, 0x1000 + 128 * i + 32, static_cast<uint16_t>(100 + i));
    Instr in = nchw(DType::INT16, 1, 16, 1);  // sources one block on, destinations 512 bytes on
    execute(in, m);
    for (uint32_t i = 0; i < 16; ++i) CHECK(m.get<uint16_t>(U, 0x8000 + 512 + 32u * perm(0) + 2 * i) == 100 + i);
    Extent ex[kMaxExtents];
    REQUIRE(footprint(in, ex) == 2);
    CHECK((ex[0].lo == 0x1000 + 32 && ex[0].hi == 0x1000 + 128 * 15 + 64 && !ex[0].write));
    CHECK((ex[1].lo == 0x8000 + 512 && ex[1].hi == 0x8000 + 512 + 512 && ex[1].write));
    in.nchw.repeat = 4;  // repeats 0..3: no offset first, 3 x the strides last
    REQUIRE(footprint(in, ex) == 2);
    CHECK((ex[0].lo == 0x1000 && ex[0].hi == 0x1000 + 128 * 15 + 32 + 3 * 32));
    CHECK((ex[1].lo == 0x8000 && ex[1].hi == 0x8000 + 512 + 3 * 512));

    Instr bad = in;
    bad.nchw.repeat = 0;
    CHECK(validate(bad).find("repeat") != std::string::npos);
    bad = in;
    bad.nchw.dst_high = 1;  // halves are for 1-byte types only
    CHECK(validate(bad).find("1-byte") != std::string::npos);
    bad = in;
    bad.src1.pos = Pos::L1;
    CHECK(validate(bad).find("src1") != std::string::npos);
    uint64_t d[kNchwList] = {}, s[kNchwList] = {};
    s[5] = 48;
    CHECK(set_nchw_lists(bad, d, s).find("source address 5") != std::string::npos);
    s[5] = 1u << 20;
    CHECK(set_nchw_lists(bad, d, s).find("below 1 MiB") != std::string::npos);
}

TEST_CASE("isa nchw: the text form names every address and round-trips") {
    Instr in = nchw(DType::FP32, 2, 3, 5);
    const std::string text = disassemble(in);
    INFO(text);
    CHECK(text.find("vnchwconv.fp32") == 0);
    const std::vector<Instr> back = assemble(text);
    REQUIRE(back.size() == 1);
    CHECK(back[0] == in);
    Instr other = in;
    uint64_t d[kNchwList], s[kNchwList];
    for (int i = 0; i < kNchwList; ++i) d[i] = nchw_dst_addr(in, i), s[i] = nchw_src_addr(in, i);
    s[15] += 32;  // the last source lives in the dst operand's word
    REQUIRE(set_nchw_lists(other, d, s).empty());
    CHECK_FALSE(other == in);
    CHECK(disassemble(other) != text);
}
