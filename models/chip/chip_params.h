// Parameters of a whole chip, each component reading its own scope under `chip.*`.
// Plain C++ (no SystemC), so `sfumato params` and `sfumato info` load them without a model.
#pragma once
#include "models/aicore/core_params.h"
#include "models/chip/simple_dma.h"
#include "models/chip/simple_gm.h"
#include "models/dma/sdma_params.h"
#include "models/mem/mem_params.h"
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
    SimpleGmParams gm;
    ChoiceParam mem_model;     // chip.mem.model: detailed (models/mem) or simple (SimpleGm)
    mem::MemSysParams mem;
    SimpleDmaParams dma;       // the skeleton DMA (chip.mem.model = simple)
    SdmaParams sdma;           // SDMA engines + host link (chip.mem.model = detailed)
    TaskSchedulerParams ts;

    bool split() const { return arch.get() == "split"; }
    uint32_t vector_cores() const { return split() ? cube_cores * aiv_per_aic : cube_cores; }
    ClockDomain clock() const { return ClockDomain(period_ps_from_mhz(clock_mhz)); }
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
    double gm_gbps;               // device-wide global-memory bandwidth
    double core_gm_read_gbps;     // per-core GM read port
    double core_gm_write_gbps;    // per-core GM write port
    // Upper limits on any data path (L2-resident data included), for roofline lower bounds
    // that no run can beat.
    double device_mem_max_gbps;
    double core_read_max_gbps, core_write_max_gbps;
};
ChipPeaks chip_peaks(const ChipParams& p);
// What the runtime and operator tilings see of a chip with these parameters.
DeviceInfo device_info(const ChipParams& p, bool functional);

}  // namespace sfumato
