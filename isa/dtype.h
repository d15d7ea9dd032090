// Data types of the ISA and their conversions. fp16 and bf16 are stored as raw 16-bit patterns;
// conversions from fp32 round to nearest even (the chip's default), keep inf/nan, and produce
// denormals where the format has them.
#pragma once
#include <cstdint>
#include <cstring>
#include <iterator>
#include <string>

namespace sfumato::isa {

// INT4: two's-complement 4-bit integers packed two to a byte, element 2i in the low nibble of
// byte i. Not byte addressable: its dtype_size is 0 (dtype_bits gives 4), and only the
// instructions that know nibbles accept it (vconv to and from fp16, mad); every other
// instruction's validation rejects it.
enum class DType : uint8_t { FP16, BF16, FP32, INT8, INT32, UINT8, INT16, INT4, kCount };

// Bytes and bits per element, by type (tables: these are asked per instruction built).
inline constexpr uint8_t kDTypeSize[] = {2, 2, 4, 1, 4, 1, 2, 0};
inline constexpr uint8_t kDTypeBits[] = {16, 16, 32, 8, 32, 8, 16, 4};
static_assert(std::size(kDTypeSize) == static_cast<size_t>(DType::kCount) && std::size(kDTypeBits) == std::size(kDTypeSize));
constexpr uint32_t dtype_size(DType t) {
    const auto i = static_cast<size_t>(t);
    return i < std::size(kDTypeSize) ? kDTypeSize[i] : 0;
}
constexpr uint32_t dtype_bits(DType t) {
    const auto i = static_cast<size_t>(t);
    return i < std::size(kDTypeBits) ? kDTypeBits[i] : 0;
}
// Element i of an INT4 array at base.
inline int int4_get(const uint8_t* base, uint64_t i) {
    const uint32_t v = (i & 1) ? base[i / 2] >> 4 : base[i / 2] & 15u;
    return v >= 8 ? static_cast<int>(v) - 16 : static_cast<int>(v);
}
inline void int4_set(uint8_t* base, uint64_t i, uint32_t nibble) {
    uint8_t& b = base[i / 2];
    b = (i & 1) ? static_cast<uint8_t>((b & 0x0fu) | ((nibble & 15u) << 4)) : static_cast<uint8_t>((b & 0xf0u) | (nibble & 15u));
}
const char* dtype_name(DType t);
// Parses "fp16", "bf16", "fp32", "int8", "int32", "uint8", "int16"; false when unknown. Not
// "int4": operators, traces and the assembler take byte-addressable types only (the Ascend C
// layer issues int4 instructions directly).
bool parse_dtype(const std::string& s, DType& out);

inline uint32_t f32_bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}
inline float bits_f32(uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

// Round to nearest even. Inline with a fast path for results in fp16's normal range (the common
// case: weights, activations); the rest (denormals, overflow, inf, nan) take the full path.
// Bit-identical to the full path for every input (tests/unit/isa_dtype_test.cpp checks every fp16
// pattern and a sweep of fp32 ones through every exponent and rounding case).
uint16_t f32_to_f16_full(float f);
inline uint16_t f32_to_f16(float f) {
    const uint32_t x = f32_bits(f), a = x & 0x7fffffffu;
    // fp32 exponents 113..142 are fp16's normal exponents 1..30: rebias by 112 and round.
    if (a - 0x38800000u < 0x47800000u - 0x38800000u) {
        const uint32_t h = ((x >> 16) & 0x8000u) | ((a - 0x38000000u) >> 13), rem = a & 0x1fffu;
        return static_cast<uint16_t>(h + ((rem > 0x1000u) | ((rem == 0x1000u) & h)));  // a carry is correct
    }
    return f32_to_f16_full(f);
}
float f16_to_f32_full(uint16_t h);
inline float f16_to_f32(uint16_t h) {
    const uint32_t e = h & 0x7c00u;
    if (e != 0 && e != 0x7c00u)
        return bits_f32((static_cast<uint32_t>(h & 0x8000u) << 16) |
                        ((static_cast<uint32_t>(h & 0x7fffu) + (112u << 10)) << 13));
    return f16_to_f32_full(h);
}
uint16_t f32_to_bf16(float f);  // round to nearest even
inline float bf16_to_f32(uint16_t h) { return bits_f32(static_cast<uint32_t>(h) << 16); }

// Strong 16-bit float types for kernels and hosts that want value semantics.
struct half {
    uint16_t bits = 0;
    half() = default;
    explicit half(float f) : bits(f32_to_f16(f)) {}
    explicit operator float() const { return f16_to_f32(bits); }
};
struct bfloat16 {
    uint16_t bits = 0;
    bfloat16() = default;
    explicit bfloat16(float f) : bits(f32_to_bf16(f)) {}
    explicit operator float() const { return bf16_to_f32(bits); }
};

// A byte of two INT4 elements: the element type of int4 tensors in the kernel API, whose sizes
// and offsets count bytes.
struct int4x2 {
    uint8_t bits = 0;
};

template <class T>
struct DTypeOf;
template <>
struct DTypeOf<int4x2> {
    static constexpr DType v = DType::INT4;
};
template <>
struct DTypeOf<half> {
    static constexpr DType v = DType::FP16;
};
template <>
struct DTypeOf<bfloat16> {
    static constexpr DType v = DType::BF16;
};
template <>
struct DTypeOf<float> {
    static constexpr DType v = DType::FP32;
};
template <>
struct DTypeOf<int8_t> {
    static constexpr DType v = DType::INT8;
};
template <>
struct DTypeOf<uint8_t> {
    static constexpr DType v = DType::UINT8;
};
template <>
struct DTypeOf<int16_t> {
    static constexpr DType v = DType::INT16;
};
template <>
struct DTypeOf<int32_t> {
    static constexpr DType v = DType::INT32;
};

// Rounding modes of conversions (the chip's CAST_* modes): RINT = to nearest, ties to even;
// TRUNC = toward zero; FLOOR/CEIL = toward -inf/+inf; ROUND = to nearest, ties away from zero;
// ODD = toward zero, setting the last bit when inexact (von Neumann rounding).
enum class RoundMode : uint8_t { RINT, TRUNC, FLOOR, CEIL, ROUND, ODD, kCount };
const char* round_name(RoundMode m);
bool parse_round(const char* s, RoundMode& out);

// Exact value of one element of type t at p (every ISA type is exact in a double).
inline double load_f64(DType t, const uint8_t* p) {
    switch (t) {
        case DType::FP16: {
            uint16_t h;
            std::memcpy(&h, p, 2);
            return f16_to_f32(h);
        }
        case DType::BF16: {
            uint16_t h;
            std::memcpy(&h, p, 2);
            return bf16_to_f32(h);
        }
        case DType::FP32: {
            float f;
            std::memcpy(&f, p, 4);
            return f;
        }
        case DType::INT8: return static_cast<int8_t>(*p);
        case DType::UINT8: return *p;
        case DType::INT16: {
            int16_t v;
            std::memcpy(&v, p, 2);
            return v;
        }
        case DType::INT32: {
            int32_t v;
            std::memcpy(&v, p, 4);
            return v;
        }
        default: return 0.0;
    }
}
// Raw bits (low dtype_size(t) bytes) of v rounded once to type t with mode m. Floats: overflow
// goes to inf or the largest finite value as the mode dictates, denormals are produced, nan
// stays nan (canonical quiet nan). Integers: rounded, then saturated to the type's range; nan
// gives 0.
uint32_t round_bits(DType t, double v, RoundMode m = RoundMode::RINT);
// The generic (slow) rounding path for every mode; round_bits uses a bit-level fast path for
// RINT. Exposed so tests can hold the two implementations against each other.
uint32_t round_bits_reference(DType t, double v, RoundMode m);
inline void store_f64(DType t, uint8_t* p, double v, RoundMode m = RoundMode::RINT) {
    if (t == DType::FP32 && m == RoundMode::RINT) {  // the host's double->float is IEEE RNE
        const float f = static_cast<float>(v);
        std::memcpy(p, &f, 4);
        return;
    }
    const uint32_t b = round_bits(t, v, m);  // little-endian host: the low bytes are the element
    switch (dtype_size(t)) {
        case 1: *p = static_cast<uint8_t>(b); break;
        case 2: {
            const uint16_t h = static_cast<uint16_t>(b);
            std::memcpy(p, &h, 2);
            break;
        }
        default: std::memcpy(p, &b, 4); break;
    }
}
// Integer results that wrap (two's complement) instead of saturating, e.g. int32 vadd.
void store_wrap(DType t, uint8_t* p, int64_t v);
inline bool is_float(DType t) { return t == DType::FP16 || t == DType::BF16 || t == DType::FP32; }
inline bool is_int(DType t) { return !is_float(t) && t != DType::kCount; }

// Reads/writes one element of type t at p as float (integers convert exactly where they can).
float load_as_f32(DType t, const uint8_t* p);
void store_from_f32(DType t, uint8_t* p, float v);

}  // namespace sfumato::isa
