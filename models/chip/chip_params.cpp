#include "models/chip/chip_params.h"

#include <algorithm>

namespace sfumato {

namespace {
// A model the configuration did not choose still declares its parameters (`sfumato params`
// lists them). When a key set for it breaks its consistency checks, the error to report is
// that key, set but not read, rather than the check.
mem::MemSysParams read_memsys(const ParamScope& s) {
    try {
        return mem::read_memsys_params(s);
    } catch (const ConfigError&) {
        if (!s.unused_reason().empty()) s.config().check_set_unread();
        throw;
    }
}
}  // namespace

ChipParams::ChipParams(Config& c)
    : scope(c, "chip"),
      name(scope, "name", "tiny", "preset name (for reports)", {}),
      arch(scope, "arch", "split", "core architecture: split (AIC + AIVs) or coupled", {"split", "coupled"}),
      cube_cores(scope, "cube_cores", 2, "core", "AI cores (AIC on split parts, coupled cores otherwise)", {1, 1024}),
      aiv_per_aic(scope.unused_if(arch.get() != "split", "chip.arch = coupled has no AIVs"), "aiv_per_aic", 2, "core",
                  "vector cores (AIV) per AIC on split parts", {1, 8}),
      clock_mhz(scope, "clock_mhz", 1000, "MHz", "AI core clock", {1, 100000}),
      core(scope.sub("aicore")),
      mem_model(scope.sub("mem"), "model", "detailed", "global memory model: detailed (L2, NoC, HBM) or simple (latency + bandwidth)",
                {"detailed", "simple"}),
      gm(scope.sub("gm").unused_if(mem_model.get() != "simple",
                                   "chip.gm.* belongs to chip.mem.model = simple (the detailed model reads chip.hbm, chip.l2, chip.noc)")),
      mem(read_memsys(scope.unused_if(mem_model.get() != "detailed",
                                                  "chip.mem.model = simple reads chip.gm.* instead of the detailed memory system"))),
      host_link(scope.sub("host_link")),
      dma(scope.sub("dma").unused_if(mem_model.get() != "simple", "the skeleton DMA's keys belong to chip.mem.model = simple"),
          host_link),
      sdma(scope.sub("dma").unused_if(mem_model.get() != "detailed", "the SDMA engines belong to chip.mem.model = detailed"),
           host_link),
      ts(scope.sub("ts")),
      system(scope),
      power(scope) {}

ChipPeaks chip_peaks(const ChipParams& p) {
    ChipPeaks k{};
    const double f = static_cast<double>(p.clock_mhz) * 1e6;
    const double mn = static_cast<double>(p.core.cube_m0) * p.core.cube_n0;
    const double cubes = p.cube_cores;
    k.cube_tflops_fp16 = cubes * mn * p.core.cube_k0_16bit * 2 * f / 1e12;
    k.cube_tflops_bf16 = k.cube_tflops_fp16;
    k.cube_tflops_fp32 = cubes * mn * p.core.cube_k0_fp32 * 2 * f / 1e12;
    k.cube_tops_int8 = cubes * mn * p.core.cube_k0_int8 * 2 * f / 1e12;
    const double vec_repeats_per_s = p.vector_cores() * f / p.core.vec_cycles_per_repeat;
    k.vector_gflops_fp16 = vec_repeats_per_s * 128 / 1e9;
    k.vector_gflops_fp32 = vec_repeats_per_s * 64 / 1e9;
    if (p.detailed_mem()) {
        k.gm_gbps = mem::hbm_peak_gbps(p.mem.hbm);
        k.l2_gbps = static_cast<double>(p.mem.l2.g.slices) * p.mem.l2.slice_bytes_per_cycle * f / 1e9;
        k.core_read_gbps = static_cast<double>(p.mem.noc.l2_read_bytes_per_cycle) * f / 1e9;
        k.core_gm_read_gbps = static_cast<double>(std::min(p.mem.noc.gm_bytes_per_cycle, p.mem.noc.l2_read_bytes_per_cycle)) * f / 1e9;
        k.core_write_gbps = static_cast<double>(p.mem.noc.l2_write_bytes_per_cycle) * f / 1e9;
    } else {
        k.gm_gbps = static_cast<double>(p.gm.bytes_per_cycle) * f / 1e9;
        k.l2_gbps = k.gm_gbps;
        k.core_read_gbps = k.core_gm_read_gbps = static_cast<double>(p.gm.port_read_bpc) * f / 1e9;
        k.core_write_gbps = static_cast<double>(p.gm.port_write_bpc) * f / 1e9;
    }
    k.device_mem_max_gbps = std::max(k.gm_gbps, k.l2_gbps);
    return k;
}

DeviceInfo device_info(const ChipParams& p, bool functional) {
    DeviceInfo d;
    d.arch = p.arch.get();
    d.cube_cores = p.cube_cores;
    d.vector_cores = p.vector_cores();
    d.aiv_per_aic = p.split() ? p.aiv_per_aic.get() : 0;
    d.clock = p.clock();
    d.ub_bytes = p.core.ub.size;
    d.l1_bytes = p.core.l1.size;
    d.l0a_bytes = p.core.l0a.size;
    d.l0b_bytes = p.core.l0b.size;
    d.l0c_bytes = p.core.l0c.size;
    d.bt_bytes = p.core.bt.size;
    d.fb_bytes = p.core.fb.size;
    d.event_ids = p.core.event_ids;
    d.gm_bytes = p.gm_capacity();
    d.reserved_bytes = p.system.bytes;
    d.functional = functional;
    d.vector_bytes_per_cycle = 256.0 / p.core.vec_cycles_per_repeat;
    d.cube_macs_fp16 = static_cast<double>(p.core.cube_m0) * p.core.cube_n0 * p.core.cube_k0_16bit;
    d.cube_depth_16bit = p.core.cube_k0_16bit;
    d.cube_depth_fp32 = p.core.cube_k0_fp32;
    d.cube_depth_int8 = p.core.cube_k0_int8;
    const ChipPeaks peaks = chip_peaks(p);
    const double per_cycle = 1e9 / (static_cast<double>(p.clock_mhz) * 1e6);  // GB/s -> B/cycle
    d.gm_bytes_per_cycle = peaks.gm_gbps * per_cycle;
    d.core_gm_read_bytes_per_cycle = peaks.core_gm_read_gbps * per_cycle;
    d.core_gm_write_bytes_per_cycle = peaks.core_write_gbps * per_cycle;
    d.l2_bytes = p.detailed_mem() ? p.mem.l2.size_bytes : 0;
    d.mem_max_bytes_per_cycle = peaks.device_mem_max_gbps * per_cycle;
    d.core_read_max_bytes_per_cycle = std::max(peaks.core_read_gbps, peaks.core_gm_read_gbps) * per_cycle;
    d.core_write_max_bytes_per_cycle = peaks.core_write_gbps * per_cycle;
    d.l1_l0a_bytes_per_cycle = p.core.mte1_l1_l0a_bpc;
    d.l1_l0b_bytes_per_cycle = p.core.mte1_l1_l0b_bpc;
    d.core_start_cycles = p.ts.core_start_cycles;
    return d;
}

}  // namespace sfumato
