#include "models/chip/chip_params.h"

namespace sfumato {

ChipParams::ChipParams(Config& c)
    : scope(c, "chip"),
      name(scope, "name", "tiny", "preset name (for reports)", {}),
      arch(scope, "arch", "split", "core architecture: split (AIC + AIVs) or coupled", {"split", "coupled"}),
      cube_cores(scope, "cube_cores", 2, "core", "AI cores (AIC on split parts, coupled cores otherwise)", {1, 1024}),
      aiv_per_aic(scope, "aiv_per_aic", 2, "core", "vector cores (AIV) per AIC on split parts", {1, 8}),
      clock_mhz(scope, "clock_mhz", 1000, "MHz", "AI core clock", {1, 100000}),
      core(scope.sub("aicore")),
      gm(scope.sub("gm")),
      mem_model(scope.sub("mem"), "model", "detailed", "global memory model: detailed (L2, NoC, HBM) or simple (latency + bandwidth)",
                {"detailed", "simple"}),
      mem(mem::read_memsys_params(scope)),
      dma(scope.sub("dma")),
      sdma(scope),
      ts(scope.sub("ts")) {}

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
        k.core_gm_read_gbps = static_cast<double>(p.mem.noc.gm_bytes_per_cycle) * f / 1e9;
        k.core_gm_write_gbps = static_cast<double>(p.mem.noc.l2_write_bytes_per_cycle) * f / 1e9;
        const double l2_gbps = static_cast<double>(p.mem.l2.g.slices) * p.mem.l2.slice_bytes_per_cycle * f / 1e9;
        k.device_mem_max_gbps = std::max(k.gm_gbps, l2_gbps);
        k.core_read_max_gbps = static_cast<double>(std::max(p.mem.noc.l2_read_bytes_per_cycle, p.mem.noc.gm_bytes_per_cycle)) * f / 1e9;
        k.core_write_max_gbps = k.core_gm_write_gbps;
    } else {
        k.gm_gbps = static_cast<double>(p.gm.bytes_per_cycle) * f / 1e9;
        k.core_gm_read_gbps = static_cast<double>(p.gm.port_read_bpc) * f / 1e9;
        k.core_gm_write_gbps = static_cast<double>(p.gm.port_write_bpc) * f / 1e9;
        k.device_mem_max_gbps = k.gm_gbps;
        k.core_read_max_gbps = k.core_gm_read_gbps;
        k.core_write_max_gbps = k.core_gm_write_gbps;
    }
    return k;
}

DeviceInfo device_info(const ChipParams& p, bool functional) {
    DeviceInfo d;
    const bool split = p.split();
    d.arch = p.arch.get();
    d.cube_cores = p.cube_cores;
    d.vector_cores = p.vector_cores();
    d.aiv_per_aic = split ? p.aiv_per_aic.get() : 0;
    d.clock = p.clock();
    d.ub_bytes = p.core.ub.size;
    d.l1_bytes = p.core.l1.size;
    d.l0a_bytes = p.core.l0a.size;
    d.l0b_bytes = p.core.l0b.size;
    d.l0c_bytes = p.core.l0c.size;
    d.event_ids = p.core.event_ids;
    d.gm_bytes = p.gm_capacity();
    d.functional = functional;
    d.vector_bytes_per_cycle = 256.0 / p.core.vec_cycles_per_repeat;
    d.cube_macs_fp16 = static_cast<double>(p.core.cube_m0) * p.core.cube_n0 * p.core.cube_k0_16bit;
    const ChipPeaks peaks = chip_peaks(p);
    d.gm_bytes_per_cycle = peaks.gm_gbps * 1e9 / (static_cast<double>(p.clock_mhz) * 1e6);
    d.core_gm_read_bytes_per_cycle = peaks.core_gm_read_gbps * 1e9 / (static_cast<double>(p.clock_mhz) * 1e6);
    d.core_gm_write_bytes_per_cycle = peaks.core_gm_write_gbps * 1e9 / (static_cast<double>(p.clock_mhz) * 1e6);
    d.l2_bytes = p.detailed_mem() ? p.mem.l2.size_bytes : 0;
    d.mem_max_bytes_per_cycle = peaks.device_mem_max_gbps * 1e9 / (static_cast<double>(p.clock_mhz) * 1e6);
    d.core_read_max_bytes_per_cycle = peaks.core_read_max_gbps * 1e9 / (static_cast<double>(p.clock_mhz) * 1e6);
    d.core_write_max_bytes_per_cycle = peaks.core_write_max_gbps * 1e9 / (static_cast<double>(p.clock_mhz) * 1e6);
    return d;
}

}  // namespace sfumato
