// Differential test: random vector instructions (dtype, repeat, strides, masks) against a naive
// per-element reference written here from the ISA's definition, on non-overlapping operands.
#include <catch2/catch.hpp>
#include <cmath>

#include "isa/instr.h"
#include "isa/semantics.h"
#include "isa_test_mem.h"

using namespace sfumato::isa;
using namespace sfumato::isa::test;

namespace {
struct Rng {
    uint64_t s;
    uint64_t next() {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        return s;
    }
    uint32_t below(uint32_t n) { return static_cast<uint32_t>(next() % n); }
};

double reference(Opcode op, DType t, double a, double b, double s) {
    const bool integer = is_int(t);
    const auto i64 = [](double x) { return static_cast<int64_t>(x); };
    switch (op) {
        case Opcode::VADD: return integer ? static_cast<double>(i64(a) + i64(b)) : a + b;
        case Opcode::VSUB: return integer ? static_cast<double>(i64(a) - i64(b)) : a - b;
        case Opcode::VMUL: return integer ? static_cast<double>(i64(a) * i64(b)) : a * b;
        case Opcode::VMAX: return std::fmax(a, b);
        case Opcode::VMIN: return std::fmin(a, b);
        case Opcode::VADDS: return integer ? static_cast<double>(i64(a) + i64(s)) : a + s;
        case Opcode::VMULS: return integer ? static_cast<double>(i64(a) * i64(s)) : a * s;
        case Opcode::VABS: return std::fabs(a);
        case Opcode::VRELU: return a > 0 ? a : 0.0;
        default: return 0;
    }
}
}  // namespace

TEST_CASE("isa vector: random instructions match a per-element reference") {
    const Opcode ops[] = {Opcode::VADD, Opcode::VSUB, Opcode::VMUL, Opcode::VMAX, Opcode::VMIN,
                          Opcode::VADDS, Opcode::VMULS, Opcode::VABS, Opcode::VRELU};
    const DType types[] = {DType::FP16, DType::FP32, DType::BF16, DType::INT16, DType::INT32};
    Rng rng{0x1234567};
    int mismatches = 0, checked = 0;
    TestMem m(0x40000, 64);
    for (int iter = 0; iter < 300; ++iter) {
        const Opcode op = ops[rng.below(9)];
        const DType t = types[rng.below(5)];
        const uint32_t es = dtype_size(t), L = 256 / es, epb = 32 / es;
        Instr in = make_instr(op);
        in.dtype = t;
        VecParams& v = in.vec;
        v.repeat = static_cast<uint16_t>(1 + rng.below(12));
        v.dst_blk_stride = static_cast<uint16_t>(1 + rng.below(3));
        v.src0_blk_stride = static_cast<uint16_t>(rng.below(4));
        v.src1_blk_stride = static_cast<uint16_t>(1 + rng.below(3));
        v.dst_rep_stride = static_cast<uint16_t>(8 * v.dst_blk_stride + rng.below(5));  // dst repeats never overlap
        v.src0_rep_stride = static_cast<uint16_t>(rng.below(30));
        v.src1_rep_stride = static_cast<uint16_t>(rng.below(30));
        if (rng.below(2)) {
            const uint32_t n = 1 + rng.below(L);
            v.mask_lo = n >= 64 ? ~0ull : (1ull << n) - 1, v.mask_hi = n <= 64 ? 0 : n >= 128 ? ~0ull : (1ull << (n - 64)) - 1;
        } else {
            v.mask_lo = rng.next(), v.mask_hi = L > 64 ? rng.next() : 0;
        }
        in.scalar = static_cast<double>(static_cast<int>(rng.below(200)) - 100) / 4;
        if (is_int(t)) in.scalar = std::trunc(in.scalar);
        in.src0 = at(Pos::UB, 0x0), in.src1 = at(Pos::UB, 0x10000), in.dst = at(Pos::UB, 0x20000);
        REQUIRE(validate(in).empty());
        for (uint32_t i = 0; i < 0x10000 / es; ++i) {
            const double x = static_cast<double>(static_cast<int>(rng.below(2000)) - 1000) / (is_int(t) ? 1 : 16);
            m.set(Pos::UB, i * es, t, x);
            m.set(Pos::UB, 0x10000 + i * es, t, x * 0.5 + 3);
        }
        std::vector<uint8_t> before = m.of(Pos::UB);
        execute(in, m);
        std::vector<uint8_t> expect = before;
        const bool unary = op == Opcode::VABS || op == Opcode::VRELU || op == Opcode::VADDS || op == Opcode::VMULS;
        for (uint32_t r = 0; r < v.repeat; ++r)
            for (uint32_t l = 0; l < L; ++l) {
                const bool on = l < 64 ? (v.mask_lo >> l) & 1 : (v.mask_hi >> (l - 64)) & 1;
                if (!on) continue;
                auto addr = [&](uint64_t base, uint16_t blk, uint16_t rep) {
                    return base + (uint64_t{r} * rep + uint64_t{l / epb} * blk) * 32 + (l % epb) * es;
                };
                const double a = load_f64(t, &before[addr(0x0, v.src0_blk_stride, v.src0_rep_stride)]);
                const double b = unary ? 0 : load_f64(t, &before[addr(0x10000, v.src1_blk_stride, v.src1_rep_stride)]);
                const double y = reference(op, t, a, b, in.scalar);
                uint8_t* out = &expect[addr(0x20000, v.dst_blk_stride, v.dst_rep_stride)];
                if (is_int(t)) store_wrap(t, out, static_cast<int64_t>(y));
                else store_f64(t, out, y);
                ++checked;
            }
        if (expect != m.of(Pos::UB)) {
            ++mismatches;
            UNSCOPED_INFO("mismatch: " << opcode_name(op) << "." << dtype_name(t) << " repeat " << v.repeat);
        }
    }
    CHECK(mismatches == 0);
    CHECK(checked > 10000);
}
