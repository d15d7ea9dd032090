#include "models/aicore/scalar_mem_params.h"

#include "sim/error.h"

namespace sfumato {

namespace {
bool pow2(uint64_t v) { return v && !(v & (v - 1)); }

void check_cache(const ParamScope& s, const char* size_key, uint64_t bytes, const char* line_key, uint32_t line,
                 const char* ways_key, uint32_t ways) {
    if (!pow2(line)) throw ConfigError(s.key(line_key), "must be a power of two");
    if (bytes % (uint64_t{line} * ways) != 0 || bytes < uint64_t{line} * ways)
        throw ConfigError(s.key(size_key), "must be a whole number of sets (" + std::string(line_key) + " x " + ways_key +
                                               " = " + std::to_string(uint64_t{line} * ways) + " B)");
    if (!pow2(bytes / (uint64_t{line} * ways))) throw ConfigError(s.key(size_key), "must give a power-of-two number of sets");
}
}  // namespace

ScalarMemParams::ScalarMemParams(const ParamScope& a)
    : icache_aic_bytes(a.sub("icache"), "aic_bytes", 32 * 1024, "B",
                       "instruction cache of a cube (or coupled) core (public: 32 KiB on 910B-class AIC)", {1, 1ull << 24}),
      icache_aiv_bytes(a.sub("icache"), "aiv_bytes", 16 * 1024, "B",
                       "instruction cache of a vector core (public: 16 KiB on 910B-class AIV)", {1, 1ull << 24}),
      icache_line_bytes(a.sub("icache"), "line_bytes", 2048, "B",
                        "instruction cache line: code is fetched in units of this (public: 2 KiB)", {4, 1u << 20}),
      icache_ways(a.sub("icache"), "ways", 4, "way", "instruction cache associativity (est.)", {1, 1024}),
      dcache_bytes(a.sub("dcache"), "bytes", 16 * 1024, "B", "scalar data cache (public: 16 KiB)", {1, 1ull << 24}),
      dcache_line_bytes(a.sub("dcache"), "line_bytes", 64, "B", "scalar data cache line (public: 64 B)", {4, 1u << 20}),
      dcache_ways(a.sub("dcache"), "ways", 4, "way", "scalar data cache associativity (est.)", {1, 1024}),
      dcache_hit_cycles(a.sub("dcache"), "hit_cycles", 2, "cycle", "scalar load/store that hits the data cache (est.)",
                        {0, 10000}),
      dcci_line_cycles(a.sub("dcache"), "dcci_line_cycles", 2, "cycle",
                       "DCCI: cycles per line it checks (one line, or every line of the cache), beyond write-backs (est.)",
                       {0, 10000}),
      tlb_entries(a.sub("tlb"), "entries", 16, "entry", "translations the scalar unit's TLB holds (est.)", {1, 1u << 16}),
      tlb_page_bytes(a.sub("tlb"), "page_bytes", 2ull << 20, "B", "page size of device memory (est.: 2 MiB huge pages)",
                     {4096, 1ull << 40}),
      tlb_walk_levels(a.sub("tlb"), "walk_levels", 3, "level", "page-table levels a TLB miss reads, one 8-byte entry each (est.)",
                      {0, 8}),
      tlb_miss_cycles(a.sub("tlb"), "miss_cycles", 100, "cycle",
                      "fixed cost of a TLB miss beyond its page-table reads (SMMU request and refill; est.)", {0, 1000000}),
      init_cycles(a.sub("startup"), "init_cycles", 500, "cycle",
                  "core initialisation at a block's start: registers, pipes, stack, system registers (est.)", {0, 100000000}),
      code_entry_bytes(a.sub("startup"), "code_entry_bytes", 4096, "B",
                       "kernel code every block runs: prologue, framework initialisation, argument loads, epilogue (est.)",
                       {0, 1u << 24}),
      code_site_bytes(a.sub("startup"), "code_site_bytes", 64, "B",
                      "kernel code per distinct instruction it issues: parameter setup and the issue (est.)", {0, 1u << 20}) {
    check_cache(a.sub("icache"), "aic_bytes", icache_aic_bytes, "line_bytes", icache_line_bytes, "ways", icache_ways);
    check_cache(a.sub("icache"), "aiv_bytes", icache_aiv_bytes, "line_bytes", icache_line_bytes, "ways", icache_ways);
    check_cache(a.sub("dcache"), "bytes", dcache_bytes, "line_bytes", dcache_line_bytes, "ways", dcache_ways);
    if (!pow2(tlb_page_bytes)) throw ConfigError(a.sub("tlb").key("page_bytes"), "must be a power of two");
}

}  // namespace sfumato
