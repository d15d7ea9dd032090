// Energy and power from counted events (docs/energy.md). The model prices what the simulation
// already counts: busy cycles of every pipe of every core (the cube's MACs, the vector unit's
// repeats, the scalar unit's instructions, MTE1's L1 -> L0 moves), the bytes each requester moved
// between GM and the local buffers, L2 traffic, HBM activates, bursts and refreshes, link and
// the host link's bytes, and the cycles each core ran a block (clock-gated otherwise); static power is
// leakage per core kind, L2 leakage per MiB, HBM background per stack and the always-on uncore.
// It is a first-order activity model: a busy cycle of a unit costs the same whatever it computes,
// except the cube's, priced per MAC of its input type (fp16/bf16, fp32, int8, int4: a busy cycle
// does m0 x n0 x k0 of them, k0 by type), and the vector unit's, priced per busy cycle of its op
// class (simple arithmetic and logic, transcendental, reduction and sort, data movement and
// cast); nothing in it depends on a workload. Plain C++: events come from
// the stats tree (chip-wide, after a run) or from a task's counters (one kernel).
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "models/power/power_params.h"
#include "sim/device_if.h"
#include "sim/stats.h"

namespace sfumato {
struct ChipParams;
}

namespace sfumato::power {

enum class Event : uint8_t {
    CubeBusy,                  // cycles, summed over cores (every input type)
    CubeBusyFp32,              // the part of them on MADs of fp32 inputs
    CubeBusyInt8,              // ... of int8 inputs
    CubeBusyInt4,              // ... of int4 inputs (the rest: 16-bit inputs)
    VectorBusy,                // cycles (every op class)
    VectorBusyTranscendental,  // the part of them on exp, ln, sqrt, rsqrt, reciprocal, div
    VectorBusyReduce,          // ... on reductions and sorts
    VectorBusyMove,            // ... on data movement and casts (the rest: simple arithmetic and logic)
    ScalarBusy,                // cycles
    Mte1Busy,                  // cycles
    // Bytes moved between GM and a local buffer (MTE2, MTE3 and FixPipe requests), by the buffer
    // they are written into or read out of: each core's MTE2 and MTE3 count them by the copy's
    // local side (chip/<core>/mte2/{l1,ub}_bytes), FixPipe's are the L2's fix requester's.
    L1GmBytes,   // GM -> L1 (and MTE2's straight GM -> L0A/L0B loads), L1 -> GM
    UbGmBytes,   // GM -> UB, UB -> GM
    L0cGmBytes,  // L0C -> GM (FixPipe)
    AicActive,   // core-cycles an AIC (or coupled core) ran a block
    AivActive,   // core-cycles an AIV ran a block
    L2Bytes,     // bytes the L2 served or took (requests, fills from HBM, write-backs)
    HbmActivates,
    HbmReadBytes,
    HbmWriteBytes,
    HbmRefreshes,
    HostLinkBytes,  // bytes over the host link (PCIe); chip-to-chip links: link_energy.h
    kCount
};
constexpr size_t kNumEvents = static_cast<size_t>(Event::kCount);
const char* event_name(Event e);

struct Events {
    std::array<double, kNumEvents> n{};
    double& operator[](Event e) { return n[static_cast<size_t>(e)]; }
    double operator[](Event e) const { return n[static_cast<size_t>(e)]; }
};

// Energy by component, in joules.
struct Breakdown {
    double cube = 0, vector = 0, scalar = 0, core_clock = 0;  // core dynamic
    double l1 = 0, l0ab = 0, l0c = 0, ub = 0;                 // local buffers (L0ab: the L0A and the L0B)
    double l2 = 0, hbm = 0, host_link = 0;                    // memory and I/O dynamic
    double leakage = 0, hbm_background = 0, uncore = 0;       // static
    double buffers() const { return l1 + l0ab + l0c + ub; }
    double dynamic() const { return cube + vector + scalar + buffers() + core_clock + l2 + hbm + host_link; }
    double static_j() const { return leakage + hbm_background + uncore; }
    double total() const { return dynamic() + static_j(); }
    // (name, joules) in a fixed order, for reports.
    std::vector<std::pair<std::string, double>> items() const;
};

// The chip's shape as the model needs it.
struct ChipShape {
    double aic = 0, aiv = 0;         // cores of each kind (a coupled core counts as one AIC and one AIV)
    double cube_macs_per_cycle = 0;  // fp16 MACs per cube busy cycle
    double cube_macs_fp32 = 0, cube_macs_int8 = 0, cube_macs_int4 = 0;  // the same for other inputs
    // Local-buffer bytes a cube busy cycle moves: an m0 x k0 fp16 fractal of L0A and a k0 x n0 one
    // of L0B read; an m0 x n0 fp32 accumulator of L0C read and written.
    double cube_l0ab_bytes_per_cycle = 0, cube_l0c_bytes_per_cycle = 0;
    double l2_mib = 0;
    double hbm_stacks = 0;
    double clock_hz = 0;
    bool coupled = false;  // one core has the cube and the vector unit (AivActive unused)
};
ChipShape chip_shape(const ChipParams& p);

class EnergyModel {
public:
    EnergyModel(const PowerParams& p, ChipShape shape) : m_p(p), m_shape(shape) {}
    // Dynamic energy of counted events.
    Breakdown dynamic(const Events& e) const;
    // Static power of the whole chip (W): leakage of every core, the L2, HBM background, uncore.
    Breakdown static_power() const;
    // Events and `seconds` of time: dynamic plus static energy over that time.
    Breakdown energy(const Events& e, double seconds) const;
    const PowerParams& params() const { return m_p; }
    const ChipShape& shape() const { return m_shape; }

private:
    const PowerParams& m_p;
    ChipShape m_shape;
};

// Chip-wide events from a chip's stats group (`chip`), read after the run: pipe busy cycles of
// every core, L2 requester bytes, HBM commands, links; `total_cycles` turns the task scheduler's
// core occupancy into active core-cycles.
Events chip_events(const StatGroup& chip, double total_cycles);
// One kernel's pipe busy cycles, from its task (exact per kernel).
Events kernel_events(const Task& t);

}  // namespace sfumato::power
