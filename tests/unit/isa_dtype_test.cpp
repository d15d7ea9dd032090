#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "isa/dtype.h"

using namespace sfumato::isa;

namespace {
uint32_t rb(DType t, double v, RoundMode m = RoundMode::RINT) { return round_bits(t, v, m); }
double f16(uint16_t h) { return f16_to_f32(h); }
}  // namespace

TEST_CASE("isa dtype: fp16 round to nearest even at ties, overflow, denormals") {
    // 1 + 2^-11 is exactly halfway between 1 and 1 + 2^-10: ties go to the even significand.
    CHECK(rb(DType::FP16, 1.0 + std::ldexp(1.0, -11)) == 0x3c00u);
    CHECK(rb(DType::FP16, 1.0 + 3 * std::ldexp(1.0, -11)) == 0x3c02u);
    CHECK(rb(DType::FP16, 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -30)) == 0x3c01u);
    CHECK(rb(DType::FP16, 65504.0) == 0x7bffu);
    CHECK(rb(DType::FP16, 65520.0) == 0x7c00u);  // halfway to 2^16 rounds to inf
    CHECK(rb(DType::FP16, 65519.0) == 0x7bffu);
    CHECK(rb(DType::FP16, 65520.0, RoundMode::TRUNC) == 0x7bffu);  // directed: largest finite
    CHECK(rb(DType::FP16, -1e9, RoundMode::CEIL) == 0xfbffu);
    CHECK(rb(DType::FP16, -1e9, RoundMode::FLOOR) == 0xfc00u);
    CHECK(rb(DType::FP16, std::ldexp(1.0, -24)) == 0x0001u);  // smallest denormal
    CHECK(rb(DType::FP16, std::ldexp(1.0, -25)) == 0x0000u);  // tie to even (0)
    CHECK(rb(DType::FP16, std::ldexp(3.0, -26)) == 0x0001u);
    CHECK(rb(DType::FP16, -0.0) == 0x8000u);
    CHECK(rb(DType::FP16, INFINITY) == 0x7c00u);
    CHECK((rb(DType::FP16, NAN) & 0x7c00u) == 0x7c00u);
    CHECK((rb(DType::FP16, NAN) & 0x3ffu) != 0);
    CHECK(f16(0x0001) == std::ldexp(1.0, -24));
}

TEST_CASE("isa dtype: every rounding mode on fp16 and integers") {
    const double x = 1.0 + 1.5 * std::ldexp(1.0, -10);  // exactly the tie between 0x3c01 and 0x3c02
    CHECK(rb(DType::FP16, x, RoundMode::RINT) == 0x3c02u);
    CHECK(rb(DType::FP16, x, RoundMode::TRUNC) == 0x3c01u);
    CHECK(rb(DType::FP16, x, RoundMode::FLOOR) == 0x3c01u);
    CHECK(rb(DType::FP16, x, RoundMode::CEIL) == 0x3c02u);
    CHECK(rb(DType::FP16, x, RoundMode::ROUND) == 0x3c02u);
    CHECK(rb(DType::FP16, x, RoundMode::ODD) == 0x3c01u);
    CHECK(rb(DType::FP16, -x, RoundMode::FLOOR) == 0xbc02u);
    CHECK(rb(DType::FP16, -x, RoundMode::CEIL) == 0xbc01u);
    CHECK(rb(DType::FP16, 1.0 + std::ldexp(1.0, -10), RoundMode::ODD) == 0x3c01u);  // exact: unchanged
    CHECK(rb(DType::FP16, 1.0 + std::ldexp(1.0, -12), RoundMode::ODD) == 0x3c01u);  // inexact: odd
    // Integers: ties, direction and saturation.
    CHECK(static_cast<int8_t>(rb(DType::INT8, 2.5)) == 2);
    CHECK(static_cast<int8_t>(rb(DType::INT8, 3.5)) == 4);
    CHECK(static_cast<int8_t>(rb(DType::INT8, -2.5, RoundMode::ROUND)) == -3);
    CHECK(static_cast<int8_t>(rb(DType::INT8, -2.5, RoundMode::TRUNC)) == -2);
    CHECK(static_cast<int8_t>(rb(DType::INT8, -2.5, RoundMode::FLOOR)) == -3);
    CHECK(static_cast<int8_t>(rb(DType::INT8, -2.5, RoundMode::CEIL)) == -2);
    CHECK(static_cast<int8_t>(rb(DType::INT8, 300.0)) == 127);
    CHECK(static_cast<int8_t>(rb(DType::INT8, -300.0)) == -128);
    CHECK(static_cast<int8_t>(rb(DType::INT8, INFINITY)) == 127);
    CHECK(rb(DType::INT8, NAN) == 0u);
    CHECK(static_cast<int16_t>(rb(DType::INT16, 40000.0)) == 32767);
    CHECK(static_cast<int32_t>(rb(DType::INT32, 3e9)) == std::numeric_limits<int32_t>::max());
    CHECK(rb(DType::UINT8, -1.0) == 0u);
}

TEST_CASE("isa dtype: bf16 and fp32 single rounding from double") {
    CHECK(rb(DType::BF16, 1.0 + std::ldexp(1.0, -8)) == 0x3f80u);      // tie -> even
    CHECK(rb(DType::BF16, 1.0 + 3 * std::ldexp(1.0, -8)) == 0x3f82u);  // tie -> even (up)
    CHECK(rb(DType::BF16, 3.5e38) == 0x7f80u);                         // overflow -> inf
    // A double just above the fp32 tie: a double->float->fp16 path would round twice.
    const double d = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
    CHECK(rb(DType::FP16, d) == 0x3c01u);
    CHECK(rb(DType::FP32, 1.0 + std::ldexp(1.0, -24)) == f32_bits(1.0f));
    CHECK(rb(DType::FP32, std::ldexp(1.0, -149)) == 1u);  // fp32 denormal
    CHECK(bits_f32(rb(DType::FP32, 0.1)) == 0.1f);
}

TEST_CASE("isa dtype: fast RNE path equals the generic rounding on random and boundary values") {
    uint64_t s = 0x9e3779b97f4a7c15ull;
    auto next = [&] {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        return s;
    };
    int mismatches = 0;
    for (DType t : {DType::FP16, DType::BF16, DType::FP32}) {
        for (int i = 0; i < 200000; ++i) {
            // Random exponents around each format's range, random significands; plus exact ties.
            const int e = static_cast<int>(next() % 320) - 160;
            double v = std::ldexp(1.0 + static_cast<double>(next() >> 12) * std::ldexp(1.0, -52), e);
            if (i % 3 == 0) v = std::ldexp(static_cast<double>(next() % 4096) + 0.5, e % 30);  // ties
            if (next() & 1) v = -v;
            mismatches += round_bits(t, v, RoundMode::RINT) != round_bits_reference(t, v, RoundMode::RINT);
            uint32_t stored = 0;
            store_f64(t, reinterpret_cast<uint8_t*>(&stored), v);  // fp32 takes the host-cast path
            mismatches += stored != round_bits_reference(t, v, RoundMode::RINT);
        }
        for (double v :
             {0.0, -0.0, 65504.0, 65519.99, 65520.0, 3.4e38, 3.5e38, 1e-45, 1e-46, 5.9604644775390625e-08,
              2.9802322387695312e-08, 2.98023223876953125e-08 * 1.5, 6.103515625e-05, 6.1035e-05})
            mismatches += round_bits(t, v, RoundMode::RINT) != round_bits_reference(t, v, RoundMode::RINT);
    }
    CHECK(mismatches == 0);
}

TEST_CASE("isa dtype: the inline fp16 conversions equal the full path bit for bit") {
    uint64_t mismatches = 0;
    // Every fp16 pattern to fp32.
    for (uint32_t h = 0; h < 65536; ++h)
        mismatches +=
            f32_bits(f16_to_f32(static_cast<uint16_t>(h))) != f32_bits(f16_to_f32_full(static_cast<uint16_t>(h)));
    // fp32 to fp16: every exponent and sign, the significand's 16 low bits swept through the
    // rounding cases (below, at and above a tie, odd and even results), its high bits stepped.
    for (uint32_t sign = 0; sign < 2; ++sign)
        for (uint32_t e = 0; e < 256; ++e)
            for (uint32_t hi = 0; hi < 128; hi += 13)
                for (uint32_t lo = 0; lo < 65536; lo += 7) {
                    const uint32_t x = (sign << 31) | (e << 23) | (hi << 16) | lo;
                    mismatches += f32_to_f16(bits_f32(x)) != f32_to_f16_full(bits_f32(x));
                    mismatches += f32_to_f16(bits_f32(x | 0x1000u)) != f32_to_f16_full(bits_f32(x | 0x1000u));
                }
    CHECK(mismatches == 0);
}
