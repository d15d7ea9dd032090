// Parameters of an AI core's scalar-side memory (instruction cache, data cache, TLB) and of a
// block's start-up, read from `chip.aicore.{icache,dcache,tlb,startup}.*`. Plain C++ (no SystemC).
#pragma once
#include <cstdint>

#include "sim/config.h"

namespace sfumato {

// chip.aicore.{icache,dcache,tlb,startup}.*
struct ScalarMemParams {
    explicit ScalarMemParams(const ParamScope& aicore);
    Param<uint64_t> icache_aic_bytes, icache_aiv_bytes;
    Param<uint32_t> icache_line_bytes, icache_ways;
    Param<uint64_t> dcache_bytes;
    Param<uint32_t> dcache_line_bytes, dcache_ways, dcache_hit_cycles, dcci_line_cycles;
    Param<uint32_t> tlb_entries;
    Param<uint64_t> tlb_page_bytes;
    Param<uint32_t> tlb_walk_levels, tlb_miss_cycles;
    // Start-up of a block: core initialisation, and the kernel's code size estimate.
    Param<uint32_t> init_cycles;
    Param<uint32_t> code_entry_bytes, code_site_bytes;
};

}  // namespace sfumato
