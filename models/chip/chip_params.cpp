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
      ts(scope.sub("ts")),
      system(scope) {}

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

}  // namespace sfumato
