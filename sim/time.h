// Simulated time: strong integer types for cycles and picoseconds, and clock domains.
// Models count integer cycles of their own domain; conversion to sc_time happens only at the
// SystemC kernel boundary (sim/sc_time_util.h), so no floating-point time enters a model.
#pragma once
#include <cstdint>
#include <compare>

namespace sfumato {

// Picoseconds since the start of simulation (the kernel's resolution).
struct Tick {
    uint64_t v = 0;
    constexpr Tick() = default;
    constexpr explicit Tick(uint64_t x) : v(x) {}
    constexpr auto operator<=>(const Tick&) const = default;
    constexpr Tick operator+(Tick o) const { return Tick(v + o.v); }
    constexpr Tick operator-(Tick o) const { return Tick(v - o.v); }
    constexpr Tick& operator+=(Tick o) { v += o.v; return *this; }
};

// A count of cycles of some clock domain.
struct Cycle {
    uint64_t v = 0;
    constexpr Cycle() = default;
    constexpr explicit Cycle(uint64_t x) : v(x) {}
    constexpr auto operator<=>(const Cycle&) const = default;
    constexpr Cycle operator+(Cycle o) const { return Cycle(v + o.v); }
    constexpr Cycle operator-(Cycle o) const { return Cycle(v - o.v); }
    constexpr Cycle& operator+=(Cycle o) { v += o.v; return *this; }
};

constexpr Cycle max(Cycle a, Cycle b) { return a < b ? b : a; }
constexpr Tick max(Tick a, Tick b) { return a < b ? b : a; }

// A clock domain: an integer period in ps. Cycle c of the domain starts at tick c * period.
class ClockDomain {
public:
    constexpr ClockDomain() = default;
    constexpr explicit ClockDomain(uint64_t period_ps) : m_period(period_ps) {}
    constexpr uint64_t period_ps() const { return m_period; }
    constexpr Tick to_tick(Cycle c) const { return Tick(c.v * m_period); }
    // The first cycle edge at or after t.
    constexpr Cycle ceil_cycle(Tick t) const { return Cycle((t.v + m_period - 1) / m_period); }
    constexpr Cycle floor_cycle(Tick t) const { return Cycle(t.v / m_period); }
    double freq_ghz() const { return 1000.0 / static_cast<double>(m_period); }

private:
    uint64_t m_period = 1000;
};

// Period in ps of a frequency in MHz, rounded to the nearest ps.
constexpr uint64_t period_ps_from_mhz(uint64_t mhz) { return (1000000 + mhz / 2) / mhz; }

}  // namespace sfumato
