/* Tiling of the leaky relu example, computed on the host and passed to the kernel by value. */
#ifndef LEAKY_RELU_TILING_H
#define LEAKY_RELU_TILING_H
#include <cstdint>

struct LeakyReluTilingData {
    uint32_t totalLength;  // elements in all
    uint32_t tileNum;      // tiles per block (each split in two for double buffering)
    float alpha;           // slope for negative inputs
};
#endif
