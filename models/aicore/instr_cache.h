// A small direct-mapped cache keyed by an instruction's architectural value (opcode, operands,
// parameters; not its issue cycle or sequence number). Kernels issue the same few instructions
// over and over, so per-instruction work that depends only on the instruction (operand checks,
// latency with bank conflicts) is done once per distinct instruction, not once per issue.
// InstrMemo: a larger one behind it, shared by the cores whose per-instruction work is the same
// function of the instruction (the cores of one kind on a chip), asked when a core's own misses:
// a tile loop with double buffers has more distinct instructions than the small cache holds, and
// every block of a launch issues the same local-buffer instructions on its own core.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "isa/instr.h"

namespace sfumato {

template <class V, size_t N = 16>
class InstrCache {
public:
    // key: the instruction first put, equal to every one found with it (isa::operator==).
    struct Entry {
        isa::Instr key;
        V value{};
        bool valid = false;
    };
    const Entry* find(const isa::Instr& in) const {
        const Entry& e = m_entries[slot(in)];
        return e.valid && e.key == in ? &e : nullptr;
    }
    const Entry& put(const isa::Instr& in, const V& v) {
        Entry& e = m_entries[slot(in)];
        e.key = in;
        e.value = v;
        e.valid = true;
        return e;
    }

private:
    static size_t slot(const isa::Instr& in) {
        return (static_cast<size_t>(in.op) * 31 + (in.dst.addr >> 5) + (in.src0.addr >> 5) * 7 + (in.src1.addr >> 5) * 13) % N;
    }
    std::array<Entry, N> m_entries;
};

template <class V, unsigned Log2N = 12>
class InstrMemo {
public:
    InstrMemo() : m_entries(size_t{1} << Log2N) {}
    const V* find(const isa::Instr& in) const {
        const Entry& e = m_entries[slot(in)];
        return e.valid && e.key == in ? &e.value : nullptr;
    }
    void put(const isa::Instr& in, const V& v) {
        Entry& e = m_entries[slot(in)];
        e.key = in;
        e.value = v;
        e.valid = true;
    }

private:
    struct Entry {
        isa::Instr key;
        V value{};
        bool valid = false;
    };
    // Fields every opcode's equality compares (equal instructions land in one slot); a parameter
    // block's bytes are not read, since equal instructions may differ in those a class leaves unused.
    static size_t slot(const isa::Instr& in) {
        constexpr uint64_t k = 0x9e3779b97f4a7c15ull;
        uint64_t h = static_cast<uint64_t>(in.op) | static_cast<uint64_t>(in.dtype) << 16;
        h = (h ^ in.dst.addr) * k;
        h = (h ^ (h >> 29) ^ in.src0.addr) * k;
        h = (h ^ (h >> 29) ^ in.src1.addr) * k;
        h = (h ^ (h >> 29) ^ in.src2.addr) * k;
        return static_cast<size_t>(h >> (64 - Log2N));
    }
    std::vector<Entry> m_entries;
};

}  // namespace sfumato
