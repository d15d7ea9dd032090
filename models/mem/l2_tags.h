// The tag array of one L2 slice: sets x ways of lines, each with a valid and a dirty mask over
// its sectors (a line is filled sector by sector, so a 64 B access to a 512 B line fetches only
// what it needs). Plain C++; timing lives in the memory system. Simplified: writes are tracked
// at sector granularity (a partial-sector write is assumed to carry its byte mask).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "models/mem/i_replacement.h"

namespace sfumato::mem {

struct L2Geometry {
    uint32_t line_bytes = 128;
    uint32_t sector_bytes = 32;
    uint32_t sets = 1;
    uint32_t ways = 16;
    uint32_t slices = 1;
};

class L2Tags {
public:
    struct Line {
        uint64_t line_addr = 0;  // address / line_bytes
        uint64_t valid = 0;      // sector mask; 0 = line invalid
        uint64_t dirty = 0;
    };
    struct Victim {
        uint64_t line_addr = 0;
        uint64_t dirty = 0;  // dirty sectors to write back (0: clean or none)
        bool evicted = false;
    };

    L2Tags(const L2Geometry& g, std::unique_ptr<IReplacement> repl);
    // The line holding `line_addr`, or null. Touches the replacement state when `touch`.
    Line* find(uint64_t line_addr, bool touch);
    // Allocates a way for `line_addr` (must be absent), evicting if needed.
    Line* allocate(uint64_t line_addr, Victim& v);
    uint32_t set_of(uint64_t line_addr) const { return static_cast<uint32_t>((line_addr / m_g.slices) % m_g.sets); }
    // Sector mask covering [addr, addr+bytes) within its line.
    uint64_t sector_mask(uint64_t addr, uint32_t bytes) const;

private:
    L2Geometry m_g;
    std::unique_ptr<IReplacement> m_repl;
    std::vector<Line> m_lines;
};

}  // namespace sfumato::mem
