#include "models/power/energy_model.h"

#include <algorithm>

#include "models/chip/chip_params.h"

namespace sfumato::power {

const char* event_name(Event e) {
    static const char* const names[kNumEvents] = {"cube_busy_cycles",
                                                  "cube_busy_cycles_fp32",
                                                  "cube_busy_cycles_int8",
                                                  "cube_busy_cycles_int4",
                                                  "vector_busy_cycles",
                                                  "vector_busy_cycles_transcendental",
                                                  "vector_busy_cycles_reduce",
                                                  "vector_busy_cycles_move",
                                                  "scalar_busy_cycles",
                                                  "mte1_busy_cycles",
                                                  "l1_gm_bytes",
                                                  "ub_gm_bytes",
                                                  "l0c_gm_bytes",
                                                  "aic_active_cycles",
                                                  "aiv_active_cycles",
                                                  "l2_bytes",
                                                  "hbm_activates",
                                                  "hbm_read_bytes",
                                                  "hbm_write_bytes",
                                                  "hbm_refreshes",
                                                  "host_link_bytes"};
    return names[static_cast<size_t>(e)];
}

std::vector<std::pair<std::string, double>> Breakdown::items() const {
    return {{"cube", cube},
            {"vector", vector},
            {"scalar", scalar},
            {"l1", l1},
            {"l0a_l0b", l0ab},
            {"l0c", l0c},
            {"ub", ub},
            {"core_clock", core_clock},
            {"l2", l2},
            {"hbm", hbm},
            {"host_link", host_link},
            {"leakage", leakage},
            {"hbm_background", hbm_background},
            {"uncore", uncore}};
}

ChipShape chip_shape(const ChipParams& p) {
    ChipShape s;
    s.coupled = !p.split();
    s.aic = p.cube_cores;
    s.aiv = p.split() ? p.vector_cores() : p.cube_cores;
    const double m0 = p.core.cube_m0, n0 = p.core.cube_n0, k0 = p.core.cube_k0_16bit;
    s.cube_macs_per_cycle = m0 * n0 * k0;
    s.cube_macs_fp32 = m0 * n0 * p.core.cube_k0_fp32;
    s.cube_macs_int8 = m0 * n0 * p.core.cube_k0_int8;
    s.cube_macs_int4 = m0 * n0 * p.core.cube_k0_int4;
    s.cube_l0ab_bytes_per_cycle = (m0 * k0 + k0 * n0) * 2;
    s.cube_l0c_bytes_per_cycle = m0 * n0 * 4 * 2;
    s.l2_mib = p.detailed_mem() ? static_cast<double>(p.mem.l2.size_bytes) / (1 << 20) : 0.0;
    s.hbm_stacks = p.detailed_mem() ? p.mem.hbm.stacks : 0.0;
    s.clock_hz = static_cast<double>(p.clock_mhz) * 1e6;
    return s;
}

Breakdown EnergyModel::dynamic(const Events& e) const {
    constexpr double pj = 1e-12;
    const double v2 = m_p.dyn_scale();
    Breakdown b;
    const double f32 = e[Event::CubeBusyFp32], i8 = e[Event::CubeBusyInt8], i4 = e[Event::CubeBusyInt4];
    const double b16 = std::max(0.0, e[Event::CubeBusy] - f32 - i8 - i4);
    b.cube = (b16 * m_shape.cube_macs_per_cycle * m_p.cube_mac_pj +
              f32 * m_shape.cube_macs_fp32 * m_p.cube_mac_fp32_pj +
              i8 * m_shape.cube_macs_int8 * m_p.cube_mac_int8_pj +
              i4 * m_shape.cube_macs_int4 * m_p.cube_mac_int4_pj) *
             pj * v2;
    const double vt = e[Event::VectorBusyTranscendental], vr = e[Event::VectorBusyReduce],
                 vm = e[Event::VectorBusyMove];
    const double vs = std::max(0.0, e[Event::VectorBusy] - vt - vr - vm);
    b.vector = (vs * m_p.vector_cycle_pj + vt * m_p.vector_transcendental_cycle_pj +
                vr * m_p.vector_reduce_cycle_pj + vm * m_p.vector_move_cycle_pj) *
               pj * v2;
    b.scalar = e[Event::ScalarBusy] * m_p.scalar_cycle_pj * pj * v2;
    // MTE1 reads L1 and writes L0A/L0B; a cube cycle reads L0A and L0B and reads and writes L0C;
    // GM traffic is written into or read out of its buffer once.
    const double mte1 = e[Event::Mte1Busy] * m_p.mte1_bytes_per_cycle, cube = e[Event::CubeBusy];
    b.l1 = (mte1 + e[Event::L1GmBytes]) * m_p.l1_pj_per_byte * pj * v2;
    b.l0ab = (mte1 + cube * m_shape.cube_l0ab_bytes_per_cycle) * m_p.l0ab_pj_per_byte * pj * v2;
    b.l0c = (cube * m_shape.cube_l0c_bytes_per_cycle + e[Event::L0cGmBytes]) * m_p.l0c_pj_per_byte * pj * v2;
    b.ub = e[Event::UbGmBytes] * m_p.ub_pj_per_byte * pj * v2;
    const double aic_clock = m_p.aic_clock_pj + (m_shape.coupled ? m_p.aiv_clock_pj.get() : 0.0);
    b.core_clock =
        (e[Event::AicActive] * aic_clock + (m_shape.coupled ? 0.0 : e[Event::AivActive] * m_p.aiv_clock_pj)) *
        pj * v2;
    b.l2 = e[Event::L2Bytes] * m_p.l2_pj_per_byte * pj * v2;
    b.hbm =
        (e[Event::HbmActivates] * m_p.hbm_activate_pj + e[Event::HbmReadBytes] * 8 * m_p.hbm_read_pj_per_bit +
         e[Event::HbmWriteBytes] * 8 * m_p.hbm_write_pj_per_bit +
         e[Event::HbmRefreshes] * m_p.hbm_refresh_pj) *
        pj;
    b.host_link = e[Event::HostLinkBytes] * m_p.host_link_pj_per_byte * pj;
    return b;
}

Breakdown EnergyModel::static_power() const {
    const double lv = m_p.leak_scale();
    Breakdown b;
    const double aiv = m_shape.coupled ? m_shape.aic : m_shape.aiv;
    b.leakage = (m_shape.aic * m_p.aic_leakage_w + aiv * m_p.aiv_leakage_w +
                 m_shape.l2_mib * m_p.l2_leakage_w_per_mib) *
                lv;
    b.hbm_background = m_shape.hbm_stacks * m_p.hbm_background_w_per_stack;
    b.uncore = m_p.uncore_w * lv;
    return b;
}

Breakdown EnergyModel::energy(const Events& e, double seconds) const {
    Breakdown b = dynamic(e);
    const Breakdown s = static_power();
    b.leakage = s.leakage * seconds;
    b.hbm_background = s.hbm_background * seconds;
    b.uncore = s.uncore * seconds;
    return b;
}

Events kernel_events(const Task& t) {
    Events e;
    auto busy = [&](isa::Pipe p) { return static_cast<double>(t.pipe_busy[static_cast<int>(p)]); };
    e[Event::CubeBusy] = busy(isa::Pipe::M);
    e[Event::VectorBusy] = busy(isa::Pipe::V);
    e[Event::ScalarBusy] = busy(isa::Pipe::S);
    e[Event::Mte1Busy] = busy(isa::Pipe::MTE1);
    return e;
}

}  // namespace sfumato::power
