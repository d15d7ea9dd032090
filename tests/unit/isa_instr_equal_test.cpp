// Instruction equality (isa::operator==) compares a vector instruction's parameters as the bytes
// of their fields: it must agree with VecParams' member-wise equality for every field, and
// ignore the padding between them.
#include <catch2/catch.hpp>
#include <cstring>
#include <limits>

#include "isa/instr.h"

using namespace sfumato::isa;

namespace {
Instr vadd(const VecParams& v) {
    Instr in = make_instr(Opcode::VADD);
    in.dst.addr = 0x100;
    in.src0.addr = 0x200;
    in.src1.addr = 0x300;
    in.vec = v;
    return in;
}
}  // namespace

TEST_CASE("isa instr equality: each vector parameter field alone makes two instructions differ") {
    const VecParams base;
    CHECK(vadd(base) == vadd(base));
    std::vector<VecParams> one_off;
    for (int f = 0; f < 13; ++f) {
        VecParams v = base;
        switch (f) {
            case 0: v.repeat = 2; break;
            case 1: v.dst_blk_stride = 2; break;
            case 2: v.src0_blk_stride = 2; break;
            case 3: v.src1_blk_stride = 2; break;
            case 4: v.dst_rep_stride = 9; break;
            case 5: v.src0_rep_stride = 9; break;
            case 6: v.src1_rep_stride = 9; break;
            case 7: v.mask_lo = 1; break;
            case 8: v.mask_hi = 1ull << 63; break;
            case 9: v.src_dtype = DType::FP32; break;
            case 10: v.round = RoundMode::FLOOR; break;
            case 11: v.cmp = CmpMode::LT; break;
            case 12: v.gather_span = 64; break;
        }
        CHECK_FALSE(v == base);
        CHECK_FALSE(vadd(v) == vadd(base));
        CHECK_FALSE(vadd(base) == vadd(v));
    }
    VecParams idx = base;
    idx.with_index = 1;
    CHECK_FALSE(vadd(idx) == vadd(base));
}

TEST_CASE("isa instr equality: agrees with VecParams' member-wise equality, whatever the padding holds") {
    uint64_t x = 0x2545f4914f6cdd1dull;
    auto rnd = [&] {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        return x;
    };
    int equal = 0;
    for (int i = 0; i < 20000; ++i) {
        // Garbage in every byte (padding included), then fields drawn from two values each, so
        // about half the pairs agree on any one field and some agree on all.
        VecParams a, b;
        for (VecParams* v : {&a, &b}) {
            unsigned char raw[sizeof(VecParams)];
            for (auto& c : raw) c = static_cast<unsigned char>(rnd());
            std::memcpy(static_cast<void*>(v), raw, sizeof raw);
            const uint64_t r = rnd();
            v->repeat = static_cast<uint16_t>(1 + (r & 1));
            v->dst_blk_stride = static_cast<uint16_t>(1 + (r >> 1 & 1));
            v->src0_blk_stride = static_cast<uint16_t>(1 + (r >> 2 & 1));
            v->src1_blk_stride = static_cast<uint16_t>(1 + (r >> 3 & 1));
            v->dst_rep_stride = static_cast<uint16_t>(8 + (r >> 4 & 1));
            v->src0_rep_stride = static_cast<uint16_t>(8 + (r >> 5 & 1));
            v->src1_rep_stride = static_cast<uint16_t>(8 + (r >> 6 & 1));
            v->mask_lo = (r >> 7 & 1) ? ~0ull : 0xffull;
            v->mask_hi = (r >> 8 & 1) ? ~0ull : 0;
            v->src_dtype = (r >> 9 & 1) ? DType::FP32 : DType::FP16;
            v->round = (r >> 10 & 1) ? RoundMode::RINT : RoundMode::TRUNC;
            v->cmp = (r >> 11 & 1) ? CmpMode::EQ : CmpMode::GT;
            v->with_index = static_cast<uint8_t>(r >> 12 & 1);
            v->gather_span = (r >> 13 & 1) ? 256u : 0u;
        }
        if (i % 4 == 0) {  // some pairs equal in every field but not in the padding
            unsigned char raw[sizeof(VecParams)];
            std::memcpy(raw, static_cast<const void*>(&b), sizeof raw);
            std::memcpy(static_cast<void*>(&b), static_cast<const void*>(&a), sizeof raw);
            // Only the padding after the strides (bytes 14 and 15) keeps b's garbage.
            std::memcpy(reinterpret_cast<unsigned char*>(&b) + 14, raw + 14, 2);
        }
        const bool members = a == b;
        equal += members;
        REQUIRE((vadd(a) == vadd(b)) == members);
    }
    CHECK(equal > 1000);
}

TEST_CASE("isa instr equality: operands, positions and the scalar by value and sign, nans equal") {
    const Instr base = vadd(VecParams{});
    auto differs = [&](auto change) {
        Instr x = base;
        change(x);
        return !(x == base) && !(base == x);
    };
    CHECK(differs([](Instr& x) { x.op = Opcode::VSUB; }));
    CHECK(differs([](Instr& x) { x.pipe = Pipe::S; }));
    CHECK(differs([](Instr& x) { x.dtype = DType::FP32; }));
    CHECK(differs([](Instr& x) { x.dst.addr += 32; }));
    CHECK(differs([](Instr& x) { x.src0.addr += 32; }));
    CHECK(differs([](Instr& x) { x.src1.addr += 32; }));
    CHECK(differs([](Instr& x) { x.src2.addr += 32; }));
    CHECK(differs([](Instr& x) { x.dst.pos = Pos::L1; }));
    CHECK(differs([](Instr& x) { x.src0.pos = Pos::L1; }));
    CHECK(differs([](Instr& x) { x.src1.pos = Pos::L1; }));
    CHECK(differs([](Instr& x) { x.src2.pos = Pos::L1; }));
    CHECK(differs([](Instr& x) { x.scalar = 1.5; }));
    // Bookkeeping is not compared.
    Instr later = base;
    later.seq = 7;
    later.issue_cycle = 99;
    CHECK(later == base);
    // -0 and +0 differ; nans of any payload or sign are equal; equal values are equal.
    Instr p = base, m = base, n1 = base, n2 = base, v1 = base, v2 = base;
    p.scalar = 0.0;
    m.scalar = -0.0;
    n1.scalar = std::numeric_limits<double>::quiet_NaN();
    n2.scalar = -std::numeric_limits<double>::signaling_NaN();
    v1.scalar = 2.25;
    v2.scalar = 4.5 / 2;
    CHECK_FALSE(p == m);
    CHECK(n1 == n2);
    CHECK_FALSE(n1 == p);
    CHECK(v1 == v2);
}

TEST_CASE("isa instr equality: opcode, pipe, dtype, each operand and the scalar compare, the padding and bookkeeping do not") {
    const Instr base = vadd(VecParams{});
    // Each header field and each operand's address and buffer alone.
    for (int f = 0; f < 11; ++f) {
        Instr in = base;
        switch (f) {
            case 0: in.op = Opcode::VSUB; break;
            case 1: in.pipe = Pipe::MTE2; break;
            case 2: in.dtype = DType::FP32; break;
            case 3: in.dst.addr += 32; break;
            case 4: in.src0.addr += 32; break;
            case 5: in.src1.addr += 32; break;
            case 6: in.src2.addr = 32; break;
            case 7: in.dst.pos = Pos::L1; break;
            case 8: in.src0.pos = Pos::L1; break;
            case 9: in.src1.pos = Pos::L1; break;
            case 10: in.src2.pos = Pos::L1; break;
        }
        CHECK_FALSE(in == base);
        CHECK_FALSE(base == in);
    }
    // Issue cycle, sequence number and the bytes between the header and the operands are not compared.
    Instr b = base;
    b.issue_cycle = 7;
    b.seq = 9;
    std::memset(reinterpret_cast<unsigned char*>(&b) + 4, 0x5a, offsetof(Instr, dst) - 4);
    CHECK(b == base);
    // Scalars by value and sign: -0 differs from +0, any two nans are equal, a nan differs from a number.
    Instr p = base, q = base;
    p.scalar = 0.0;
    q.scalar = -0.0;
    CHECK_FALSE(p == q);
    p.scalar = std::numeric_limits<double>::quiet_NaN();
    q.scalar = -std::numeric_limits<double>::quiet_NaN();
    CHECK(p == q);
    uint64_t bits;
    std::memcpy(&bits, &p.scalar, 8);
    bits ^= 1;  // another payload
    std::memcpy(&q.scalar, &bits, 8);
    CHECK(p == q);
    q.scalar = 1.0;
    CHECK_FALSE(p == q);
    p.scalar = 1.0;
    CHECK(p == q);
}

TEST_CASE("isa make_instr: every opcode gets its default pipe and its parameters' defaults") {
    for (int i = 0; i < static_cast<int>(Opcode::kCount); ++i) {
        const Opcode op = static_cast<Opcode>(i);
        const Instr in = make_instr(op);
        CHECK(in.op == op);
        CHECK(in.pipe == default_pipe(op));
        CHECK(in == make_instr(op));
        if (param_kind(op) == ParamKind::Vec) CHECK(in.vec == VecParams{});
        if (param_kind(op) == ParamKind::Copy) CHECK(in.copy == CopyParams{});
        if (param_kind(op) == ParamKind::Mad) CHECK(in.mad == MadParams{});
        // Vector compute operands live in the UB; a mad's in L0C, L0A, L0B and BT.
        if (op >= Opcode::VADD) CHECK((in.dst.pos == Pos::UB && in.src0.pos == Pos::UB && in.src1.pos == Pos::UB));
        if (op == Opcode::MAD)
            CHECK((in.dst.pos == Pos::L0C && in.src0.pos == Pos::L0A && in.src1.pos == Pos::L0B && in.src2.pos == Pos::BT));
        if (op == Opcode::COPY_GM_TO_UB) CHECK((in.dst.pos == Pos::UB && in.src0.pos == Pos::GM));
    }
}
