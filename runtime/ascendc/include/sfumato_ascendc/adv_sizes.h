// Scratch sizes of the advanced APIs' row helpers (adv_rows.h), shared by the kernel side and the
// host tiling functions (softmax_host.h): a slice of `rows` float rows needs align8(rows) reduced
// values, align8(rows) broadcast blocks of 8 and rows x 64 floats of fold area.
#pragma once
#include <algorithm>
#include <cstdint>

namespace AscendC::sfumato_adv {

constexpr uint32_t kLanes = 64;     // float lanes of one 256-byte repeat
constexpr uint32_t kBlkFloats = 8;  // floats of one 32-byte block
constexpr uint32_t kMaxRepeat = 255;

constexpr uint32_t align8(uint32_t n) { return (n + 7u) / 8u * 8u; }

// Scratch bytes a slice of `rows` rows needs (red + blk + fold).
constexpr uint32_t slice_bytes(uint32_t rows) {
    return align8(rows) * 4u + align8(rows) * kBlkFloats * 4u + rows * kLanes * 4u;
}

// Rows of one slice that fit `bytes` of scratch (at most `rows`, at most one repeat count); 0 if none.
inline uint32_t rows_fitting(uint32_t bytes, uint32_t rows) {
    uint32_t s = std::min(rows, kMaxRepeat);
    while (s > 0 && slice_bytes(s) > bytes) --s;
    return s;
}

}  // namespace AscendC::sfumato_adv

namespace AscendC::sfumato_adv {
// The normalisation kernels' scratch for a slice of `rows` rows of h floats: red, `blks` block arrays,
// fold, and `bufs` row buffers of rows x h.
constexpr uint64_t norm_slice_bytes(uint32_t rows, uint32_t h, uint32_t blks, uint32_t bufs) {
    return uint64_t{align8(rows)} * 4u + uint64_t{blks} * align8(rows) * kBlkFloats * 4u +
           uint64_t{rows} * kLanes * 4u + uint64_t{bufs} * rows * h * 4u;
}
// Rows of a slice that fit `bytes` (a multiple of 8 when fewer than `rows`, at most 248 then); 0 if none.
inline uint32_t norm_rows_fitting(uint64_t bytes, uint32_t rows, uint32_t h, uint32_t blks, uint32_t bufs) {
    if (rows <= kMaxRepeat && norm_slice_bytes(rows, h, blks, bufs) <= bytes) return rows;
    uint32_t s = std::min(rows, 248u) / 8u * 8u;
    while (s > 0 && norm_slice_bytes(s, h, blks, bufs) > bytes) s -= 8;
    return s;
}
}  // namespace AscendC::sfumato_adv
