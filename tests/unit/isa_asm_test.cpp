#include <catch2/catch.hpp>
#include <cmath>

#include "isa/asm.h"
#include "isa/semantics.h"

using namespace sfumato::isa;

namespace {
Addr A(Pos p, uint64_t a) { return Addr{a, p}; }

// A valid instruction of opcode op with as many non-default fields as validate() allows.
Instr sample(Opcode op) {
    Instr in = make_instr(op);
    in.issue_cycle = 99, in.seq = 7;  // bookkeeping: not part of the text, not compared
    switch (param_kind(op)) {
        case ParamKind::None: break;
        case ParamKind::Flag:
            in.flag = {Pipe::MTE2, Pipe::V, 5};
            if (op == Opcode::PIPE_BARRIER) in.flag = {Pipe::ALL, Pipe::S, 0};
            break;
        case ParamKind::CrossFlag: in.xflag = {1, 9, Pipe::MTE3}; break;
        case ParamKind::Scalar: in.sc = {17, SysReg::SYS_CNT, 31}; break;
        case ParamKind::Copy: {
            in.copy = {3, 70, 5, 2, 0, 0, 0};
            Pos src = Pos::GM, dst = Pos::UB;
            switch (op) {
                case Opcode::COPY_GM_TO_UB: in.copy.pad_left = 2, in.copy.pad_right = 1; break;
                case Opcode::COPY_GM_TO_L1: dst = Pos::L1; break;
                case Opcode::COPY_L1_TO_UB: src = Pos::L1; break;
                case Opcode::COPY_UB_TO_GM: src = Pos::UB, dst = Pos::GM, in.copy.atomic = 1, in.copy.len_bytes = 72; break;
                case Opcode::COPY_UB_TO_L1: src = Pos::UB, dst = Pos::L1; break;
                default: src = Pos::UB; break;
            }
            in.dst = A(dst, 0x1240), in.src0 = A(src, 0x80);
            in.dtype = DType::FP32;
            in.scalar = -1.25;
            break;
        }
        case ParamKind::NdNz:
            in.nd = {2, 20, 37, 32, 1, 40, 800, 100};
            in.dst = A(Pos::L1, 0x400), in.src0 = A(Pos::GM, 0x10000), in.dtype = DType::BF16;
            break;
        case ParamKind::Load2d:
            in.l2d = {3, 4, 2, 1, 1};
            in.dst = A(Pos::L0B, 0x200), in.src0 = A(op == Opcode::LOAD2D ? Pos::L1 : Pos::GM, 0x600);
            break;
        case ParamKind::Load3d:
            in.l3d = {9, 11, 2, 3, 2, 2, 1, 1, 2, 1, 0, 1, 2, 16, 32, 16, 64};
            in.dst = A(Pos::L0A, 0x0), in.src0 = A(Pos::L1, 0x800), in.scalar = 0.5;
            break;
        case ParamKind::Fill:
            in.fill = {4, 3, 2};
            in.dst = A(Pos::L0B, 0x1000), in.dtype = DType::INT8, in.scalar = -7;
            break;
        case ParamKind::Mad:
            in.mad = {33, 70, 17, 0, 1};
            in.src2 = A(Pos::BT, 0x40), in.dst.addr = 0x400, in.src0.addr = 0x200, in.src1.addr = 0x600;
            in.dtype = DType::BF16;
            break;
        case ParamKind::Fix:
            in.fix = {40, 24, 48, 30, DType::INT8, QuantMode::VECTOR, 1, 1};
            in.dtype = DType::INT32;
            in.src0 = A(Pos::L0C, 0x400), in.src1 = A(Pos::FB, 0x80);
            in.dst = A(op == Opcode::FIXPIPE ? Pos::L1 : Pos::UB, 0x2000);
            break;
        case ParamKind::Vec: {
            if (op == Opcode::SET_MASK) {
                in.vec.mask_lo = 0x00ff00ff00ff00ffull, in.vec.mask_hi = 0x1;
                break;
            }
            VecParams& v = in.vec;
            v.repeat = 255, v.dst_blk_stride = 2, v.src0_blk_stride = 3, v.src1_blk_stride = 0;
            v.dst_rep_stride = 16, v.src0_rep_stride = 24, v.src1_rep_stride = 1;
            v.mask_lo = 0xdeadbeefcafef00dull, v.mask_hi = 0x123;
            in.dtype = DType::FP32;
            in.dst = A(Pos::UB, 0x2000), in.src0 = A(Pos::UB, 0x20), in.src1 = A(Pos::UB, 0x4000), in.src2 = A(Pos::UB, 0x6000);
            in.scalar = 0.1;
            if (op == Opcode::VAND || op == Opcode::VOR || op == Opcode::VNOT) in.dtype = DType::INT16;
            if (op == Opcode::VTRANSPOSE) in.dtype = DType::BF16;
            if (op == Opcode::VCONV) v.src_dtype = DType::INT32, v.round = RoundMode::ODD, in.dtype = DType::FP16;
            if (op == Opcode::VCMP || op == Opcode::VCMPS) v.cmp = CmpMode::GE;
            if (op >= Opcode::VRED_SUM && op <= Opcode::VREDALL_MIN) v.with_index = 1;
            if (op == Opcode::VGATHER) v.gather_span = 4096;
            v.mask_lo = 0x0000ffffull;  // a prefix mask prints as a count
            v.mask_hi = 0;
            if (static_cast<int>(op) % 2) v.mask_lo = 0xdeadbeefcafef00dull, v.mask_hi = 0x123;
            break;
        }
    }
    return in;
}
}  // namespace

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
        other.dst.addr += 32;
        if (param_kind(op) != ParamKind::Flag && param_kind(op) != ParamKind::CrossFlag && op != Opcode::NOP &&
            op != Opcode::SCALAR && op != Opcode::GET_SYSREG && op != Opcode::SET_MASK) {
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
    fails("\n\nvadd ub[0], ub[0], ub[0], repeat=0", 3, "vadd");          // validate(): repeat 1..255
    fails("vadd ub[0], ub[0], ub[0], repeat=70000", 1, "70000");        // field overflow
    fails("vadd ub[0], ub[0], ub[0], bogus=1", 1, "bogus");
    fails("vadd ub[X], ub[0], ub[0]", 1, "X");
    fails("set_flag MTE2, Q, 0", 1, "Q");
    fails(".rep 2\nnop\n", 1, ".rep");
    fails("nop\n.endr", 2, ".endr");
    fails(".bogus 1", 1, ".bogus");
    fails("vadd zz[0], ub[0], ub[0]", 1, "zz");
    fails("copy_gm_to_ub ub[0], gm[0], len=0", 1, "copy_gm_to_ub");
}
