#include "models/mem/mem_params.h"

#include "models/mem/i_replacement.h"

namespace sfumato::mem {

L2Params read_l2_params(const ParamScope& s) {
    L2Params p;
    p.size_bytes = Param<uint64_t>(s, "size_kib", 1024, "KiB", "L2 capacity", {1, uint64_t(1) << 30}) << 10;
    p.g.line_bytes = Param<uint32_t>(s, "line_bytes", 128, "B", "L2 line size", {32, 65536});
    p.g.sector_bytes = Param<uint32_t>(s, "sector_bytes", 32, "B", "fill/valid granule inside a line", {1, 65536});
    p.g.ways = Param<uint32_t>(s, "ways", 16, "", "associativity", {1, 256});
    p.g.slices = Param<uint32_t>(s, "slices", 4, "", "L2 slices (each with its own port and MSHRs)", {1, 1024});
    p.hit_latency = Param<uint32_t>(s, "hit_latency", 20, "cycle", "slice arrival to data return on a hit", {0, 100000});
    p.slice_bytes_per_cycle = Param<uint32_t>(s, "slice_bytes_per_cycle", 64, "B/cycle", "port bandwidth of one slice", {1, 65536});
    p.mshrs = Param<uint32_t>(s, "mshrs", 32, "", "outstanding line misses per slice", {1, 65536});
    p.atomic_cycles = Param<uint32_t>(s, "atomic_cycles", 4, "cycle",
                                      "an atomic add's read-modify-write in the slice: cycles beyond a hit's latency "
                                      "(its data array is read and written, so it also occupies the slice port twice; est.)",
                                      {0, 100000});
    p.replacement = ChoiceParam(s, "replacement", "lru", "replacement policy", replacement_names()).get();
    if (!is_pow2(p.g.line_bytes)) throw ConfigError(s.key("line_bytes"), "must be a power of two (got " + std::to_string(p.g.line_bytes) + ")");
    if (!is_pow2(p.g.sector_bytes) || p.g.sector_bytes > p.g.line_bytes || p.g.line_bytes / p.g.sector_bytes > 64)
        throw ConfigError(s.key("sector_bytes"), "must be a power of two, at most the line and at least 1/64 of it");
    const uint64_t per_set = uint64_t(p.g.line_bytes) * p.g.ways * p.g.slices;
    if (p.size_bytes % per_set || p.size_bytes < per_set)
        throw ConfigError(s.key("size_kib"), "must be a whole number of sets (line x ways x slices = " + std::to_string(per_set) + " B)");
    p.g.sets = static_cast<uint32_t>(p.size_bytes / per_set);
    return p;
}

NocParams read_noc_params(const ParamScope& s) {
    NocParams p;
    ChoiceParam topo(s, "topology", "crossbar", "core-to-slice network", {"crossbar"});
    p.latency = Param<uint32_t>(s, "latency", 4, "cycle", "core port to L2 slice, each way", {0, 100000});
    p.gm_bytes_per_cycle = Param<uint32_t>(s, "core_gm_bytes_per_cycle", 32, "B/cycle", "per-core bandwidth of data from HBM (the core's own L2 misses; a read merged into a fill in flight is served as a hit)", {1, 65536});
    p.l2_read_bytes_per_cycle = Param<uint32_t>(s, "core_l2_read_bytes_per_cycle", 110, "B/cycle", "per-core L2 read bandwidth", {1, 65536});
    p.l2_write_bytes_per_cycle = Param<uint32_t>(s, "core_l2_write_bytes_per_cycle", 86, "B/cycle", "per-core L2 write bandwidth", {1, 65536});
    p.max_outstanding = Param<uint32_t>(s, "max_outstanding", 64, "requests", "outstanding memory requests per core port", {1, 65536});
    return p;
}

MemSysParams read_memsys_params(const ParamScope& chip) {
    MemSysParams p;
    p.hbm = read_hbm_params(chip.sub("hbm"));
    p.l2 = read_l2_params(chip.sub("l2"));
    p.noc = read_noc_params(chip.sub("noc"));
    const ParamScope hs = chip.sub("hbm");
    p.frontend_ps = static_cast<uint64_t>(
        Param<double>(hs, "frontend_latency_ns", 0.0, "ns", "controller + PHY pipeline added to every HBM access", {0.0, 1e6}).get() * 1000.0);
    p.trace_window_ps = static_cast<uint64_t>(
        Param<double>(hs, "trace_window_ns", 1000.0, "ns", "window of the bandwidth counters in traces", {1.0, 1e9}).get() * 1000.0);
    p.bulk = ChoiceParam(chip.sub("mem"), "service", "exact",
                         "how the detailed memory system serves requests: exact (each line's steps as events) or bulk "
                         "(approximate and faster: a request served at once from the same parameters, docs/speed.md)",
                         {"exact", "bulk"})
                 .get() == "bulk";
    p.completions_ahead = Param<bool>(chip.sub("mem"), "completions_ahead", true, "",
                                      "exact service: run the memory system's activations ahead of SystemC time up to "
                                      "the next activity of any other process, delivering the completions that only "
                                      "free a pipe's request slot (simulation speed only: the same cycles either way; "
                                      "docs/speed.md)",
                                      {false, true})
                              .get();
    const std::string th = ChoiceParam(chip.sub("mem"), "threads", "auto",
                                       "exact service: host threads of the memory system (2: the HBM controllers on a "
                                       "second thread; auto: 2 for a memory benchmark on an otherwise idle machine "
                                       "with 2 CPUs or more). Simulation speed only: the same cycles either way "
                                       "(docs/speed.md)",
                                       {"auto", "1", "2"})
                               .get();
    p.threads = th == "1" ? 1 : th == "2" ? 2 : 0;
    return p;
}

}  // namespace sfumato::mem
