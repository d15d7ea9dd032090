// memcpy_s and memset_s of the bounds-checked C library the vendor's headers give host code (the
// examples copy tiling data with them): 0 on success, non-zero (nothing copied) when the count
// exceeds the destination or a pointer is null.
#pragma once
#include <cstddef>
#include <cstring>

#ifndef EOK
#define EOK 0
#endif

inline int memcpy_s(void* dest, size_t destMax, const void* src, size_t count) {
    if (dest == nullptr || src == nullptr || count > destMax) return 1;
    if (count) std::memmove(dest, src, count);
    return EOK;
}
inline int memset_s(void* dest, size_t destMax, int c, size_t count) {
    if (dest == nullptr || count > destMax) return 1;
    if (count) std::memset(dest, c, count);
    return EOK;
}
