// Data types of the ISA and their conversions. fp16 and bf16 are stored as raw 16-bit patterns;
// conversions from fp32 round to nearest even (the chip's default), keep inf/nan, and produce
// denormals where the format has them.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>

namespace sfumato::isa {

enum class DType : uint8_t { FP16, BF16, FP32, INT8, INT32, UINT8, INT16, kCount };

constexpr uint32_t dtype_size(DType t) {
    switch (t) {
        case DType::FP16: case DType::BF16: case DType::INT16: return 2;
        case DType::FP32: case DType::INT32: return 4;
        case DType::INT8: case DType::UINT8: return 1;
        default: return 0;
    }
}
const char* dtype_name(DType t);
// Parses "fp16", "bf16", "fp32", "int8", "int32", "uint8", "int16"; false when unknown.
bool parse_dtype(const std::string& s, DType& out);

inline uint32_t f32_bits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline float bits_f32(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }

uint16_t f32_to_f16(float f);   // round to nearest even
float f16_to_f32(uint16_t h);
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

template <class T> struct DTypeOf;
template <> struct DTypeOf<half> { static constexpr DType v = DType::FP16; };
template <> struct DTypeOf<bfloat16> { static constexpr DType v = DType::BF16; };
template <> struct DTypeOf<float> { static constexpr DType v = DType::FP32; };
template <> struct DTypeOf<int8_t> { static constexpr DType v = DType::INT8; };
template <> struct DTypeOf<uint8_t> { static constexpr DType v = DType::UINT8; };
template <> struct DTypeOf<int16_t> { static constexpr DType v = DType::INT16; };
template <> struct DTypeOf<int32_t> { static constexpr DType v = DType::INT32; };

// Reads/writes one element of type t at p as float (integers convert exactly where they can).
float load_as_f32(DType t, const uint8_t* p);
void store_from_f32(DType t, uint8_t* p, float v);

}  // namespace sfumato::isa
