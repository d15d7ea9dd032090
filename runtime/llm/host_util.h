// Small helpers the LLM host programs (engine, tensor / pipeline / expert parallel runs) share for
// their messages and their memory accounting. Internal to runtime/llm.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>

#include "runtime/ref/host_tensor.h"

namespace sfumato::llm::util {

inline std::string num(int64_t v) { return std::to_string(v); }

inline uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }
constexpr uint64_t kAlign = 512;  // device buffers' alignment

// Bytes per element of an external weight on the device: int8 (W8A8 weights), fp32 (their
// scales) or the model's 16-bit type.
inline uint64_t elem_bytes(ref::ElemType e) { return e == ref::ElemType::Int8 ? 1 : e == ref::ElemType::Float ? 4 : 2; }

// What an allocation of b bytes holds of device memory (the allocator's power-of-two blocks of at
// least 2 MiB, runtime/rt/buddy_arena.h).
inline uint64_t held(uint64_t b) {
    uint64_t p = 2ull << 20;
    while (p < b) p <<= 1;
    return b ? p : 0;
}

// "12.34 GiB".
inline std::string gib(uint64_t b) {
    char t[32];
    std::snprintf(t, sizeof t, "%.2f GiB", static_cast<double>(b) / (1ull << 30));
    return t;
}

}  // namespace sfumato::llm::util
