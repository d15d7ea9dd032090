// Small helpers the LLM host programs (engine, tensor / pipeline / expert parallel runs) share for
// their messages and their memory accounting. Internal to runtime/llm.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>

namespace sfumato::llm::util {

inline std::string num(int64_t v) { return std::to_string(v); }

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
