// The scalar unit's global-memory instructions: LD_GM, ST_GM, DCCI (semantics, checks, text)
// and the register-setup estimate the core charges per issued instruction.
#include <catch2/catch.hpp>

#include "isa/asm.h"
#include "isa/semantics.h"
#include "isa_test_mem.h"

using namespace sfumato::isa;
using namespace sfumato::isa::test;

TEST_CASE("isa scalar mem: st_gm stores the value rounded once, ld_gm loads the raw bits") {
    TestMem m;
    Instr st = make_instr(Opcode::ST_GM);
    st.dtype = DType::FP16;
    st.dst = at(Pos::GM, 0x106);
    st.scalar = 1.0 / 3.0;
    REQUIRE(validate(st) == "");
    execute(st, m);
    CHECK(m.get<uint16_t>(Pos::GM, 0x106) == f32_to_f16(1.0f / 3.0f));
    CHECK(m.get<uint16_t>(Pos::GM, 0x104) == 0);  // nothing beside it
    CHECK(m.get<uint16_t>(Pos::GM, 0x108) == 0);

    Instr ld = make_instr(Opcode::LD_GM);
    ld.dtype = DType::FP16;
    ld.src0 = at(Pos::GM, 0x106);
    ld.sc.xd = 5;
    CHECK(load_scalar(ld, m) == f32_to_f16(1.0f / 3.0f));
    ScalarState s;
    execute_scalar(ld, s, m);
    CHECK(s.x[5] == f32_to_f16(1.0f / 3.0f));

    st.dtype = DType::INT32;
    st.dst = at(Pos::GM, 0x200);
    st.scalar = -7;
    execute(st, m);
    ld.dtype = DType::INT32;
    ld.src0 = at(Pos::GM, 0x200);
    CHECK(load_scalar(ld, m) == 0xfffffff9ull);  // zero-extended raw bits of -7
}

TEST_CASE("isa scalar mem: misaligned, non-GM or bad-register accesses are rejected") {
    Instr ld = make_instr(Opcode::LD_GM);
    ld.dtype = DType::FP32;
    ld.src0 = at(Pos::GM, 0x102);
    CHECK(validate(ld).find("not aligned") != std::string::npos);
    ld.src0 = at(Pos::UB, 0x100);
    CHECK(validate(ld).find("UB") != std::string::npos);
    ld.src0 = at(Pos::GM, 0x100);
    ld.sc.xd = 32;
    CHECK(validate(ld).find("x32") != std::string::npos);
    Instr dcci = make_instr(Opcode::DCCI);
    dcci.sc.all = 2;
    CHECK(validate(dcci) != "");
    TestMem m;
    CHECK_THROWS_AS(load_scalar(ld, m), std::invalid_argument);
}

TEST_CASE("isa scalar mem: footprints name the GM bytes touched") {
    Extent e[kMaxExtents];
    Instr st = make_instr(Opcode::ST_GM);
    st.dtype = DType::FP32;
    st.dst = at(Pos::GM, 0x40);
    REQUIRE(footprint(st, e) == 1);
    CHECK((e[0].pos == Pos::GM && e[0].lo == 0x40 && e[0].hi == 0x44 && e[0].write));
    Instr ld = make_instr(Opcode::LD_GM);
    ld.dtype = DType::INT8;
    ld.src0 = at(Pos::GM, 0x41);
    REQUIRE(footprint(ld, e) == 1);
    CHECK((e[0].lo == 0x41 && e[0].hi == 0x42 && !e[0].write));
    Instr dcci = make_instr(Opcode::DCCI);
    dcci.dst = at(Pos::GM, 0x80);
    CHECK(footprint(dcci, e) == 0);  // no data: it writes back only lines the cache holds
}

TEST_CASE("isa scalar mem: assembler syntax") {
    auto p = assemble(
        "ld_gm.fp32 gm[0x40], xd=3\n"
        "st_gm.int32 gm[0x44], scalar=-5\n"
        "dcci gm[0x80]\n"
        "dcci all=1\n");
    REQUIRE(p.size() == 4);
    CHECK((p[0].op == Opcode::LD_GM && p[0].src0.addr == 0x40 && p[0].sc.xd == 3 && p[0].pipe == Pipe::S));
    CHECK((p[1].op == Opcode::ST_GM && p[1].dst.addr == 0x44 && p[1].scalar == -5 && p[1].dtype == DType::INT32));
    CHECK((p[2].op == Opcode::DCCI && p[2].dst.addr == 0x80 && p[2].sc.all == 0));
    CHECK((p[3].op == Opcode::DCCI && p[3].sc.all == 1));
    for (const Instr& in : p) CHECK(assemble(disassemble(in))[0] == in);
    CHECK_THROWS_AS(assemble("ld_gm.fp32 gm[0x40], gm[0x80]"), AsmError);  // one address only
    CHECK_THROWS_AS(assemble("ld_gm.fp32 gm[0x42]"), AsmError);            // misaligned
}

TEST_CASE("isa scalar setup words: addresses and parameter words an instruction takes") {
    CHECK(scalar_setup_words(make_instr(Opcode::SET_FLAG)) == 0);  // immediates
    CHECK(scalar_setup_words(make_instr(Opcode::LD_GM)) == 1);
    CHECK(scalar_setup_words(make_instr(Opcode::ST_GM)) == 2);
    Instr dcci = make_instr(Opcode::DCCI);
    CHECK(scalar_setup_words(dcci) == 1);
    dcci.sc.all = 1;
    CHECK(scalar_setup_words(dcci) == 0);
    // Vector: operand addresses + one word of repeat and strides (+ the scalar operand).
    CHECK(scalar_setup_words(make_instr(Opcode::VADD)) == 3 + 1);
    CHECK(scalar_setup_words(make_instr(Opcode::VEXP)) == 2 + 1);
    CHECK(scalar_setup_words(make_instr(Opcode::VADDS)) == 2 + 1 + 1);
    CHECK(scalar_setup_words(make_instr(Opcode::VSEL)) == 4 + 1);
    CHECK(scalar_setup_words(make_instr(Opcode::SET_MASK)) == 2);
    Instr mad = make_instr(Opcode::MAD);
    CHECK(scalar_setup_words(mad) == 4);
    mad.mad.bias = 1;
    CHECK(scalar_setup_words(mad) == 5);
    CHECK(scalar_setup_words(make_instr(Opcode::COPY_GM_TO_UB)) == 3);
}
