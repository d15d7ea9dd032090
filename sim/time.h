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

// A clock domain whose period is an exact rational number of ps (num / den, reduced), so every
// configured frequency is represented exactly: 1800 MHz is 5000/9 ps, not a rounded 556 ps.
// Cycle c of the domain starts at tick ceil(c * num / den): edges are within 1 ps of their exact
// time and the error never accumulates, so n cycles always last n / f to the picosecond, and
// cycles, times and peaks computed from the frequency agree. Durations in cycles convert with
// ticks(n) (the same rounding as an edge at n); a tick converts back with ceil_cycle/floor_cycle.
class ClockDomain {
public:
    constexpr ClockDomain() = default;
    // An integer period in ps.
    constexpr explicit ClockDomain(uint64_t period_ps) : ClockDomain(period_ps, 1) {}
    // The clock of a frequency in MHz, exactly.
    static constexpr ClockDomain from_mhz(uint64_t mhz) {
        const uint64_t g = gcd(1000000, mhz);
        return ClockDomain(1000000 / g, mhz / g);
    }
    constexpr Tick to_tick(Cycle c) const { return Tick(ticks(c.v)); }
    // Duration of n cycles in ps (the edge of cycle n of a domain started at tick 0).
    constexpr uint64_t ticks(uint64_t n) const {
        if (m_den == 1) return n * m_num;
        if (n <= m_n_safe) return (n * m_num + m_den - 1) / m_den;
        return static_cast<uint64_t>((static_cast<unsigned __int128>(n) * m_num + m_den - 1) / m_den);
    }
    // The first cycle edge at or after t.
    constexpr Cycle ceil_cycle(Tick t) const {
        if (t.v == 0) return Cycle(0);
        if (m_den == 1) return Cycle((t.v + m_num - 1) / m_num);
        if (t.v <= m_t_safe) return Cycle((t.v - 1) * m_den / m_num + 1);
        return Cycle(static_cast<uint64_t>((static_cast<unsigned __int128>(t.v - 1) * m_den) / m_num) + 1);
    }
    // The last cycle edge at or before t.
    constexpr Cycle floor_cycle(Tick t) const {
        if (m_den == 1) return Cycle(t.v / m_num);
        if (t.v <= m_t_safe) return Cycle(t.v * m_den / m_num);
        return Cycle(static_cast<uint64_t>((static_cast<unsigned __int128>(t.v) * m_den) / m_num));
    }
    // Whole cycles in a duration of ps (rounded down), for statistics.
    constexpr uint64_t cycles_in(uint64_t ps) const { return floor_cycle(Tick(ps)).v; }
    // Exact duration of n cycles in microseconds (reports: cycles / f, no rounding to the ps).
    double to_us(uint64_t n) const {
        return static_cast<double>(n) * static_cast<double>(m_num) / (static_cast<double>(m_den) * 1e6);
    }
    double freq_ghz() const { return 1000.0 * static_cast<double>(m_den) / static_cast<double>(m_num); }
    // Exact period as a fraction of ps.
    constexpr uint64_t period_num_ps() const { return m_num; }
    constexpr uint64_t period_den() const { return m_den; }

private:
    constexpr ClockDomain(uint64_t num, uint64_t den)
        : m_num(num), m_den(den), m_n_safe((~uint64_t(0) - den) / num), m_t_safe(~uint64_t(0) / den) {}
    static constexpr uint64_t gcd(uint64_t a, uint64_t b) { return b == 0 ? a : gcd(b, a % b); }
    uint64_t m_num = 1000;  // period = m_num / m_den ps
    uint64_t m_den = 1;
    uint64_t m_n_safe = ~uint64_t(0) / 1000;  // largest n (t) whose product with m_num (m_den) fits 64 bits
    uint64_t m_t_safe = ~uint64_t(0);
};

}  // namespace sfumato
