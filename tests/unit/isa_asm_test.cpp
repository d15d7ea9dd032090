#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <sstream>

#include "isa/asm.h"
#include "isa/semantics.h"
#include "isa_samples.h"

using namespace sfumato::isa;

using namespace sfumato::isa::test;

TEST_CASE("isa asm: every opcode round-trips through disassemble/assemble with non-default fields") {
    for (int i = 0; i < static_cast<int>(Opcode::kCount); ++i) {
        const Opcode op = static_cast<Opcode>(i);
        Instr in = sample(op);
        INFO(opcode_name(op));
        REQUIRE(validate(in) == "");
        const std::string text = disassemble(in);
        INFO(text);
        std::vector<Instr> back = assemble(text);
        REQUIRE(back.size() == 1);
        CHECK(back[0] == in);
        CHECK(disassemble(back[0]) == text);
        // A changed field must show up in the text (equality and the text see the same fields).
        Instr other = in;
        (op == Opcode::LD_GM ? other.src0 : other.dst).addr += 32;  // a load names its source only
        if (param_kind(op) != ParamKind::Flag && param_kind(op) != ParamKind::CrossFlag &&
            op != Opcode::NOP && op != Opcode::SCALAR && op != Opcode::GET_SYSREG && op != Opcode::SET_MASK) {
            CHECK_FALSE(other == in);
            CHECK(disassemble(other) != text);
        }
    }
}

TEST_CASE("isa asm: brief's syntax, defaults, pipes and edge scalars") {
    auto p = assemble(
        "vadd.fp16 ub[0x0], ub[0x100], ub[0x200], repeat=8, mask=128, dstrep=8  # comment\n"
        "set_flag MTE2, V, 0 // comment\n"
        "wait_flag MTE2, V, 0\n"
        "pipe_barrier ALL\n"
        "vdup.fp32 ub[0x40], scalar=-inf, mask=0x0:0x5\n"
        "vmuls.fp16 ub[0], ub[0], scalar=-0\n");
    REQUIRE(p.size() == 6);
    CHECK(p[0].op == Opcode::VADD);
    CHECK(p[0].pipe == Pipe::V);
    CHECK(p[0].src1.addr == 0x200);
    CHECK(p[0].vec.repeat == 8);
    CHECK(p[0].vec.mask_lo == ~0ull);
    CHECK(p[1].pipe == Pipe::MTE2);
    CHECK(p[2].pipe == Pipe::V);
    CHECK(p[3].flag.src == Pipe::ALL);
    CHECK(std::isinf(p[4].scalar));
    CHECK(p[4].vec.mask_lo == 5);
    CHECK(p[4].vec.mask_hi == 0);
    CHECK(std::signbit(p[5].scalar));
    for (const Instr& in : p) CHECK(assemble(disassemble(in))[0] == in);
    Instr nan = make_instr(Opcode::VADDS);
    nan.scalar = NAN;
    nan.dst.pos = Pos::UB, nan.src0.pos = Pos::UB;
    CHECK(assemble(disassemble(nan))[0] == nan);
    Instr mad = make_instr(Opcode::MAD);
    mad.pipe = Pipe::V;  // a non-default pipe survives the round trip
    CHECK(assemble(disassemble(mad))[0] == mad);
}

TEST_CASE("isa asm: .set constants, nested .rep with counters, set_mask feeds later vector ops") {
    auto p = assemble(
        ".set N 3\n"
        ".set BASE 0x100\n"
        "set_mask mask=16\n"
        ".rep N, i\n"
        "  .rep 2, j\n"
        "    vadd.fp32 ub[BASE + (i*2 + j) * 0x40], ub[0], ub[0]\n"
        "  .endr\n"
        ".endr\n"
        "vsub.fp32 ub[0], ub[0], ub[0], mask=128\n");
    REQUIRE(p.size() == 1 + 6 + 1);
    for (int k = 0; k < 6; ++k) {
        CHECK(p[1 + k].dst.addr == 0x100 + k * 0x40u);
        CHECK(p[1 + k].vec.mask_lo == 0xffffu);
        CHECK(p[1 + k].vec.mask_hi == 0u);
    }
    CHECK(p[7].vec.mask_lo == ~0ull);
    // Disassembling the program and assembling it again gives the same program.
    auto again = assemble(disassemble(p));
    REQUIRE(again.size() == p.size());
    for (size_t k = 0; k < p.size(); ++k) CHECK(again[k] == p[k]);
}

TEST_CASE("isa asm: errors name the line and the token") {
    auto fails = [](const std::string& text, int line, const std::string& token) {
        try {
            assemble(text);
            FAIL("expected AsmError for: " << text);
        } catch (const AsmError& e) {
            CHECK(e.line() == line);
            CHECK(e.token() == token);
            CHECK(std::string(e.what()).find("line " + std::to_string(line)) != std::string::npos);
        }
    };
    fails("nop\nvfoo ub[0], ub[0]\n", 2, "vfoo");
    fails("vadd.fp17 ub[0], ub[0], ub[0]", 1, "fp17");
    fails("\n\nvadd ub[0], ub[0], ub[0], repeat=0", 3, "vadd");   // validate(): repeat 1..255
    fails("vadd ub[0], ub[0], ub[0], repeat=70000", 1, "70000");  // field overflow
    fails("vadd ub[0], ub[0], ub[0], bogus=1", 1, "bogus");
    fails("vadd ub[X], ub[0], ub[0]", 1, "X");
    fails("set_flag MTE2, Q, 0", 1, "Q");
    fails(".rep 2\nnop\n", 1, ".rep");
    fails("nop\n.endr", 2, ".endr");
    fails(".bogus 1", 1, ".bogus");
    fails("vadd zz[0], ub[0], ub[0]", 1, "zz");
    fails("copy_gm_to_ub ub[0], gm[0], len=0", 1, "copy_gm_to_ub");
}

TEST_CASE("isa asm: the README's example assembles and the README names every opcode") {
    std::ifstream f(std::string(SFUMATO_SOURCE_DIR) + "/isa/README.md");
    REQUIRE(f.good());
    std::stringstream ss;
    ss << f.rdbuf();
    const std::string doc = ss.str();
    const size_t b = doc.find("```\n"), e = doc.find("```", b + 4);
    REQUIRE(b != std::string::npos);
    auto prog = assemble(doc.substr(b + 4, e - b - 4));
    REQUIRE(prog.size() == 1 + 4 + 3);
    CHECK(prog[4].dst.addr == 0x100 + 3 * 0x200);
    CHECK(prog[4].vec.mask_lo == ~0ull);
    CHECK(prog[4].vec.mask_hi == 0);
    for (int i = 1; i < static_cast<int>(Opcode::kCount); ++i) {
        const std::string name = opcode_name(static_cast<Opcode>(i));
        INFO(name);
        CHECK((doc.find("`" + name) != std::string::npos || doc.find(" " + name + " ") != std::string::npos ||
               doc.find(" " + name + "`") != std::string::npos));
    }
}

namespace {
std::string asm_error(const std::string& text) {
    try {
        assemble(text);
    } catch (const AsmError& e) {
        return e.what();
    }
    return "";
}
}  // namespace

TEST_CASE("isa asm: expressions that overflow 64 bits are errors, not wrapped values") {
    // Signed overflow is undefined behaviour in C++: the assembler must not compute it.
    CHECK(asm_error("vdup.fp16 ub[0x7fffffffffffffff + 1]").find("overflows") != std::string::npos);
    CHECK(asm_error("vdup.fp16 ub[0 - 0x7fffffffffffffff - 2]").find("overflows") != std::string::npos);
    CHECK(asm_error("vdup.fp16 ub[0x100000000 * 0x100000000]").find("overflows") != std::string::npos);
    CHECK(asm_error(".set MIN 0 - 0x7fffffffffffffff - 1\nvdup.fp16 ub[MIN / -1]").find("overflows") != std::string::npos);
    CHECK(asm_error(".set MIN 0 - 0x7fffffffffffffff - 1\nvdup.fp16 ub[-MIN]").find("overflows") != std::string::npos);
    CHECK(asm_error("vdup.fp16 ub[0x10000000000000000]").find("64 bits") != std::string::npos);
    CHECK(asm_error("vdup.fp16 ub[99999999999999999999]").find("64 bits") != std::string::npos);
    // x % -1 is 0, x / -1 negates; a full 64-bit mask literal is still a bit pattern.
    CHECK(assemble("vdup.fp16 ub[7 % -1 + 32 / -1 * -1]")[0].dst.addr == 32);
    const Instr m = assemble("vadd.fp16 ub[0], ub[0], ub[0], mask=0xffffffffffffffff:0xffffffffffffffff")[0];
    CHECK(m.vec.mask_hi == ~0ull);
    CHECK(m.vec.mask_lo == ~0ull);
}

TEST_CASE("isa asm: program size, .rep nesting and expression depth are bounded") {
    // Each limit is reached exactly and passed by one (small limits; the defaults behave alike).
    AsmLimits lim;
    lim.max_instructions = 100;
    lim.max_line_visits = 1000;
    lim.max_rep_depth = 4;
    lim.max_expr_depth = 8;
    auto error = [&](const std::string& text) {
        try {
            assemble(text, lim);
        } catch (const AsmError& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    const std::string vdup = "vdup.fp16 ub[0x0], repeat=1\n";
    CHECK(assemble(".rep 100\n" + vdup + ".endr\n", lim).size() == 100);
    CHECK(error(".rep 101\n" + vdup + ".endr\n").find("more than 100 instructions") != std::string::npos);
    // Loops without instructions (or with an empty body) count their lines too: no hang.
    CHECK(error(".rep 100\n.rep 100\n.set X 1\n.endr\n.endr\n").find("expands to more than 1000") != std::string::npos);
    CHECK(error(".rep 0x7fffffffffffffff\n.endr\n").find("expands to more than") != std::string::npos);
    CHECK(assemble(".rep 1\n.rep 1\n.rep 1\n.rep 1\n" + vdup + ".endr\n.endr\n.endr\n.endr\n", lim).size() == 1);
    CHECK(error(".rep 1\n.rep 1\n.rep 1\n.rep 1\n.rep 1\n" + vdup + ".endr\n.endr\n.endr\n.endr\n.endr\n").find("nested more than 4") !=
          std::string::npos);
    CHECK(assemble("vdup.fp16 ub[((((((0x20))))))]", lim)[0].dst.addr == 0x20);
    CHECK(error("vdup.fp16 ub[(((((((((0x20)))))))))]").find("nested too deeply") != std::string::npos);
    CHECK(error("vdup.fp16 ub[---------1]").find("nested too deeply") != std::string::npos);
    // The default limits stop a deep expression before it can exhaust the stack.
    CHECK(asm_error("vdup.fp16 ub[" + std::string(100000, '-') + "1]").find("nested too deeply") != std::string::npos);
}
