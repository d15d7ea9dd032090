// The global-memory bytes a data-movement instruction reads or writes, as a two-level strided
// pattern of contiguous runs: `outer` groups `outer_stride` bytes apart, each of `inner` runs of
// `len` bytes `inner_stride` apart. Every GM-touching opcode (burst copies, ND2NZ, LOAD2D from
// GM, FixPipe to GM) fits this shape, so an MTE walks it with a cursor and no allocation.
#pragma once
#include <cstdint>

#include "isa/instr.h"

namespace sfumato {

struct GmPattern {
    uint64_t base = 0;
    uint32_t outer = 0, inner = 0;
    uint64_t outer_stride = 0, inner_stride = 0;
    uint64_t len = 0;
    bool write = false;
    bool atomic = false;
    uint64_t total() const { return uint64_t{outer} * inner * len; }
};

// Fills p and returns true if the instruction moves bytes to or from GM.
bool gm_pattern(const isa::Instr& in, GmPattern& p);

}  // namespace sfumato
