// Parameters of a whole chip, each component reading its own scope under `chip.*`.
// Plain C++ (no SystemC), so `sfumato params` and `sfumato info` load them without a model.
#pragma once
#include "models/aicore/core_params.h"
#include "models/aicore/system_region.h"
#include "models/chip/simple_dma.h"
#include "models/chip/simple_gm.h"
#include "models/dma/sdma_params.h"
#include "models/mem/mem_params.h"
#include "models/power/power_params.h"
#include "models/ts/task_scheduler.h"
#include "sim/config.h"
#include "sim/device_if.h"

namespace sfumato {

struct ChipParams {
    explicit ChipParams(Config& c);
    ParamScope scope;
    ChoiceParam name;
    ChoiceParam arch;
    Param<uint32_t> cube_cores;
    Param<uint32_t> aiv_per_aic;
    Param<uint32_t> clock_mhz;
    CoreParams core;
    // chip.mem.model picks the memory model; the other model's keys are declared but not read
    // (setting one is an error, Config::check_unused).
    ChoiceParam mem_model;     // chip.mem.model: detailed (models/mem) or simple (SimpleGm)
    SimpleGmParams gm;         // chip.gm.* (simple)
    mem::MemSysParams mem;     // chip.hbm.*, chip.l2.*, chip.noc.* (detailed)
    HostLinkParams host_link;  // chip.host_link.* (both)
    SimpleDmaParams dma;       // the skeleton DMA, chip.dma.d2d_gbps (simple)
    SdmaParams sdma;           // SDMA engines, chip.dma.engines/max_outstanding (detailed)
    TaskSchedulerParams ts;
    SystemRegionParams system;  // chip.system.*: page table, kernel arguments, kernel code
    power::PowerParams power;   // chip.power.*: energy per event, static power, voltage

    bool split() const { return arch.get() == "split"; }
    uint32_t vector_cores() const { return split() ? cube_cores * aiv_per_aic : cube_cores; }
    ClockDomain clock() const { return ClockDomain::from_mhz(clock_mhz); }
    bool detailed_mem() const { return mem_model.get() == "detailed"; }
    uint64_t gm_capacity() const { return detailed_mem() ? mem.hbm.capacity_bytes : gm.capacity.get(); }
    // Memory ports: every core (AIC and AIV) has its own.
    uint32_t mem_ports() const { return cube_cores + (split() ? vector_cores() : 0); }
    // Core ports, then one per SDMA engine.
    uint32_t mem_system_ports() const { return mem_ports() + sdma.engines; }
};

// Derived peaks of a configuration (VALIDATION.md, "Physical limits").
struct ChipPeaks {
    double cube_tflops_fp16, cube_tflops_bf16, cube_tflops_fp32, cube_tops_int8;
    double vector_gflops_fp16, vector_gflops_fp32;
    double gm_gbps;               // device-wide global-memory (HBM) bandwidth
    double l2_gbps;               // device-wide L2 bandwidth (slices x slice port; = gm_gbps without L2)
    // One per-core port model (each core's memory port): reads at core_read_gbps (L2 hits),
    // the part that misses L2 also at core_gm_read_gbps (data from HBM); writes at
    // core_write_gbps (into L2). The skeleton memory has one read and one write rate.
    double core_read_gbps;
    double core_gm_read_gbps;
    double core_write_gbps;
    // Upper limit of any data path (L2-resident data included): max(gm_gbps, l2_gbps).
    double device_mem_max_gbps;
};
ChipPeaks chip_peaks(const ChipParams& p);
// How the memory serves requests, for summaries (every figure names it): "exact" or "bulk"
// (chip.mem.service of the detailed model), or "simple" (chip.mem.model = simple).
inline const char* mem_service_name(const ChipParams& p) {
    return !p.detailed_mem() ? "simple" : p.mem.bulk ? "bulk" : "exact";
}
// What a chip built from `p` reports through IDevice::info(): sizes, core counts, the clock and
// the peaks (per core cycle). Plain C++, so host-side code and tests see the same figures
// without building a model.
DeviceInfo device_info(const ChipParams& p, bool functional);

}  // namespace sfumato
