#include "models/power/power_params.h"

namespace sfumato::power {

namespace {
// A non-negative energy or power coefficient; the description ends with its source.
Param<double> coef(const ParamScope& s, const char* name, double def, const char* unit,
                   const std::string& desc, const std::string& source, double hi) {
    return Param<double>(s, name, def, unit, desc + " (source: " + source + ")", {0.0, hi});
}
const char* kScaled =
    "Horowitz ISSCC 2014 45 nm figure scaled to 7 nm by 1/5 (Stillmaker & Baas 2017), estimate";
}  // namespace

PowerParams::PowerParams(const ParamScope& chip)
    : scope(chip.sub("power")),
      voltage_v(scope, "voltage_v", 0.80, "V",
                "core supply voltage; dynamic energy scales with (V/nominal)^2, leakage with V/nominal "
                "(source: estimate, a 7 nm nominal)",
                {0.3, 1.5}),
      nominal_voltage_v(scope, "nominal_voltage_v", 0.80, "V",
                        "voltage the coefficients are given at (source: estimate, 7 nm nominal)", {0.3, 1.5}),
      envelope_w(scope, "envelope_w", 400, "W",
                 "the part's published maximum power, for the checks; not part of the model (source: preset)",
                 {1, 100000}),
      window_us(scope, "window_us", 10, "us", "sliding window of the peak-power figure", {0.001, 1e9}),
      cube_mac_pj(
          coef(scope, "cube_mac_pj", 0.40, "pJ",
               "per fp16 MAC in the cube's arithmetic (a busy cycle is m0*k0*n0 of them; its L0A/L0B reads "
               "and L0C accumulation are priced at l0ab_pj_per_byte and l0c_pj_per_byte)",
               std::string("fp16 mul 1.1 + fp32 add 0.9 pJ, ") + kScaled, 100)),
      cube_mac_fp32_pj(coef(scope, "cube_mac_fp32_pj", 0.92, "pJ", "per fp32 MAC in the cube's arithmetic",
                            std::string("fp32 mul 3.7 + add 0.9 pJ, ") + kScaled, 100)),
      cube_mac_int8_pj(coef(scope, "cube_mac_int8_pj", 0.06, "pJ",
                            "per int8 MAC in the cube's arithmetic (int32 accumulation)",
                            std::string("8-bit mul 0.2 + 32-bit add 0.1 pJ, ") + kScaled, 100)),
      cube_mac_int4_pj(coef(scope, "cube_mac_int4_pj", 0.03, "pJ", "per int4 MAC in the cube's arithmetic",
                            "estimate: half the int8 figure", 100)),
      vector_cycle_pj(coef(scope, "vector_cycle_pj", 400, "pJ",
                           "per busy cycle of a vector unit on simple arithmetic and logic (add, mul, max, "
                           "compare, select...: one 256-byte repeat, 128 fp16 lanes, two 256-B operands read "
                           "from the UB and one written)",
                           std::string("128 lanes x 0.3 pJ + 768 B x 0.5 pJ/B, ") + kScaled, 1e5)),
      vector_transcendental_cycle_pj(
          coef(scope, "vector_transcendental_cycle_pj", 300, "pJ",
               "per busy cycle of a vector unit on exp, ln, sqrt, rsqrt, reciprocal or div (32 elements per "
               "cycle evaluated in fp32, a quarter of a repeat: per element 4x a simple op's cycles)",
               std::string("32 lanes x ~8 fp32 FMAs x 0.92 pJ + 128 B x 0.5 pJ/B, ") + kScaled, 1e5)),
      vector_reduce_cycle_pj(
          coef(scope, "vector_reduce_cycle_pj", 120, "pJ",
               "per busy cycle of a vector unit on reductions and sorts (about 128 B read from "
               "the UB per cycle, an adder or comparator tree)",
               std::string("128 B x 0.5 pJ/B + ~60 fp16 adds or compares, ") + kScaled, 1e5)),
      vector_move_cycle_pj(
          coef(scope, "vector_move_cycle_pj", 260, "pJ",
               "per busy cycle of a vector unit on data movement and casts (UB-to-UB copies, "
               "conv, dup, broadcast, transpose, gathers: 256 B read and written)",
               std::string("512 B x 0.5 pJ/B + cast logic, ") + kScaled, 1e5)),
      scalar_cycle_pj(coef(scope, "scalar_cycle_pj", 15, "pJ",
                           "per busy cycle of a scalar unit (one instruction fetched, decoded and executed)",
                           std::string("RISC instruction overhead ~70 pJ, ") + kScaled, 1e5)),
      l1_pj_per_byte(coef(scope, "l1_pj_per_byte", 1.81, "pJ/B", "per byte read from or written into the L1",
                          std::string("512 KiB SRAM 64-bit read ~72 pJ (log-log between 32 KB 20 pJ and 1 MB "
                                      "100 pJ) = 9.1 pJ/B, ") +
                              kScaled,
                          100)),
      l0ab_pj_per_byte(coef(
          scope, "l0ab_pj_per_byte", 0.69, "pJ/B", "per byte read from or written into the L0A or the L0B",
          std::string("64 KiB SRAM 64-bit read ~28 pJ (log-log between 32 KB 20 pJ and 1 MB "
                      "100 pJ) = 3.4 pJ/B, ") +
              kScaled,
          100)),
      l0c_pj_per_byte(
          coef(scope, "l0c_pj_per_byte", 0.95, "pJ/B",
               "per byte read from or written into the L0C (the cube's accumulator)",
               std::string("128 KiB SRAM 64-bit read ~38 pJ (log-log between 32 KB 20 pJ and 1 MB "
                           "100 pJ) = 4.8 pJ/B, ") +
                   kScaled,
               100)),
      ub_pj_per_byte(
          coef(scope, "ub_pj_per_byte", 1.15, "pJ/B",
               "per byte the MTEs read from or write into the UB (the vector unit's own UB accesses "
               "are in its per-cycle prices)",
               std::string("192 KiB SRAM 64-bit read ~46 pJ (log-log between 32 KB 20 pJ and 1 MB "
                           "100 pJ) = 5.7 pJ/B, ") +
                   kScaled,
               100)),
      mte1_bytes_per_cycle(scope, "mte1_bytes_per_cycle", 256, "B",
                           "bytes an MTE1 busy cycle moves from L1 into L0A/L0B (read once, written once) "
                           "(source: the L0A write width, VALIDATION.md 2c)",
                           {0, 1e5}),
      aic_clock_pj(coef(
          scope, "aic_clock_pj", 1500, "pJ",
          "clock tree and control of an AIC (or coupled core) while it runs a block; clock-gated otherwise",
          "estimate: ~30 % of an AIC's dynamic power at full load (~3.4 nJ per cycle of cube and buffers)",
          1e6)),
      aiv_clock_pj(coef(scope, "aiv_clock_pj", 200, "pJ", "the same for an AIV while it runs a block",
                        "estimate: ~0.36 W per vector core at 1.8 GHz", 1e6)),
      l2_pj_per_byte(coef(scope, "l2_pj_per_byte", 2.0, "pJ/B",
                          "per byte read from or written into the L2 (requests and HBM fills and "
                          "write-backs), with its NoC crossing",
                          std::string("1 MB SRAM 64-bit read 100 pJ = 12.5 pJ/B, ") + kScaled, 1000)),
      hbm_activate_pj(coef(scope, "hbm_activate_pj", 1000, "pJ",
                           "per activate and its precharge (one 1 KiB pseudo-channel row)",
                           "estimate: ~0.12 pJ per row bit, after O'Connor et al. MICRO 2017 (HBM2 "
                           "activation share of 3.9 pJ/bit)",
                           1e6)),
      hbm_read_pj_per_bit(coef(
          scope, "hbm_read_pj_per_bit", 3.0, "pJ/bit",
          "per bit read: column access, TSVs, I/O and controller PHY",
          "O'Connor et al. MICRO 2017: HBM2 ~3.9 pJ/bit with activation; HBM2e vendors ~3 pJ/bit", 1000)),
      hbm_write_pj_per_bit(coef(scope, "hbm_write_pj_per_bit", 3.0, "pJ/bit", "per bit written",
                                "as hbm_read_pj_per_bit", 1000)),
      hbm_refresh_pj(coef(scope, "hbm_refresh_pj", 300, "pJ",
                          "per refresh command of the DRAM model (per-bank refresh)",
                          "estimate: an activate-precharge of a few rows", 1e7)),
      host_link_pj_per_byte(coef(scope, "host_link_pj_per_byte", 50, "pJ/B",
                                 "per byte carried over the host link (PCIe)",
                                 "estimate: ~6 pJ/bit for PCIe 4/5 PHY and controller", 1e5)),
      aic_leakage_w(coef(scope, "aic_leakage_w", 0.8, "W",
                         "leakage of one AIC (or coupled core) with its buffers, clock-gated or not",
                         "estimate: 7 nm logic+SRAM leakage, ~15 % of a core's power", 1000)),
      aiv_leakage_w(
          coef(scope, "aiv_leakage_w", 0.3, "W", "leakage of one AIV with its UB", "estimate", 1000)),
      l2_leakage_w_per_mib(coef(scope, "l2_leakage_w_per_mib", 0.05, "W/MiB", "L2 SRAM leakage per MiB",
                                "estimate: 7 nm high-density SRAM ~50 mW/MiB", 100)),
      hbm_background_w_per_stack(
          coef(scope, "hbm_background_w_per_stack", 2.0, "W",
               "HBM stack background power (standby, refresh logic, PHY idle) per stack",
               "estimate after HBM2 IDD2N/IDD3N-class standby currents at 1.2 V", 1000)),
      uncore_w(
          coef(scope, "uncore_w", 40, "W",
               "always-on rest of the SoC: control CPUs, task scheduler, NoC, PCIe/HCCS PHYs idle, media",
               "estimate", 100000)) {
    if (nominal_voltage_v <= 0) throw ConfigError(scope.key("nominal_voltage_v"), "must be positive");
}

}  // namespace sfumato::power
