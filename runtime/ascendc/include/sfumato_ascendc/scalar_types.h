// The 16-bit float types Ascend C kernels name without a namespace (`half`, `bfloat16_t`), as
// host C++ value types: they convert implicitly from and to the arithmetic types (as the device
// compiler's native types do), round once to nearest even, and do arithmetic in float. Storage
// is the raw 16-bit pattern, so a tensor of them is the chip's fp16/bf16 data byte for byte.
#pragma once
#include <cstdint>
#include <type_traits>

#include "isa/dtype.h"

namespace AscendC {
struct int4b_t;
}
namespace sfumato::ascendc {

template <isa::DType D>
struct Float16Base {
    uint16_t bits;
    Float16Base() = default;
    template <class U, std::enable_if_t<std::is_arithmetic_v<U>, int> = 0>
    Float16Base(U v)  // NOLINT(google-explicit-constructor): the device type converts implicitly
        : bits(static_cast<uint16_t>(isa::round_bits(D, static_cast<double>(v)))) {}
    operator float() const {  // NOLINT(google-explicit-constructor)
        return D == isa::DType::FP16 ? isa::f16_to_f32(bits) : isa::bf16_to_f32(bits);
    }
    static Float16Base from_bits(uint16_t b) {
        Float16Base h;
        h.bits = b;
        return h;
    }
};

struct Half : Float16Base<isa::DType::FP16> {
    using Float16Base::Float16Base;
    Half() = default;
    Half(const Float16Base& b) : Float16Base(b) {}  // NOLINT(google-explicit-constructor)
    template <class U>
    Half& operator+=(U v) { return *this = Half(float(*this) + float(v)); }
    template <class U>
    Half& operator-=(U v) { return *this = Half(float(*this) - float(v)); }
    template <class U>
    Half& operator*=(U v) { return *this = Half(float(*this) * float(v)); }
    template <class U>
    Half& operator/=(U v) { return *this = Half(float(*this) / float(v)); }
};

struct BFloat16 : Float16Base<isa::DType::BF16> {
    using Float16Base::Float16Base;
    BFloat16() = default;
    BFloat16(const Float16Base& b) : Float16Base(b) {}  // NOLINT(google-explicit-constructor)
    template <class U>
    BFloat16& operator+=(U v) { return *this = BFloat16(float(*this) + float(v)); }
    template <class U>
    BFloat16& operator-=(U v) { return *this = BFloat16(float(*this) - float(v)); }
    template <class U>
    BFloat16& operator*=(U v) { return *this = BFloat16(float(*this) * float(v)); }
    template <class U>
    BFloat16& operator/=(U v) { return *this = BFloat16(float(*this) / float(v)); }
};

static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2, "16-bit storage");

// The kernel API's element type for an Ascend C element type: the same bytes, and a dtype the
// ISA knows (unsigned 16/32-bit data moves as its signed twin; only copies care about them).
template <class T>
struct Storage {
    static_assert(sizeof(T) == 0,
                  "sfumato's Ascend C layer supports half, bfloat16_t, float, int8_t, uint8_t, bool, int16_t, "
                  "uint16_t, int32_t, uint32_t and int4b_t tensors");
};
template <>
struct Storage<Half> {
    using type = isa::half;
};
template <>
struct Storage<BFloat16> {
    using type = isa::bfloat16;
};
template <>
struct Storage<float> {
    using type = float;
};
template <>
struct Storage<int8_t> {
    using type = int8_t;
};
template <>
struct Storage<uint8_t> {
    using type = uint8_t;
};
// bool tensors (TopK's finish flags) are bytes.
template <>
struct Storage<bool> {
    using type = uint8_t;
};
template <>
struct Storage<int16_t> {
    using type = int16_t;
};
template <>
struct Storage<uint16_t> {
    using type = int16_t;
};
template <>
struct Storage<int32_t> {
    using type = int32_t;
};
template <>
struct Storage<uint32_t> {
    using type = int32_t;
};
// 64-bit tensors hold FixPipe quantisation parameters (an fp32 scale in the low word); the ISA has
// no 64-bit element type, so copies move them as pairs of 32-bit elements (tensor.h: move_view).
template <>
struct Storage<uint64_t> {
    using type = uint64_t;
};
template <>
struct Storage<int64_t> {
    using type = int64_t;
};
// The 8-bit float types the reference names (fp8_e4m3fn_t, fp8_e5m2_t, hifloat8_t): raw bytes. The
// reference lists their conversions (Cast) for Ascend 950 only; its Atlas A2 table has none, and
// sfumato models Atlas A2 and Atlas training chips, so a tensor of them moves its bytes (as uint8_t)
// and a Cast to or from one fails to compile naming the type (vector.h).
template <int Kind>
struct Float8 {
    uint8_t bits;
};
template <class T>
inline constexpr bool kIsFloat8 = false;
template <int Kind>
inline constexpr bool kIsFloat8<Float8<Kind>> = true;
template <int Kind>
struct Storage<Float8<Kind>> {
    using type = uint8_t;
};
// int4b_t (AscendC, defs.h): a byte of two elements; the kernel API's tensor counts bytes.
template <>
struct Storage<AscendC::int4b_t> {
    using type = isa::int4x2;
};
template <class T>
using storage_t = typename Storage<std::remove_cv_t<T>>::type;

// A scalar argument of element type T as the ISA's double operand.
template <class T, class U>
double scalar_value(U v) {
    if constexpr (std::is_arithmetic_v<U>)
        return static_cast<double>(static_cast<T>(v));
    else
        return static_cast<double>(static_cast<float>(static_cast<T>(v)));
}

}  // namespace sfumato::ascendc

using half = sfumato::ascendc::Half;
using bfloat16_t = sfumato::ascendc::BFloat16;
using fp8_e4m3fn_t = sfumato::ascendc::Float8<0>;
using fp8_e5m2_t = sfumato::ascendc::Float8<1>;
using hifloat8_t = sfumato::ascendc::Float8<2>;
