// Parameters of the memory system under the chip's scope: HBM (chip.hbm.*, hbm_params.h), the
// memory-side L2 (chip.l2.*) and the core-to-L2 network (chip.noc.*). Plain C++ so that
// `sfumato params` and `sfumato info` read them without elaborating a model.
#pragma once
#include <cstdint>
#include <string>

#include "models/mem/hbm_params.h"
#include "models/mem/l2_tags.h"
#include "sim/config.h"

namespace sfumato::mem {

struct L2Params {
    L2Geometry g;
    uint64_t size_bytes = 0;
    uint32_t hit_latency = 20;         // core cycles
    uint32_t slice_bytes_per_cycle = 64;
    uint32_t mshrs = 32;               // per slice
    uint32_t atomic_cycles = 4;        // an atomic add's ALU time in the slice, beyond a hit
    std::string replacement = "lru";
};
L2Params read_l2_params(const ParamScope& s);

struct NocParams {
    uint32_t latency = 4;  // core cycles, each way
    uint32_t gm_bytes_per_cycle = 32, l2_read_bytes_per_cycle = 110, l2_write_bytes_per_cycle = 86;
    uint32_t max_outstanding = 64;  // per core port (used by the clients)
};
NocParams read_noc_params(const ParamScope& s);

struct MemSysParams {
    HbmParams hbm;
    L2Params l2;
    NocParams noc;
    uint64_t frontend_ps = 0;      // controller + PHY pipeline per HBM access
    uint64_t trace_window_ps = 0;  // window of the trace bandwidth counters
    // chip.mem.service: exact (every step of a request an event, memory_system.h) or bulk (an
    // approximation: each request served at once from the same parameters, memory_system_bulk.cpp).
    bool bulk = false;
    // chip.mem.completions_ahead: the exact service runs its activations ahead of SystemC time,
    // delivering a pipe's completions that only free a request slot (memory_system.h; a
    // simulation-speed switch, the same cycles either way, docs/speed.md).
    bool completions_ahead = true;
    // chip.mem.threads: 0 auto, 1, 2 (memory_system_mt.cpp; simulation speed only).
    uint32_t threads = 0;
};
// Reads chip.hbm.*, chip.l2.*, chip.noc.* (ConfigError names a bad key).
MemSysParams read_memsys_params(const ParamScope& chip);

}  // namespace sfumato::mem
