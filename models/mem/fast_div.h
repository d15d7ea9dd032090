// Division and remainder by a run-time constant for 32-bit numerators (line addresses, which the
// memory system keeps below 2^32), by one 64 x 64 -> 128-bit multiply instead of a hardware divide
// (Lemire, Kaser, Kurz: "Faster remainder by direct computation", 2019). Exact for every 32-bit
// numerator and divisor >= 1. Plain C++ helper for the memory system's hot paths.
#pragma once
#include <cstdint>

namespace sfumato::mem {

class FastDiv32 {
public:
    explicit FastDiv32(uint32_t d = 1) : m_m(~uint64_t(0) / d + 1), m_d(d) {}
    uint32_t div(uint64_t a) const {
        if (m_d == 1) return static_cast<uint32_t>(a);
        return static_cast<uint32_t>((static_cast<U128>(m_m) * static_cast<uint32_t>(a)) >> 64);
    }
    uint32_t mod(uint64_t a) const {
        const uint64_t low = m_m * static_cast<uint32_t>(a);
        return static_cast<uint32_t>((static_cast<U128>(low) * m_d) >> 64);
    }
    uint32_t divisor() const { return m_d; }

private:
    __extension__ typedef unsigned __int128 U128;
    uint64_t m_m;
    uint32_t m_d;
};

// Division by a run-time constant d >= 1 for every 64-bit numerator: the quotient estimated by
// a multiply with floor(2^64 / d) is the true one or one less (n * m / 2^64 > n / d - 1), and the
// remainder tells which. For tick and tCK conversions on the bulk service's per-line path.
class FastDiv64 {
public:
    explicit FastDiv64(uint64_t d = 1) : m_m(d == 1 ? 0 : ~uint64_t(0) / d), m_d(d) {}
    uint64_t div(uint64_t n) const {
        if (m_d == 1) return n;
        uint64_t q = static_cast<uint64_t>((static_cast<U128>(n) * m_m) >> 64);
        if (n - q * m_d >= m_d) ++q;
        return q;
    }
    uint64_t divisor() const { return m_d; }

private:
    __extension__ typedef unsigned __int128 U128;
    uint64_t m_m;
    uint64_t m_d;
};

}  // namespace sfumato::mem
