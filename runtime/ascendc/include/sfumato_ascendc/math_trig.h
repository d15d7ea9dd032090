// The advanced API's trigonometric and hyperbolic math (Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Atanh,
// Asinh), Sign and Round, each a chain of the basic layer's count-form vector calls (so its cycles are the model's),
// computed in float: half sources are widened by a Cast and the result rounded back (CAST_RINT). Scratch and
// slicing as the other math APIs (adv_scratch.h); math_host.h gives the sizes.
//
// Formulas (written here from the functions' definitions, not the vendor's code):
//  Sin, Cos: k = rint(x / pi + s) (s = 0 for Sin, 1/2 for Cos: the fp32 -> fp32 vconv), r = x - k pi + s pi with pi
//    in four parts (Cody-Waite: k times each of the first three exact for |x| <= 65504, the reference's domain), so
//    r in [-pi/2, pi/2]; Sin(x) = (-1)^k sin r, Cos(x) = (-1)^k sin r too (x = r + k pi - pi/2); sin r by its Taylor
//    polynomial to r^13 (truncation below 7e-10 on the interval), (-1)^k = 1 - 2 (k - 2 floor(k / 2)).
//  Tan: k = rint(x / pi), r as above, sin r / cos r (cos r by its Taylor polynomial to r^14).
//  Atan: three halvings u <- u / (1 + sqrt(1 + u^2)) of |x| (clamped to 1e18) bring u below tan(pi / 16); atan u by
//    its Taylor series to u^15 (truncation below 1e-13), times 8 and the sign of x (x / max(|x|, FLT_MIN)).
//  Asin: Atan(x / sqrt((1 - x)(1 + x))) (x = +-1: the quotient is infinite, clamped: +-pi/2).  Acos: pi/2 - Asin.
//  Sinh, Cosh: (e^x -+ e^-x) / 2.  Atanh: ln((1 + x) / (1 - x)) / 2.  Asinh: sign(x) ln(|x| + sqrt(x^2 + 1)).
//  Sign: x / max(|x|, FLT_MIN): -1, 0 or 1.
#pragma once
#include <cfloat>
#include <cstdint>
#include <type_traits>

#include "sfumato_ascendc/adv_scratch.h"
#include "sfumato_ascendc/core_state.h"
#include "sfumato_ascendc/math_host.h"
#include "sfumato_ascendc/tensor.h"
#include "sfumato_ascendc/vector.h"
#include "sfumato_ascendc/vector_more.h"

namespace AscendC {


namespace sfumato_math {

// pi in four parts: kPi[0..2] have 8, 9 and 9 significant bits (k times each exact for |k| < 2^15: |x| <= 65504
// gives |k| <= 20851), their sum pi to double precision.
constexpr float kPi[4] = {3.140625f, 9.670257568359375e-04f, 6.2771141529083251953e-07f, 1.2154201256553420762e-10f};
constexpr float kInvPi = 0.318309886183790671538f;
constexpr float kHalfPi = 1.57079632679489661923f;
// The float buffers a trig API's body takes (besides the two that carry a half source and result).
constexpr uint32_t kSinBufs = 4, kTanBufs = 4, kAtanBufs = 4, kHypBufs = 2, kSignBufs = 0;

template <class T>
constexpr uint32_t widen_bufs() {
    return std::is_same_v<T, half> ? 2u : 0u;
}

// y = body(x) over the count in float: float tensors directly, half through two float buffers (x widened, y
// rounded back). body(y, x, scratch, n) may use the scratch's buffers 0 .. bufs - 1.
template <class T, class F>
void float_eval(const char* api, const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>& tmp,
                uint32_t count, uint32_t bufs, F&& body) {
    require_float<T>();
    sfumato::ascendc::enter(api);
    sfumato::ascendc::count_of(count, dst, src);
    const Scratch s = carve(api, tmp, bufs + widen_bufs<T>(), 0, count);
    slices(count, s.slice, [&](uint32_t o, uint32_t n) {
        const int32_t c = static_cast<int32_t>(n);
        if constexpr (std::is_same_v<T, float>) {
            body(dst[o], src[o], s, c);
        } else {
            const LocalTensor<float> x = s.buf<float>(bufs), y = s.buf<float>(bufs + 1);
            Cast(x, src[o], RoundMode::CAST_NONE, n);
            body(y, x, s, c);
            Cast(dst[o], y, RoundMode::CAST_RINT, n);
        }
    });
}

// Horner: p = sum coef[i] z^i (coef[0] first), n coefficients.
inline void horner(const LocalTensor<float>& p, const LocalTensor<float>& z, const float* coef, int n, int32_t c) {
    Duplicate(p, coef[n - 1], c);
    for (int i = n - 2; i >= 0; --i) {
        Mul(p, p, z, c);
        Adds(p, p, coef[i], c);
    }
}
constexpr float kSinTaylor[7] = {1.0f, -1.0f / 6, 1.0f / 120, -1.0f / 5040, 1.0f / 362880, -1.0f / 39916800,
                                 1.0f / 6227020800.0f};
constexpr float kCosTaylor[8] = {1.0f, -1.0f / 2, 1.0f / 24, -1.0f / 720, 1.0f / 40320, -1.0f / 3628800,
                                 1.0f / 479001600, -1.0f / 87178291200.0f};
constexpr float kAtanTaylor[8] = {1.0f, -1.0f / 3, 1.0f / 5, -1.0f / 7, 1.0f / 9, -1.0f / 11, 1.0f / 13, -1.0f / 15};

// k = rint(x / pi + shift), r = x - (k - shift) pi = x - k pi + shift pi: k times each part of pi exact, shift times
// each part exact (a halving), p a work buffer.
inline void reduce_pi(const LocalTensor<float>& k, const LocalTensor<float>& r, const LocalTensor<float>& p,
                      const LocalTensor<float>& x, float shift, int32_t c) {
    Muls(k, x, kInvPi, c);
    if (shift != 0.0f) Adds(k, k, shift, c);
    Cast(k, k, RoundMode::CAST_RINT, static_cast<uint32_t>(c));
    Muls(r, k, -kPi[0], c);
    Add(r, r, x, c);
    for (int i = 0; i < 4; ++i) {
        if (i > 0) {
            Muls(p, k, -kPi[i], c);
            Add(r, r, p, c);
        }
        if (shift != 0.0f) Adds(r, r, shift * kPi[i], c);
    }
}
// Sin (shift 0) and Cos (shift 1/2): (-1)^k sin r. Buffers 0..3.
inline void sin_body(const LocalTensor<float>& y, const LocalTensor<float>& x, const Scratch& s, int32_t c,
                     float shift) {
    const LocalTensor<float> k = s.buf<float>(0), r = s.buf<float>(1), h = s.buf<float>(2), p = s.buf<float>(3);
    reduce_pi(k, r, p, x, shift, c);
    Muls(h, k, 0.5f, c);  // (-1)^k = 1 - 2 (k - 2 floor(k / 2))
    Cast(h, h, RoundMode::CAST_FLOOR, static_cast<uint32_t>(c));
    Muls(h, h, -2.0f, c);
    Add(h, h, k, c);
    Muls(h, h, -2.0f, c);
    Adds(h, h, 1.0f, c);
    Mul(k, r, r, c);
    horner(p, k, kSinTaylor, 7, c);
    Mul(p, p, r, c);
    Mul(y, p, h, c);
}
// Tan: sin r / cos r. Buffers 0..3.
inline void tan_body(const LocalTensor<float>& y, const LocalTensor<float>& x, const Scratch& s, int32_t c) {
    const LocalTensor<float> k = s.buf<float>(0), r = s.buf<float>(1), h = s.buf<float>(2), p = s.buf<float>(3);
    reduce_pi(k, r, p, x, 0.0f, c);
    Mul(k, r, r, c);
    horner(h, k, kSinTaylor, 7, c);
    Mul(h, h, r, c);
    horner(p, k, kCosTaylor, 8, c);
    Div(y, h, p, c);
}
// atan(x) (x clamped to +-1e18). Buffers 0..3.
inline void atan_body(const LocalTensor<float>& y, const LocalTensor<float>& x, const Scratch& s, int32_t c) {
    const LocalTensor<float> a = s.buf<float>(0), t = s.buf<float>(1), p = s.buf<float>(2), g = s.buf<float>(3);
    Mins(a, x, 1e18f, c);
    Maxs(a, a, -1e18f, c);
    Abs(g, a, c);
    Maxs(g, g, FLT_MIN, c);
    Div(g, a, g, c);  // the sign of x (0 for 0)
    Abs(a, a, c);
    for (int i = 0; i < 3; ++i) {  // atan u = 2 atan(u / (1 + sqrt(1 + u^2)))
        Mul(t, a, a, c);
        Adds(t, t, 1.0f, c);
        Sqrt(t, t, c);
        Adds(t, t, 1.0f, c);
        Div(a, a, t, c);
    }
    Mul(t, a, a, c);
    horner(p, t, kAtanTaylor, 8, c);
    Mul(p, p, a, c);
    Muls(p, p, 8.0f, c);
    Mul(y, p, g, c);
}
// asin(x) = atan(x / sqrt((1 - x)(1 + x))); acos = pi/2 - asin. Buffers 0..4.
inline void asin_body(const LocalTensor<float>& y, const LocalTensor<float>& x, const Scratch& s, int32_t c,
                      bool acos) {
    const LocalTensor<float> a = s.buf<float>(0), b = s.buf<float>(1), w = s.buf<float>(4);
    Muls(a, x, -1.0f, c);
    Adds(a, a, 1.0f, c);
    Adds(b, x, 1.0f, c);
    Mul(a, a, b, c);
    Sqrt(a, a, c);
    Div(w, x, a, c);
    atan_body(y, w, s, c);
    if (acos) {
        Muls(y, y, -1.0f, c);
        Adds(y, y, kHalfPi, c);
    }
}
// The sign of x into g (0 for 0), a a work buffer.
inline void sign_of(const LocalTensor<float>& g, const LocalTensor<float>& x, int32_t c) {
    Abs(g, x, c);
    Maxs(g, g, FLT_MIN, c);
    Div(g, x, g, c);
}
// Sinh, Cosh (sign -1, +1 of e^-x), Atanh, Asinh. Buffers 0..1.
inline void exp_pair(const LocalTensor<float>& y, const LocalTensor<float>& x, const Scratch& s, int32_t c, bool cosh) {
    const LocalTensor<float> a = s.buf<float>(0), b = s.buf<float>(1);
    Exp(a, x, c);
    Muls(b, x, -1.0f, c);
    Exp(b, b, c);
    if (cosh)
        Add(y, a, b, c);
    else
        Sub(y, a, b, c);
    Muls(y, y, 0.5f, c);
}
inline void atanh_body(const LocalTensor<float>& y, const LocalTensor<float>& x, const Scratch& s, int32_t c) {
    const LocalTensor<float> a = s.buf<float>(0), b = s.buf<float>(1);
    Adds(a, x, 1.0f, c);
    Muls(b, x, -1.0f, c);
    Adds(b, b, 1.0f, c);
    Div(a, a, b, c);
    Ln(a, a, c);
    Muls(y, a, 0.5f, c);
}
inline void asinh_body(const LocalTensor<float>& y, const LocalTensor<float>& x, const Scratch& s, int32_t c) {
    const LocalTensor<float> a = s.buf<float>(0), b = s.buf<float>(1);
    Abs(a, x, c);
    Mul(b, a, a, c);
    Adds(b, b, 1.0f, c);
    Sqrt(b, b, c);
    Add(a, a, b, c);
    Ln(a, a, c);
    sign_of(b, x, c);
    Mul(y, a, b, c);
}

}  // namespace sfumato_math

// The reference's four forms of each API: with a sharedTmpBuffer (and count or the whole source), without.
#define SFUMATO_MATH_FLOAT_API(Name, TPL, TARGS, BUFS, BODY)                                                      \
    template <class T, bool isReuseSource = false TPL>                                                            \
    void Name(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,                                   \
              const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount) {                             \
        sfumato_math::float_eval(#Name, dstTensor, srcTensor, sharedTmpBuffer, calCount, BUFS,                    \
                                 [](const LocalTensor<float>& y, const LocalTensor<float>& x,                     \
                                    const sfumato_math::Scratch& s, int32_t c) { BODY; });                        \
    }                                                                                                             \
    template <class T, bool isReuseSource = false TPL>                                                            \
    void Name(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,                                   \
              const LocalTensor<uint8_t>& sharedTmpBuffer) {                                                      \
        Name<T, isReuseSource TARGS>(dstTensor, srcTensor, sharedTmpBuffer, srcTensor.GetSize());                 \
    }                                                                                                             \
    template <class T, bool isReuseSource = false TPL>                                                            \
    void Name(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const uint32_t calCount) {        \
        Name<T, isReuseSource TARGS>(dstTensor, srcTensor, LocalTensor<uint8_t>(), calCount);                     \
    }                                                                                                             \
    template <class T, bool isReuseSource = false TPL>                                                            \
    void Name(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor) {                                 \
        Name<T, isReuseSource TARGS>(dstTensor, srcTensor, LocalTensor<uint8_t>(), srcTensor.GetSize());          \
    }
#define SFUMATO_COMMA ,
SFUMATO_MATH_FLOAT_API(Sin, SFUMATO_COMMA const SinConfig& config = defaultSinConfig, SFUMATO_COMMA config,
                       sfumato_math::kSinBufs, sfumato_math::sin_body(y, x, s, c, 0.0f))
SFUMATO_MATH_FLOAT_API(Cos, SFUMATO_COMMA const CosConfig& config = defaultCosConfig, SFUMATO_COMMA config,
                       sfumato_math::kSinBufs, sfumato_math::sin_body(y, x, s, c, 0.5f))
SFUMATO_MATH_FLOAT_API(Tan, , , sfumato_math::kTanBufs, sfumato_math::tan_body(y, x, s, c))
SFUMATO_MATH_FLOAT_API(Atan, SFUMATO_COMMA const AtanConfig& config = defaultAtanConfig, SFUMATO_COMMA config,
                       sfumato_math::kAtanBufs, sfumato_math::atan_body(y, x, s, c))
SFUMATO_MATH_FLOAT_API(Asin, , , sfumato_math::kAtanBufs + 1, sfumato_math::asin_body(y, x, s, c, false))
SFUMATO_MATH_FLOAT_API(Acos, , , sfumato_math::kAtanBufs + 1, sfumato_math::asin_body(y, x, s, c, true))
SFUMATO_MATH_FLOAT_API(Sinh, , , sfumato_math::kHypBufs, sfumato_math::exp_pair(y, x, s, c, false))
SFUMATO_MATH_FLOAT_API(Cosh, , , sfumato_math::kHypBufs, sfumato_math::exp_pair(y, x, s, c, true))
SFUMATO_MATH_FLOAT_API(Atanh, , , sfumato_math::kHypBufs, sfumato_math::atanh_body(y, x, s, c))
SFUMATO_MATH_FLOAT_API(Asinh, , , sfumato_math::kHypBufs, sfumato_math::asinh_body(y, x, s, c))
SFUMATO_MATH_FLOAT_API(Sign, , , sfumato_math::kSignBufs, (void)s; sfumato_math::sign_of(y, x, c))
#undef SFUMATO_COMMA
#undef SFUMATO_MATH_FLOAT_API

// Round: to the nearest integer, halves away from zero (the reference: Round(3.5) = 4, Round(-3.4) = -3): the
// fp32 -> fp32 vconv's CAST_ROUND (half through float).
template <class T, bool isReuseSource = false>
void Round(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const LocalTensor<uint8_t>& sharedTmpBuffer,
           const uint32_t calCount) {
    sfumato_math::rounded("Round", dstTensor, srcTensor, sharedTmpBuffer, calCount, RoundMode::CAST_ROUND);
}
template <class T, bool isReuseSource = false>
void Round(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const uint32_t calCount) {
    sfumato_math::rounded("Round", dstTensor, srcTensor, LocalTensor<uint8_t>(), calCount, RoundMode::CAST_ROUND);
}

}  // namespace AscendC
