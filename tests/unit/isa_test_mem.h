// Test helper: an IMemView over plain byte arrays (one per local buffer, one for GM) that
// bounds-checks every access, so a wrong footprint or stride shows up as an exception.
#pragma once
#include <cstring>
#include <stdexcept>
#include <vector>

#include "isa/semantics.h"

namespace sfumato::isa::test {

struct TestMem : IMemView {
    std::vector<uint8_t> buf[static_cast<int>(Pos::kCount)];
    explicit TestMem(uint64_t local_size = 256 * 1024, uint64_t gm_size = 1 << 20) {
        for (auto& b : buf) b.assign(local_size, 0);
        buf[0].assign(gm_size, 0);
    }
    std::vector<uint8_t>& of(Pos p) { return buf[static_cast<int>(p)]; }
    uint8_t* local(Pos pos, uint64_t addr, uint64_t len) override {
        if (pos == Pos::GM) throw std::logic_error("local() on GM");
        return check(pos, addr, len);
    }
    void gm_read(uint64_t addr, void* dst, uint64_t len) override {
        std::memcpy(dst, check(Pos::GM, addr, len), len);
    }
    void gm_write(uint64_t addr, const void* src, uint64_t len) override {
        std::memcpy(check(Pos::GM, addr, len), src, len);
    }
    uint8_t* check(Pos pos, uint64_t addr, uint64_t len) {
        auto& b = of(pos);
        if (addr + len > b.size()) throw std::out_of_range("access past buffer end");
        return b.data() + addr;
    }
    template <class T>
    T get(Pos p, uint64_t addr) const {
        T v;
        std::memcpy(&v, buf[static_cast<int>(p)].data() + addr, sizeof v);
        return v;
    }
    template <class T>
    void put(Pos p, uint64_t addr, T v) {
        std::memcpy(of(p).data() + addr, &v, sizeof v);
    }
    // Element of type t as a double.
    double val(Pos p, uint64_t addr, DType t) { return load_f64(t, of(p).data() + addr); }
    void set(Pos p, uint64_t addr, DType t, double v) { store_f64(t, of(p).data() + addr, v); }
};

inline Addr at(Pos p, uint64_t a) { return Addr{a, p}; }

}  // namespace sfumato::isa::test
