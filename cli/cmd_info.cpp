// `sfumato info --config F | --system F`: the effective configuration and the derived peaks (the
// physical limits every run is held against); with --system, the system's chips and links too.
#include <cstdio>

#include "models/chip/chip_params.h"
#include "runtime/rt/runtime.h"
#include "cli/command.h"
#include "cli/session.h"
#include "cli/system_session.h"

namespace sfumato::cli {

namespace {
int cmd_info(const std::vector<std::string>& args) {
    LoadedSystemParams lsp;
    if (!load_system_params_command(args, "info", lsp)) return 0;
    const LoadedParams& lp = lsp.base;
    const Config& c = lp.config;
    const ChipParams& chip = *lp.chip;
    const ChipPeaks k = chip_peaks(chip);
    std::printf("%s: %s chip, %u %s", chip.name.get().c_str(), chip.arch.get().c_str(), chip.cube_cores.get(),
                chip.split() ? "AIC" : "cores");
    if (chip.split()) std::printf(" + %u AIV", chip.vector_cores());
    std::printf(" at %u MHz (config hash %s)\n\n", chip.clock_mhz.get(), c.hash().c_str());
    std::printf("derived peaks:\n");
    std::printf("  cube fp16        %10.1f TFLOPS\n", k.cube_tflops_fp16);
    std::printf("  cube bf16        %10.1f TFLOPS\n", k.cube_tflops_bf16);
    std::printf("  cube fp32        %10.1f TFLOPS\n", k.cube_tflops_fp32);
    std::printf("  cube int8        %10.1f TOPS\n", k.cube_tops_int8);
    std::printf("  vector fp16      %10.1f GFLOPS\n", k.vector_gflops_fp16);
    std::printf("  vector fp32      %10.1f GFLOPS\n", k.vector_gflops_fp32);
    std::printf("  global memory    %10.1f GB/s\n", k.gm_gbps);
    if (chip.detailed_mem()) {
        const auto& h = chip.mem.hbm;
        std::printf("  HBM peak         %10.1f GB/s (%u channels x %u bit x %u MT/s)\n", mem::hbm_peak_gbps(h),
                    h.stacks * h.channels_per_stack, h.bus_width_bits, h.data_rate_mtps);
        std::printf("  L2               %10.1f GB/s (%u slices x %u B/cycle)\n", k.l2_gbps, chip.mem.l2.g.slices,
                    chip.mem.l2.slice_bytes_per_cycle);
        // The memory system's per-core port: reads at the L2 read rate, misses also at the GM rate.
        std::printf("  per-core port    %10.1f GB/s read (L2 hits), %.1f GB/s of it from HBM (L2 misses), %.1f GB/s write\n\n",
                    k.core_read_gbps, k.core_gm_read_gbps, k.core_write_gbps);
    } else {
        std::printf("  per-core port    %10.1f GB/s read, %.1f GB/s write\n\n", k.core_read_gbps, k.core_write_gbps);
    }
    if (lsp.given) {
        const SystemParams& sp = *lsp.system;
        std::printf("system %s: %u chips (%u servers x %u), topology %s\n", sp.name.get().c_str(), sp.chips(),
                    sp.servers.get(), sp.chips_per_server.get(), sp.topology.get().c_str());
        std::printf("  chip-to-chip link %10.1f GB/s per direction (%.1f GB/s payload), %.0f ns\n", sp.link.gbps.get(),
                    sp.link.payload_gbps(), sp.link.latency_ns.get());
        if (sp.nics_per_chip > 0)
            std::printf("  NIC              %10.1f GB/s per direction x %u per chip, %.0f ns (+ switch %.0f ns)\n",
                        sp.nic.gbps.get(), sp.nics_per_chip.get(), sp.nic.latency_ns.get(), sp.switch_latency_ns.get());
        std::printf("\n");
    }
    std::printf("effective configuration:\n");
    for (const auto& [key, value] : c.effective()) std::printf("  %s = %s\n", key.c_str(), value.c_str());
    return 0;
}
}  // namespace

SFUMATO_COMMAND("info", "print the effective configuration and derived peaks", cmd_info);

}  // namespace sfumato::cli
