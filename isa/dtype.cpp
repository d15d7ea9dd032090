// Data type conversions (isa/dtype.h). Rounding to a float format is done once from the exact
// value: a bit-level round-to-nearest-even fast path, and a generic path (scale to an integer
// significand, round per mode, scale back) that also serves as the reference for tests.
#include "isa/dtype.h"

#include <algorithm>
#include <cmath>

namespace sfumato::isa {

const char* dtype_name(DType t) {
    switch (t) {
        case DType::FP16: return "fp16";
        case DType::BF16: return "bf16";
        case DType::FP32: return "fp32";
        case DType::INT8: return "int8";
        case DType::INT32: return "int32";
        case DType::UINT8: return "uint8";
        case DType::INT16: return "int16";
        case DType::INT4: return "int4";
        default: return "?";
    }
}

bool parse_dtype(const std::string& s, DType& out) {
    for (int i = 0; i < static_cast<int>(DType::INT4); ++i) {  // byte-addressable types only
        if (s == dtype_name(static_cast<DType>(i))) {
            out = static_cast<DType>(i);
            return true;
        }
    }
    return false;
}

uint16_t f32_to_f16_full(float f) {
    uint32_t x = f32_bits(f);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t exp = (x >> 23) & 0xffu;
    uint32_t man = x & 0x7fffffu;
    if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (man ? 0x200u | (man >> 13) : 0u));
    int32_t e = static_cast<int32_t>(exp) - 127 + 15;
    if (e >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
    if (e <= 0) {
        if (e < -10) return static_cast<uint16_t>(sign);
        // Denormal: shift the full significand, round to nearest even.
        uint32_t m = man | 0x800000u;
        uint32_t shift = static_cast<uint32_t>(14 - e);
        uint32_t half_bits = m >> shift;
        uint32_t rem = m & ((1u << shift) - 1);
        uint32_t halfway = 1u << (shift - 1);
        if (rem > halfway || (rem == halfway && (half_bits & 1u))) ++half_bits;
        return static_cast<uint16_t>(sign | half_bits);
    }
    uint32_t h = sign | (static_cast<uint32_t>(e) << 10) | (man >> 13);
    uint32_t rem = man & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // may carry into exponent: correct
    return static_cast<uint16_t>(h);
}

float f16_to_f32_full(uint16_t h) {
    uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    if (exp == 0) {
        if (man == 0) return bits_f32(sign);
        float v = std::ldexp(static_cast<float>(man), -24);
        return sign ? -v : v;
    }
    if (exp == 31) return bits_f32(sign | 0x7f800000u | (man << 13));
    return bits_f32(sign | ((exp + 112) << 23) | (man << 13));
}

uint16_t f32_to_bf16(float f) {
    uint32_t x = f32_bits(f);
    if ((x & 0x7f800000u) == 0x7f800000u && (x & 0x7fffffu)) return static_cast<uint16_t>((x >> 16) | 0x40u);
    uint32_t lsb = (x >> 16) & 1u;
    x += 0x7fffu + lsb;
    return static_cast<uint16_t>(x >> 16);
}

float load_as_f32(DType t, const uint8_t* p) {
    // Every ISA type is exact in a double, so one rounding to float gives the nearest float.
    return static_cast<float>(load_f64(t, p));
}

void store_from_f32(DType t, uint8_t* p, float v) {
    switch (t) {
        case DType::FP16: {
            uint16_t h = f32_to_f16(v);
            std::memcpy(p, &h, 2);
            break;
        }
        case DType::BF16: {
            uint16_t h = f32_to_bf16(v);
            std::memcpy(p, &h, 2);
            break;
        }
        case DType::FP32: std::memcpy(p, &v, 4); break;
        case DType::INT8:
            *p = static_cast<uint8_t>(
                static_cast<int8_t>(std::nearbyint(std::fmax(-128.f, std::fmin(127.f, v)))));
            break;
        case DType::UINT8:
            *p = static_cast<uint8_t>(std::nearbyint(std::fmax(0.f, std::fmin(255.f, v))));
            break;
        case DType::INT16: {
            int16_t x = static_cast<int16_t>(std::nearbyint(std::fmax(-32768.f, std::fmin(32767.f, v))));
            std::memcpy(p, &x, 2);
            break;
        }
        case DType::INT32: {
            int32_t x =
                static_cast<int32_t>(std::nearbyint(std::fmax(-2147483648.f, std::fmin(2147483520.f, v))));
            std::memcpy(p, &x, 4);
            break;
        }
        default: break;
    }
}

}  // namespace sfumato::isa

namespace sfumato::isa {

namespace {
constexpr const char* kRoundNames[] = {"rint", "trunc", "floor", "ceil", "round", "odd"};

struct FloatFmt {
    int p;     // significand bits including the implicit one
    int emin;  // smallest normal exponent
    int emax;
};
constexpr FloatFmt fmt_of(DType t) {
    return t == DType::FP16   ? FloatFmt{11, -14, 15}
           : t == DType::BF16 ? FloatFmt{8, -126, 127}
                              : FloatFmt{24, -126, 127};
}

// Rounds a non-negative s to an integer; neg tells the sign of the original value for the
// directed modes.
double round_int(double s, RoundMode m, bool neg) {
    const double f = std::floor(s);
    const double d = s - f;
    switch (m) {
        case RoundMode::RINT: return (d > 0.5 || (d == 0.5 && std::fmod(f, 2.0) != 0.0)) ? f + 1 : f;
        case RoundMode::TRUNC: return f;
        case RoundMode::FLOOR: return neg ? std::ceil(s) : f;
        case RoundMode::CEIL: return neg ? f : std::ceil(s);
        case RoundMode::ROUND: return d >= 0.5 ? f + 1 : f;
        case RoundMode::ODD: return (d != 0.0 && std::fmod(f, 2.0) == 0.0) ? f + 1 : f;
        default: return f;
    }
}

uint32_t encode_exact(DType t, float f) {
    if (t == DType::FP32) return f32_bits(f);
    if (t == DType::FP16) return f32_to_f16(f);
    return f32_bits(f) >> 16;
}

// Round-to-nearest-even straight from the double's bits (the hot path of every vector op);
// a template so each format's constants fold.
template <int P, int EMIN, int EMAX>
uint32_t round_float_rne_t(double v) {
    constexpr FloatFmt ff{P, EMIN, EMAX};
    uint64_t x;
    std::memcpy(&x, &v, 8);
    const uint32_t sign = static_cast<uint32_t>(x >> 63);
    const int e = static_cast<int>((x >> 52) & 0x7ff);
    const uint64_t man = x & ((1ull << 52) - 1);
    const int ebits = ff.emax == 15 ? 5 : 8, width = ebits + ff.p;  // total bits of the format
    const uint32_t inf = ((1u << ebits) - 1) << (ff.p - 1);
    const uint32_t sbit = sign << (width - 1);
    if (e == 0x7ff) return sbit | inf | (man ? 1u << (ff.p - 2) : 0u);
    if (e == 0) return sbit;  // double denormals are far below every target's smallest denormal
    const int E = e - 1023;
    const uint64_t sig = man | (1ull << 52);
    int shift = 53 - ff.p + (E < ff.emin ? ff.emin - E : 0);
    if (shift > 54) return sbit;
    uint64_t r = sig >> shift;
    const uint64_t rem = sig & ((1ull << shift) - 1), half = 1ull << (shift - 1);
    if (rem > half || (rem == half && (r & 1u))) ++r;
    // Normal: biased exponent - 1 in the exponent field plus the significand (its implicit bit
    // carries into the exponent); denormal: the significand alone (a carry makes it normal).
    const int bias = ff.emax;
    uint64_t bits = E < ff.emin ? r : (static_cast<uint64_t>(E + bias - 1) << (ff.p - 1)) + r;
    if (bits >= inf) bits = inf;
    return sbit | static_cast<uint32_t>(bits);
}

uint32_t round_float_rne(const FloatFmt& ff, double v) {
    if (ff.p == 11) return round_float_rne_t<11, -14, 15>(v);
    if (ff.p == 8) return round_float_rne_t<8, -126, 127>(v);
    return round_float_rne_t<24, -126, 127>(v);
}

uint32_t round_float_generic(DType t, double v, RoundMode m);

uint32_t round_float(DType t, double v, RoundMode m) {
    const FloatFmt ff = fmt_of(t);
    if (m == RoundMode::RINT) return round_float_rne(ff, v);
    return round_float_generic(t, v, m);
}

uint32_t round_float_generic(DType t, double v, RoundMode m) {
    const FloatFmt ff = fmt_of(t);
    if (std::isnan(v)) return t == DType::FP16 ? 0x7e00u : t == DType::BF16 ? 0x7fc0u : 0x7fc00000u;
    const bool neg = std::signbit(v);
    if (std::isinf(v)) return encode_exact(t, neg ? -INFINITY : INFINITY);
    const double a = std::fabs(v);
    if (a == 0.0) return encode_exact(t, neg ? -0.0f : 0.0f);
    int e;
    std::frexp(a, &e);
    const int q = std::max(e - 1, ff.emin) - (ff.p - 1);  // exponent of the last significand bit
    const double r = std::ldexp(round_int(std::ldexp(a, -q), m, neg), q);
    const double max_finite = std::ldexp(2.0 - std::ldexp(1.0, 1 - ff.p), ff.emax);
    double out = r;
    if (r > max_finite) {
        bool to_inf = m == RoundMode::RINT || m == RoundMode::ROUND || (m == RoundMode::FLOOR && neg) ||
                      (m == RoundMode::CEIL && !neg);
        out = to_inf ? INFINITY : max_finite;
    }
    return encode_exact(t, static_cast<float>(neg ? -out : out));
}

void int_range(DType t, double& lo, double& hi) {
    switch (t) {
        case DType::INT8: lo = -128, hi = 127; break;
        case DType::UINT8: lo = 0, hi = 255; break;
        case DType::INT16: lo = -32768, hi = 32767; break;
        case DType::INT4: lo = -8, hi = 7; break;
        default: lo = -2147483648.0, hi = 2147483647.0; break;
    }
}
}  // namespace

uint32_t round_bits_reference(DType t, double v, RoundMode m) {
    if (!is_float(t)) return round_bits(t, v, m);
    const FloatFmt ff = fmt_of(t);
    if (std::isnan(v)) return round_float_rne(ff, v);
    return round_float_generic(t, v, m);
}

const char* round_name(RoundMode m) { return kRoundNames[static_cast<int>(m)]; }
bool parse_round(const char* s, RoundMode& out) {
    for (int i = 0; i < static_cast<int>(RoundMode::kCount); ++i)
        if (std::string(s) == kRoundNames[i]) {
            out = static_cast<RoundMode>(i);
            return true;
        }
    return false;
}

uint32_t round_bits(DType t, double v, RoundMode m) {
    if (is_float(t)) return round_float(t, v, m);
    if (std::isnan(v)) return 0;
    double lo, hi;
    int_range(t, lo, hi);
    double r = v;
    if (std::isfinite(v)) r = (std::signbit(v) ? -1.0 : 1.0) * round_int(std::fabs(v), m, std::signbit(v));
    r = std::min(hi, std::max(lo, r));
    const int64_t i = static_cast<int64_t>(r);
    const uint32_t mask = dtype_bits(t) == 32 ? 0xffffffffu : (1u << dtype_bits(t)) - 1u;
    return static_cast<uint32_t>(i) & mask;
}

void store_wrap(DType t, uint8_t* p, int64_t v) {
    const uint32_t u = static_cast<uint32_t>(static_cast<uint64_t>(v));
    std::memcpy(p, &u, dtype_size(t));
}

}  // namespace sfumato::isa
