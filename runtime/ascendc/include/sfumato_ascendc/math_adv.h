// The advanced API's element-wise math (Exp with Taylor terms, Log/Log2/Log10, Ceil/Floor/Trunc/Frac,
// ClampMax/ClampMin, Xor, Erf, Acosh, Power, Fmod, Axpy from half to float, CumSum), each a chain of
// the basic layer's count-form vector calls, so its cycles are the model's. Rounding to an integral
// value is the Atlas A2 vector unit's fp32 -> fp32 vconv (one Cast with CAST_FLOOR/CEIL/TRUNC/RINT);
// half goes through float there (two more Casts).
//
// Scratch (adv_scratch.h): each API needs a few count-sized buffers (math_host.h gives the sizes). They are carved from
// the caller's sharedTmpBuffer or, in the forms without one, from the UB the TPipe has not handed out
// (PopStackBuffer). A buffer smaller than the whole count makes the API work in slices of what it holds
// (a multiple of 256 elements), so the minimum the host functions return is one slice.
//
// Formulas (written here from the functions' definitions, not the vendor's code):
//  Exp<T, n>: x = floor(x) + f; e^x = e^floor(x) (the vexp instruction) * sum_{k<=n} f^k / k! (Horner);
//    n = 0 is the instruction alone.
//  Erf: erf(|x|) = 1 - t e^(-x^2 + P(t)), t = 1 / (1 + |x| / 2), P the degree-9 Chebyshev fit of erfc
//    (fractional error below 1.2e-7), times the sign of x (x / max(|x|, FLT_MIN)).
//  Acosh: ln(x + sqrt((x - 1)(x + 1))).
//  Power: |b|^e = e^(e ln|b|); a negative base gives -|b|^e for an odd integer e, |b|^e for an even one
//    and nan otherwise (two Compares and two Selects).
//  Fmod: a - trunc(a / b) * b.   Frac: x - floor(x).   Xor: (a | b) & ~(a & b).
//  CumSum: along the first axis row i = row i-1 + src row i, one Add a row (the line-by-line algorithm);
//    along the last axis log2(inner) gather-and-add steps (cumsum_last_axis).
#pragma once
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "sfumato_ascendc/adv_scratch.h"
#include "sfumato_ascendc/core_state.h"
#include "sfumato_ascendc/stack_buffer.h"
#include "sfumato_ascendc/tensor.h"
#include "sfumato_ascendc/unsupported.h"
#include "sfumato_ascendc/vector.h"
#include "sfumato_ascendc/vector_more.h"

namespace AscendC {

enum class CumSumAlgorithm { CUMSUM_ALGORITHM_LINEBYLINE = 0, CUMSUM_ALGORITHM_SKLANSKY = 1 };
struct CumSumConfig {
    bool isLastAxis{true};
    bool isReuseSource{false};
    bool outputLastRow{false};
    CumSumAlgorithm algorithm{CumSumAlgorithm::CUMSUM_ALGORITHM_LINEBYLINE};
};
struct CumSumInfo {
    uint32_t outter{0};
    uint32_t inner{0};
};
constexpr CumSumConfig defaultCumSumConfig = {true, false, false, CumSumAlgorithm::CUMSUM_ALGORITHM_LINEBYLINE};

constexpr uint32_t FMOD_ITERATION_NUM_MAX = 11;
enum class FmodAlgo { NORMAL = 0, ITERATION_COMPENSATION = 1 };
struct FmodConfig {
    FmodAlgo algo = FmodAlgo::NORMAL;
    uint32_t iterationNum = FMOD_ITERATION_NUM_MAX;
};
constexpr FmodConfig DEFAULT_FMOD_CONFIG = {};

// ---- Exp with Taylor terms ----
template <class T, uint8_t taylorExpandLevel, bool isReuseSource = false>
void Exp(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, const LocalTensor<uint8_t>& sharedTmpBuffer,
         const uint32_t calCount) {
    namespace sm = sfumato_math;
    sm::require_float<T>();
    sfumato::ascendc::enter("Exp");
    sfumato::ascendc::count_of(calCount, dstLocal, srcLocal);
    if constexpr (taylorExpandLevel == 0) {
        Exp(dstLocal, srcLocal, static_cast<int32_t>(calCount));
        return;
    }
    // buffers: 0 the fraction, 1 the Taylor sum, 2 (half) float rounding
    const sm::Scratch s = sm::carve("Exp", sharedTmpBuffer, 2 + sm::round_bufs<T>(), 0, calCount);
    sm::slices(calCount, s.slice, [&](uint32_t o, uint32_t n) {
        const int32_t c = static_cast<int32_t>(n);
        const LocalTensor<T> f = s.buf<T>(0), p = s.buf<T>(1);
        const LocalTensor<T> x = srcLocal[o], d = dstLocal[o];
        sm::round_integral(f, x, RoundMode::CAST_FLOOR, c, s.bufs > 2 ? s.buf<float>(2) : LocalTensor<float>());
        Sub(p, x, f, c);  // the fraction, before dst (which may be src) is written
        Exp(d, f, c);
        // p = 1 + f/n (1 + f/(n-1) (1 + ...)), innermost first
        Muls(f, p, sm::cast_scalar<T>(1.0f / taylorExpandLevel), c);
        Adds(f, f, sm::cast_scalar<T>(1.0f), c);
        for (int k = taylorExpandLevel - 1; k >= 1; --k) {
            Mul(f, f, p, c);
            Muls(f, f, sm::cast_scalar<T>(1.0f / static_cast<float>(k)), c);
            Adds(f, f, sm::cast_scalar<T>(1.0f), c);
        }
        Mul(d, d, f, c);
    });
}
template <class T, uint8_t taylorExpandLevel, bool isReuseSource = false>
void Exp(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, const uint32_t calCount) {
    Exp<T, taylorExpandLevel, isReuseSource>(dstLocal, srcLocal, LocalTensor<uint8_t>(), calCount);
}

// ---- Log, Log2, Log10 ----
template <class T, bool isReuseSource = false>
void Log(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, uint32_t calCount) {
    sfumato_math::require_float<T>();
    sfumato::ascendc::enter("Log");
    Ln(dstTensor, srcTensor, static_cast<int32_t>(calCount));
}
template <class T, bool isReuseSource = false>
void Log(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor) {
    Log<T, isReuseSource>(dstTensor, srcTensor, srcTensor.GetSize());
}
template <class T, bool isReuseSource = false>
void Log2(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const LocalTensor<uint8_t>&,
          uint32_t calCount) {
    sfumato_math::require_float<T>();
    sfumato::ascendc::enter("Log2");
    Ln(dstTensor, srcTensor, static_cast<int32_t>(calCount));
    Muls(dstTensor, dstTensor, static_cast<T>(1.4426950408889634f), static_cast<int32_t>(calCount));
}
template <class T, bool isReuseSource = false>
void Log2(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const LocalTensor<uint8_t>& tmp) {
    Log2<T, isReuseSource>(dstTensor, srcTensor, tmp, srcTensor.GetSize());
}
template <class T, bool isReuseSource = false>
void Log2(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, uint32_t calCount) {
    Log2<T, isReuseSource>(dstTensor, srcTensor, LocalTensor<uint8_t>(), calCount);
}
template <class T, bool isReuseSource = false>
void Log2(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor) {
    Log2<T, isReuseSource>(dstTensor, srcTensor, LocalTensor<uint8_t>(), srcTensor.GetSize());
}
template <class T, bool isReuseSource = false>
void Log10(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, uint32_t calCount) {
    sfumato_math::require_float<T>();
    sfumato::ascendc::enter("Log10");
    Ln(dstTensor, srcTensor, static_cast<int32_t>(calCount));
    Muls(dstTensor, dstTensor, static_cast<T>(0.43429448190325176f), static_cast<int32_t>(calCount));
}
template <class T, bool isReuseSource = false>
void Log10(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor) {
    Log10<T, isReuseSource>(dstTensor, srcTensor, srcTensor.GetSize());
}

// ---- Ceil, Floor, Trunc, Frac ----
#define SFUMATO_MATH_ROUNDED(Name, Mode)                                                                       \
    template <class T, bool isReuseSource = false>                                                             \
    void Name(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,                                \
              const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount) {                          \
        sfumato_math::rounded(#Name, dstTensor, srcTensor, sharedTmpBuffer, calCount, RoundMode::Mode);        \
    }                                                                                                          \
    template <class T, bool isReuseSource = false>                                                             \
    void Name(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const uint32_t calCount) {     \
        sfumato_math::rounded(#Name, dstTensor, srcTensor, LocalTensor<uint8_t>(), calCount, RoundMode::Mode); \
    }                                                                                                          \
    template <class T, bool isReuseSource = false>                                                             \
    void Name(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,                                \
              const LocalTensor<uint8_t>& sharedTmpBuffer) {                                                   \
        sfumato_math::rounded(#Name, dstTensor, srcTensor, sharedTmpBuffer, srcTensor.GetSize(),               \
                              RoundMode::Mode);                                                                \
    }                                                                                                          \
    template <class T, bool isReuseSource = false>                                                             \
    void Name(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor) {                              \
        sfumato_math::rounded(#Name, dstTensor, srcTensor, LocalTensor<uint8_t>(), srcTensor.GetSize(),        \
                              RoundMode::Mode);                                                                \
    }
SFUMATO_MATH_ROUNDED(Ceil, CAST_CEIL)
SFUMATO_MATH_ROUNDED(Floor, CAST_FLOOR)
SFUMATO_MATH_ROUNDED(Trunc, CAST_TRUNC)
#undef SFUMATO_MATH_ROUNDED

template <class T, bool isReuseSource = false>
void Frac(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const LocalTensor<uint8_t>& sharedTmpBuffer,
          const uint32_t calCount) {
    namespace sm = sfumato_math;
    sm::require_float<T>();
    sfumato::ascendc::enter("Frac");
    sfumato::ascendc::count_of(calCount, dstTensor, srcTensor);
    // buffer 0: floor(x) (dst may be src); 1 (half): float rounding
    const sm::Scratch s = sm::carve("Frac", sharedTmpBuffer, 1 + sm::round_bufs<T>(), 0, calCount);
    sm::slices(calCount, s.slice, [&](uint32_t o, uint32_t n) {
        const int32_t c = static_cast<int32_t>(n);
        const LocalTensor<T> f = s.buf<T>(0);
        sm::round_integral(f, srcTensor[o], RoundMode::CAST_FLOOR, c,
                           s.bufs > 1 ? s.buf<float>(1) : LocalTensor<float>());
        Sub(dstTensor[o], srcTensor[o], f, c);
    });
}
template <class T, bool isReuseSource = false>
void Frac(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const LocalTensor<uint8_t>& sharedTmpBuffer) {
    Frac<T, isReuseSource>(dstTensor, srcTensor, sharedTmpBuffer, srcTensor.GetSize());
}
template <class T, bool isReuseSource = false>
void Frac(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const uint32_t calCount) {
    Frac<T, isReuseSource>(dstTensor, srcTensor, LocalTensor<uint8_t>(), calCount);
}
template <class T, bool isReuseSource = false>
void Frac(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor) {
    Frac<T, isReuseSource>(dstTensor, srcTensor, LocalTensor<uint8_t>(), srcTensor.GetSize());
}

// ---- ClampMax, ClampMin ----
template <class T, bool isReuseSource = false>
void ClampMax(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const LocalTensor<uint8_t>&,
              const T scalar, const uint32_t calCount) {
    sfumato::ascendc::enter("ClampMax");
    Mins(dstTensor, srcTensor, scalar, static_cast<int32_t>(calCount));
}
template <class T, bool isReuseSource = false>
void ClampMax(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const T scalar, const uint32_t calCount) {
    ClampMax<T, isReuseSource>(dstTensor, srcTensor, LocalTensor<uint8_t>(), scalar, calCount);
}
template <class T, bool isReuseSource = false>
void ClampMin(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const LocalTensor<uint8_t>&,
              const T scalar, const uint32_t calCount) {
    sfumato::ascendc::enter("ClampMin");
    Maxs(dstTensor, srcTensor, scalar, static_cast<int32_t>(calCount));
}
template <class T, bool isReuseSource = false>
void ClampMin(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const T scalar, const uint32_t calCount) {
    ClampMin<T, isReuseSource>(dstTensor, srcTensor, LocalTensor<uint8_t>(), scalar, calCount);
}

// ---- Xor ----
template <class T, bool isReuseSource = false>
void Xor(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor, const LocalTensor<T>& src1Tensor,
         const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount) {
    static_assert(std::is_same_v<T, int16_t> || std::is_same_v<T, uint16_t> || sfumato_unsupported::always_false<T>,
                  "AscendC::Xor takes int16_t or uint16_t tensors");
    namespace sm = sfumato_math;
    sfumato::ascendc::enter("Xor");
    sfumato::ascendc::count_of(calCount, dstTensor, src0Tensor, src1Tensor);
    const sm::Scratch s = sm::carve("Xor", sharedTmpBuffer, 1, 0, calCount);
    sm::slices(calCount, s.slice, [&](uint32_t o, uint32_t n) {
        const int32_t c = static_cast<int32_t>(n);
        const LocalTensor<T> t = s.buf<T>(0);
        And(t, src0Tensor[o], src1Tensor[o], c);
        Not(t, t, c);
        Or(dstTensor[o], src0Tensor[o], src1Tensor[o], c);
        And(dstTensor[o], dstTensor[o], t, c);
    });
}
template <class T, bool isReuseSource = false>
void Xor(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor, const LocalTensor<T>& src1Tensor,
         const LocalTensor<uint8_t>& sharedTmpBuffer) {
    Xor<T, isReuseSource>(dstTensor, src0Tensor, src1Tensor, sharedTmpBuffer, src0Tensor.GetSize());
}
template <class T, bool isReuseSource = false>
void Xor(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor, const LocalTensor<T>& src1Tensor,
         const uint32_t calCount) {
    Xor<T, isReuseSource>(dstTensor, src0Tensor, src1Tensor, LocalTensor<uint8_t>(), calCount);
}
template <class T, bool isReuseSource = false>
void Xor(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor, const LocalTensor<T>& src1Tensor) {
    Xor<T, isReuseSource>(dstTensor, src0Tensor, src1Tensor, LocalTensor<uint8_t>(), src0Tensor.GetSize());
}

// ---- Erf ----
template <class T, bool isReuseSource = false>
void Erf(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const LocalTensor<uint8_t>& sharedTmpBuffer,
         const uint32_t calCount) {
    namespace sm = sfumato_math;
    sm::require_float<T>();
    sfumato::ascendc::enter("Erf");
    sfumato::ascendc::count_of(calCount, dstTensor, srcTensor);
    const sm::Scratch s = sm::carve("Erf", sharedTmpBuffer, 3, 0, calCount);
    sm::slices(calCount, s.slice, [&](uint32_t o, uint32_t n) {
        const int32_t c = static_cast<int32_t>(n);
        const LocalTensor<T> a = s.buf<T>(0), t = s.buf<T>(1), p = s.buf<T>(2);
        const LocalTensor<T> x = srcTensor[o];
        Abs(a, x, c);
        Muls(t, a, sm::cast_scalar<T>(0.5f), c);
        Adds(t, t, sm::cast_scalar<T>(1.0f), c);
        Reciprocal(t, t, c);
        Muls(p, t, sm::cast_scalar<T>(sm::kErfcFit[9]), c);
        Adds(p, p, sm::cast_scalar<T>(sm::kErfcFit[8]), c);
        for (int k = 7; k >= 0; --k) {
            Mul(p, p, t, c);
            Adds(p, p, sm::cast_scalar<T>(sm::kErfcFit[k]), c);
        }
        Mul(a, x, x, c);
        Sub(p, p, a, c);
        Exp(p, p, c);
        Mul(p, p, t, c);  // erfc(|x|)
        Muls(p, p, sm::cast_scalar<T>(-1.0f), c);
        Adds(p, p, sm::cast_scalar<T>(1.0f), c);  // erf(|x|)
        Abs(a, x, c);
        Maxs(a, a, sm::cast_scalar<T>(std::is_same_v<T, float> ? FLT_MIN : 6.103515625e-05f), c);
        Div(a, x, a, c);  // the sign of x (0 for 0)
        Mul(dstTensor[o], p, a, c);
    });
}
template <class T, bool isReuseSource = false>
void Erf(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const LocalTensor<uint8_t>& sharedTmpBuffer) {
    Erf<T, isReuseSource>(dstTensor, srcTensor, sharedTmpBuffer, srcTensor.GetSize());
}
template <class T, bool isReuseSource = false>
void Erf(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const uint32_t calCount) {
    Erf<T, isReuseSource>(dstTensor, srcTensor, LocalTensor<uint8_t>(), calCount);
}
template <class T, bool isReuseSource = false>
void Erf(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor) {
    Erf<T, isReuseSource>(dstTensor, srcTensor, LocalTensor<uint8_t>(), srcTensor.GetSize());
}

// ---- Acosh ----
template <class T, bool isReuseSource = false>
void Acosh(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const LocalTensor<uint8_t>& sharedTmpBuffer,
           const uint32_t calCount) {
    namespace sm = sfumato_math;
    sm::require_float<T>();
    sfumato::ascendc::enter("Acosh");
    sfumato::ascendc::count_of(calCount, dstTensor, srcTensor);
    const sm::Scratch s = sm::carve("Acosh", sharedTmpBuffer, 2, 0, calCount);
    sm::slices(calCount, s.slice, [&](uint32_t o, uint32_t n) {
        const int32_t c = static_cast<int32_t>(n);
        const LocalTensor<T> a = s.buf<T>(0), b = s.buf<T>(1);
        const LocalTensor<T> x = srcTensor[o];
        Adds(a, x, sm::cast_scalar<T>(-1.0f), c);
        Adds(b, x, sm::cast_scalar<T>(1.0f), c);
        Mul(a, a, b, c);
        Sqrt(a, a, c);
        Add(a, a, x, c);
        Ln(dstTensor[o], a, c);
    });
}
template <class T, bool isReuseSource = false>
void Acosh(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const LocalTensor<uint8_t>& sharedTmpBuffer) {
    Acosh<T, isReuseSource>(dstTensor, srcTensor, sharedTmpBuffer, srcTensor.GetSize());
}
template <class T, bool isReuseSource = false>
void Acosh(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const uint32_t calCount) {
    Acosh<T, isReuseSource>(dstTensor, srcTensor, LocalTensor<uint8_t>(), calCount);
}
template <class T, bool isReuseSource = false>
void Acosh(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor) {
    Acosh<T, isReuseSource>(dstTensor, srcTensor, LocalTensor<uint8_t>(), srcTensor.GetSize());
}

// ---- Power ----
namespace sfumato_math {

// An operand of Power: a tensor or a scalar (duplicated into a scratch buffer per slice).
template <class T>
struct PowOperand {
    LocalTensor<T> t;
    T v{};
    bool scalar = false;
    LocalTensor<T> at(uint32_t o, const LocalTensor<T>& spare, int32_t n) const {
        if (!scalar) return t[o];
        Duplicate(spare, v, n);
        return spare;
    }
};

template <class T>
void power(const LocalTensor<T>& dst, const PowOperand<T>& base, const PowOperand<T>& expo,
           const LocalTensor<uint8_t>& tmp, uint32_t count) {
    require_float<T>();
    sfumato::ascendc::enter("Power");
    sfumato::ascendc::count_of(count, dst);
    if (!base.scalar) sfumato::ascendc::count_of(count, base.t);
    if (!expo.scalar) sfumato::ascendc::count_of(count, expo.t);
    // buffers: 0 |b|^e, 1 and 2 working values, 3 a duplicated scalar (+ 4 float rounding for half);
    // one mask.
    const uint32_t rb = round_bufs<T>();
    const Scratch s = carve("Power", tmp, 4 + rb, 1, count);
    slices(count, s.slice, [&](uint32_t o0, uint32_t n0) {
      bit_pieces<T>(n0, [&](uint32_t po, uint32_t n) {
        const uint32_t o = o0 + po;
        const int32_t c = static_cast<int32_t>(n);
        const LocalTensor<T> r = s.buf<T>(0), u = s.buf<T>(1), w = s.buf<T>(2);
        const LocalTensor<float> fr = rb ? s.buf<float>(4) : LocalTensor<float>();
        const LocalTensor<uint8_t> m = s.mask(0);
        const LocalTensor<T> b = base.at(o, s.buf<T>(3), c);
        Abs(r, b, c);
        Ln(r, r, c);
        const LocalTensor<T> e = expo.at(o, s.buf<T>(3), c);  // the base is no longer needed as a tensor
        Mul(r, r, e, c);
        Exp(r, r, c);
        // the parity of an integral exponent: s = e - 2 trunc(e / 2) is 0 or +-1; factor 1 - 2|s|
        Muls(u, e, cast_scalar<T>(0.5f), c);
        round_integral(u, u, RoundMode::CAST_TRUNC, c, fr);
        Muls(u, u, cast_scalar<T>(2.0f), c);
        Sub(u, e, u, c);
        Abs(u, u, c);
        Muls(u, u, cast_scalar<T>(-2.0f), c);
        Adds(u, u, cast_scalar<T>(1.0f), c);
        // a non-integral exponent: nan
        round_integral(w, e, RoundMode::CAST_TRUNC, c, fr);
        Compare(m, w, e, CMPMODE::EQ, n);
        Duplicate(w, cast_scalar<T>(std::numeric_limits<float>::quiet_NaN()), c);
        Select(u, m, u, w, SELMODE::VSEL_TENSOR_TENSOR_MODE, n);
        Mul(u, u, r, c);  // the result for a negative base
        const LocalTensor<T> b2 = base.at(o, s.buf<T>(3), c);
        CompareScalar(m, b2, cast_scalar<T>(0.0f), CMPMODE::LT, n);
        Select(dst[o], m, u, r, SELMODE::VSEL_TENSOR_TENSOR_MODE, n);
      });
    });
}

}  // namespace sfumato_math

#define SFUMATO_POWER_FORMS(B, BARG, E, EARG)                                                                  \
    template <class T, bool isReuseSource = false>                                                             \
    void Power(const LocalTensor<T>& dstTensor, B src0, E src1, const LocalTensor<uint8_t>& sharedTmpBuffer,   \
               uint32_t calCount) {                                                                            \
        sfumato_math::power(dstTensor, BARG, EARG, sharedTmpBuffer, calCount);                                 \
    }                                                                                                          \
    template <class T, bool isReuseSource = false>                                                             \
    void Power(const LocalTensor<T>& dstTensor, B src0, E src1, uint32_t calCount) {                           \
        sfumato_math::power(dstTensor, BARG, EARG, LocalTensor<uint8_t>(), calCount);                          \
    }                                                                                                          \
    template <class T, bool isReuseSource = false>                                                             \
    void Power(const LocalTensor<T>& dstTensor, B src0, E src1, const LocalTensor<uint8_t>& sharedTmpBuffer) { \
        sfumato_math::power(dstTensor, BARG, EARG, sharedTmpBuffer, dstTensor.GetSize());                      \
    }                                                                                                          \
    template <class T, bool isReuseSource = false>                                                             \
    void Power(const LocalTensor<T>& dstTensor, B src0, E src1) {                                              \
        sfumato_math::power(dstTensor, BARG, EARG, LocalTensor<uint8_t>(), dstTensor.GetSize());               \
    }
SFUMATO_POWER_FORMS(const LocalTensor<T>&, (sfumato_math::PowOperand<T>{src0, T{}, false}), const LocalTensor<T>&,
                    (sfumato_math::PowOperand<T>{src1, T{}, false}))
SFUMATO_POWER_FORMS(const LocalTensor<T>&, (sfumato_math::PowOperand<T>{src0, T{}, false}), const T&,
                    (sfumato_math::PowOperand<T>{LocalTensor<T>(), src1, true}))
SFUMATO_POWER_FORMS(const T&, (sfumato_math::PowOperand<T>{LocalTensor<T>(), src0, true}), const LocalTensor<T>&,
                    (sfumato_math::PowOperand<T>{src1, T{}, false}))
#undef SFUMATO_POWER_FORMS

// ---- Fmod ----
template <class T, bool isReuseSource = false, const FmodConfig& config = DEFAULT_FMOD_CONFIG>
void Fmod(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor, const LocalTensor<T>& src1Tensor,
          const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount) {
    namespace sm = sfumato_math;
    sm::require_float<T>();
    sfumato::ascendc::enter("Fmod");
    sfumato::ascendc::count_of(calCount, dstTensor, src0Tensor, src1Tensor);
    const sm::Scratch s = sm::carve("Fmod", sharedTmpBuffer, 1 + sm::round_bufs<T>(), 0, calCount);
    sm::slices(calCount, s.slice, [&](uint32_t o, uint32_t n) {
        const int32_t c = static_cast<int32_t>(n);
        const LocalTensor<T> q = s.buf<T>(0);
        Div(q, src0Tensor[o], src1Tensor[o], c);
        sm::round_integral(q, q, RoundMode::CAST_TRUNC, c, s.bufs > 1 ? s.buf<float>(1) : LocalTensor<float>());
        Mul(q, q, src1Tensor[o], c);
        Sub(dstTensor[o], src0Tensor[o], q, c);
    });
}
template <class T, bool isReuseSource = false, const FmodConfig& config = DEFAULT_FMOD_CONFIG>
void Fmod(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor, const LocalTensor<T>& src1Tensor,
          const uint32_t calCount) {
    Fmod<T, isReuseSource, config>(dstTensor, src0Tensor, src1Tensor, LocalTensor<uint8_t>(), calCount);
}
template <class T, bool isReuseSource = false, const FmodConfig& config = DEFAULT_FMOD_CONFIG>
void Fmod(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor, const LocalTensor<T>& src1Tensor,
          const LocalTensor<uint8_t>& sharedTmpBuffer) {
    Fmod<T, isReuseSource, config>(dstTensor, src0Tensor, src1Tensor, sharedTmpBuffer, src0Tensor.GetSize());
}
template <class T, bool isReuseSource = false, const FmodConfig& config = DEFAULT_FMOD_CONFIG>
void Fmod(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor, const LocalTensor<T>& src1Tensor) {
    Fmod<T, isReuseSource, config>(dstTensor, src0Tensor, src1Tensor, LocalTensor<uint8_t>(), src0Tensor.GetSize());
}

// ---- Axpy (dst += src * scalar, src half and dst float, or both one type) ----
template <class T, class U, bool isReuseSource = false>
void Axpy(const LocalTensor<T>& dstTensor, const LocalTensor<U>& srcTensor, const U scalarValue,
          const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount) {
    namespace sm = sfumato_math;
    static_assert((std::is_same_v<T, U> && (std::is_same_v<T, half> || std::is_same_v<T, float>)) ||
                      (std::is_same_v<T, float> && std::is_same_v<U, half>) || sfumato_unsupported::always_false<T>,
                  "AscendC::Axpy with a sharedTmpBuffer takes half or float, or a half source and a float dst");
    sfumato::ascendc::enter("Axpy");
    sfumato::ascendc::count_of(calCount, dstTensor, srcTensor);
    if constexpr (std::is_same_v<T, U>) {
        (void)sharedTmpBuffer;
        Axpy(dstTensor, srcTensor, scalarValue, static_cast<int32_t>(calCount));
    } else {
        const sm::Scratch s = sm::carve("Axpy", sharedTmpBuffer, 1, 0, calCount);
        sm::slices(calCount, s.slice, [&](uint32_t o, uint32_t n) {
            const LocalTensor<float> f = s.buf<float>(0);
            Cast(f, srcTensor[o], RoundMode::CAST_NONE, n);
            Axpy(dstTensor[o], f, static_cast<float>(scalarValue), static_cast<int32_t>(n));
        });
    }
}

// ---- Arange / ArithProgression: dst[i] = first + i * diff ----
template <class T>
void Arange(const LocalTensor<T>& dst, const T firstValue, const T diffValue, const int32_t count) {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, half> || std::is_same_v<T, int16_t> ||
                      std::is_same_v<T, int32_t> || sfumato_unsupported::always_false<T>,
                  "AscendC::Arange takes half, float, int16_t or int32_t tensors");
    sfumato::ascendc::enter("Arange");
    if (count <= 0) return;
    CreateVecIndex(dst, static_cast<T>(0), static_cast<uint32_t>(count));  // vci: 0, 1, 2, ...
    Muls(dst, dst, diffValue, count);
    Adds(dst, dst, firstValue, count);
}
template <class T>
void ArithProgression(const LocalTensor<T>& dst, const T firstValue, const T diffValue, const int32_t count) {
    Arange<T>(dst, firstValue, diffValue, count);
}

// ---- CumSum ----
namespace sfumato_math {
// CumSum along the last axis (Hillis-Steele): for shifts 1, 2, 4, ... below the row length, each element adds
// the element `shift` columns before it in its row (0 before the row's start): dst is copied behind one zero
// block of scratch, the shifted elements are gathered from there (vgather; byte offsets from vci and float
// arithmetic: (j >= shift) (zero block + k - shift), exact for these integers), and added. lastRow gets each
// row's last element (one more gather).
template <class T>
void cumsum_last_axis(const LocalTensor<T>& dst, const LocalTensor<T>& lastRow, const LocalTensor<T>& src,
                      const LocalTensor<uint8_t>& tmp, uint32_t rows, uint32_t cols, bool outputLastRow) {
    constexpr uint32_t E = 32 / sizeof(T);  // the zero block's elements
    const uint32_t total = rows * cols;
    const uint64_t zBytes = (uint64_t{total} + E) * sizeof(T), zAligned = (zBytes + 31) / 32 * 32;
    const uint64_t need = zAligned + uint64_t{total} * 8 + 64;
    LocalTensor<uint8_t> t = tmp;
    if (!t.valid() || t.GetSize() == 0) {
        if (!PopStackBuffer<uint8_t, TPosition::LCM>(t))
            sfumato::ascendc::fail("CumSum: no sharedTmpBuffer and no TPipe to take the scratch from");
    }
    if (t.GetSize() < need)
        sfumato::ascendc::fail("CumSum: along the last axis the scratch must hold " + std::to_string(need) +
                               " bytes (GetCumSumMaxMinTmpSize); it has " + std::to_string(t.GetSize()));
    const LocalTensor<T> z = t.template ReinterpretCast<T>();
    const LocalTensor<float> k = t[static_cast<uint32_t>(zAligned)].template ReinterpretCast<float>();
    const LocalTensor<float> r = t[static_cast<uint32_t>(zAligned + uint64_t{total} * 4 + 32)].template ReinterpretCast<float>();
    const int32_t n = static_cast<int32_t>(total);
    Muls(dst, src, static_cast<T>(1.0f), n);
    Duplicate(z, static_cast<T>(0.0f), static_cast<int32_t>(E));
    for (uint32_t shift = 1; shift < cols; shift *= 2) {
        Muls(z[E], dst, static_cast<T>(1.0f), n);
        CreateVecIndex(k, 0.0f, total);
        Adds(r, k, 0.5f, n);
        Muls(r, r, 1.0f / static_cast<float>(cols), n);
        Cast(r, r, RoundMode::CAST_FLOOR, total);                 // the row
        Muls(r, r, -static_cast<float>(cols), n);
        Add(r, r, k, n);                                          // the column j
        Adds(r, r, 1.0f - static_cast<float>(shift), n);
        Maxs(r, r, 0.0f, n);
        Mins(r, r, 1.0f, n);                                      // 1 where j >= shift
        Adds(k, k, static_cast<float>(E) - static_cast<float>(shift), n);
        Mul(k, k, r, n);
        Muls(k, k, static_cast<float>(sizeof(T)), n);             // byte offsets into z
        const LocalTensor<int32_t> off = k.template ReinterpretCast<int32_t>();
        Cast(off, k, RoundMode::CAST_RINT, total);
        const LocalTensor<T> g = r.template ReinterpretCast<T>();
        Gather(g, z, off.template ReinterpretCast<uint32_t>(), 0u, total);
        Add(dst, dst, g, n);
    }
    if (outputLastRow) {  // each row's last element
        Muls(z[E], dst, static_cast<T>(1.0f), n);
        CreateVecIndex(k, 0.0f, rows);
        Muls(k, k, static_cast<float>(cols), static_cast<int32_t>(rows));
        Adds(k, k, static_cast<float>(E + cols - 1), static_cast<int32_t>(rows));
        Muls(k, k, static_cast<float>(sizeof(T)), static_cast<int32_t>(rows));
        const LocalTensor<int32_t> off = k.template ReinterpretCast<int32_t>();
        Cast(off, k, RoundMode::CAST_RINT, rows);
        Gather(lastRow, z, off.template ReinterpretCast<uint32_t>(), 0u, rows);
    }
}
}  // namespace sfumato_math

template <class T, const CumSumConfig& config = defaultCumSumConfig>
void CumSum(LocalTensor<T>& dstTensor, LocalTensor<T>& lastRowTensor, const LocalTensor<T>& srcTensor,
            LocalTensor<uint8_t>& sharedTmpBuffer, const CumSumInfo& cumSumInfo) {
    sfumato_math::require_float<T>();
    sfumato::ascendc::enter("CumSum");
    const uint32_t rows = cumSumInfo.outter, cols = cumSumInfo.inner;
    if (cols * sizeof(T) % 32 != 0)
        sfumato::ascendc::fail("CumSum: inner " + std::to_string(cols) + " is not a whole number of 32-byte blocks");
    if (rows == 0 || cols == 0) return;
    sfumato::ascendc::count_of(uint64_t{rows} * cols, dstTensor, srcTensor);
    if constexpr (config.isLastAxis) {
        if (config.outputLastRow) sfumato::ascendc::count_of(rows, lastRowTensor);
        sfumato_math::cumsum_last_axis(dstTensor, lastRowTensor, srcTensor, sharedTmpBuffer, rows, cols,
                                       config.outputLastRow);
        return;
    }
    (void)sharedTmpBuffer;
    const int32_t c = static_cast<int32_t>(cols);
    Muls(dstTensor, srcTensor, static_cast<T>(1.0f), c);
    for (uint32_t i = 1; i < rows; ++i) Add(dstTensor[i * cols], dstTensor[(i - 1) * cols], srcTensor[i * cols], c);
    if constexpr (config.outputLastRow) Muls(lastRowTensor, dstTensor[(rows - 1) * cols], static_cast<T>(1.0f), c);
}
template <class T, const CumSumConfig& config = defaultCumSumConfig>
void CumSum(LocalTensor<T>& dstTensor, LocalTensor<T>& lastRowTensor, const LocalTensor<T>& srcTensor,
            const CumSumInfo& cumSumInfo) {
    LocalTensor<uint8_t> none;
    CumSum<T, config>(dstTensor, lastRowTensor, srcTensor, none, cumSumInfo);
}

}  // namespace AscendC
