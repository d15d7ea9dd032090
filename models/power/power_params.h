// Parameters of the energy and power model (chip.power.*): what each counted event costs, the
// static power of each component, and the supply voltage. Every coefficient is a typed parameter
// with a unit, a valid range, a description and its source (a published figure for the process
// node or memory type, or "estimate"), listed by `sfumato params` and overridable with --set.
// Dynamic energies are given at the nominal voltage and scale with (V / V_nominal)^2; leakage
// scales with V / V_nominal (first order: the leakage current held constant); the HBM and the
// links have their own supplies and do not scale. The coefficient table with its sources and
// the reasoning behind each estimate is docs/energy.md. Plain C++ (no SystemC).
#pragma once
#include <string>

#include "sim/config.h"

namespace sfumato::power {

struct PowerParams {
    explicit PowerParams(const ParamScope& chip);
    ParamScope scope;
    // Supply and reference.
    Param<double> voltage_v, nominal_voltage_v;
    Param<double> envelope_w;  // the part's published maximum power (checks, not the model)
    Param<double> window_us;   // sliding window of the peak-power figure
    // Dynamic energy per event at the nominal voltage.
    Param<double> cube_mac_pj;  // per fp16 MAC (one cube busy cycle = m0 x k0 x n0 of them)
    Param<double> cube_mac_fp32_pj, cube_mac_int8_pj, cube_mac_int4_pj;  // per MAC of those inputs
    Param<double> vector_cycle_pj;       // per busy cycle of a vector unit on simple ops (one 256-B repeat)
    Param<double> vector_transcendental_cycle_pj, vector_reduce_cycle_pj, vector_move_cycle_pj;  // other classes
    Param<double> scalar_cycle_pj;       // per busy cycle of a scalar unit (one instruction)
    // Local buffers, per byte read or written, each priced at its preset size.
    Param<double> l1_pj_per_byte, l0ab_pj_per_byte, l0c_pj_per_byte, ub_pj_per_byte;
    Param<double> mte1_bytes_per_cycle;  // bytes an MTE1 busy cycle moves L1 -> L0A/L0B
    Param<double> aic_clock_pj;          // clock tree and control of an active (ungated) AIC, per cycle
    Param<double> aiv_clock_pj;          // the same for an AIV
    Param<double> l2_pj_per_byte;        // L2 slice access and NoC crossing, per byte
    Param<double> hbm_activate_pj;       // per activate (with its precharge)
    Param<double> hbm_read_pj_per_bit, hbm_write_pj_per_bit;  // column access, TSVs and I/O
    Param<double> hbm_refresh_pj;                             // per refresh command the DRAM model issues
    Param<double> host_link_pj_per_byte;                      // the host link (PCIe)
    // Static power at the nominal voltage.
    Param<double> aic_leakage_w, aiv_leakage_w;
    Param<double> l2_leakage_w_per_mib;
    Param<double> hbm_background_w_per_stack;
    Param<double> uncore_w;  // always-on rest of the SoC: control CPUs, NoC, PHYs, task scheduler

    double dyn_scale() const { return (voltage_v / nominal_voltage_v) * (voltage_v / nominal_voltage_v); }
    double leak_scale() const { return voltage_v / nominal_voltage_v; }
};

}  // namespace sfumato::power
