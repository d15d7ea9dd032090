// The CANN host library's half-precision value type (op::fp16_t), as host programs (the catlass examples'
// helpers and goldens) use it: the Ascend C layer's host half (sfumato_ascendc/scalar_types.h), which converts
// to and from float as the device does, with the library's arithmetic: fp16_t op fp16_t is an fp16_t, the exact
// result rounded once to half (to nearest even), so a golden written as (b + zeroPoint) * scale in fp16_t rounds
// after each step as the device's half Adds and Muls do (catlass's 30_w8a16_matmul). An fp16_t with another
// arithmetic type converts to float first, as before.
#pragma once
#include <type_traits>

#include "sfumato_ascendc/scalar_types.h"

namespace op {

struct fp16_t : ::half {
    fp16_t() = default;
    template <class U, std::enable_if_t<std::is_arithmetic_v<U>, int> = 0>
    fp16_t(U v) : ::half(v) {}  // NOLINT(google-explicit-constructor): converts implicitly, as the library's
    fp16_t(const ::half& h) : ::half(h) {}  // NOLINT(google-explicit-constructor)

    // Both operands fp16_t (a template, so an fp16_t with a float stays float arithmetic, not ambiguous).
    template <class T, std::enable_if_t<std::is_same_v<T, fp16_t>, int> = 0>
    friend fp16_t operator+(const T& a, const T& b) {
        return fp16_t(static_cast<double>(float(a)) + static_cast<double>(float(b)));
    }
    template <class T, std::enable_if_t<std::is_same_v<T, fp16_t>, int> = 0>
    friend fp16_t operator-(const T& a, const T& b) {
        return fp16_t(static_cast<double>(float(a)) - static_cast<double>(float(b)));
    }
    template <class T, std::enable_if_t<std::is_same_v<T, fp16_t>, int> = 0>
    friend fp16_t operator*(const T& a, const T& b) {
        return fp16_t(static_cast<double>(float(a)) * static_cast<double>(float(b)));
    }
    template <class T, std::enable_if_t<std::is_same_v<T, fp16_t>, int> = 0>
    friend fp16_t operator/(const T& a, const T& b) {
        return fp16_t(static_cast<double>(float(a)) / static_cast<double>(float(b)));
    }
};
static_assert(sizeof(fp16_t) == 2, "op::fp16_t is the 16-bit pattern, as a tensor's element");

}  // namespace op
