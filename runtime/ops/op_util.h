// Arithmetic the operator library's tilings and buffer plans share: rounding up to a multiple and
// to the 512-byte alignment of device buffers. (One definition, not one per source: the sources
// of a library may be compiled together in one translation unit, SFUMATO_UNITY.)
#pragma once
#include <cstdint>

namespace sfumato::ops {

// v rounded up to a multiple of a (a > 0).
constexpr uint32_t rup(uint32_t v, uint32_t a) { return (v + a - 1) / a * a; }
// v rounded up to a multiple of 512 bytes (device buffers' alignment).
constexpr uint64_t align512(uint64_t v) { return (v + 511) / 512 * 512; }

}  // namespace sfumato::ops
