// A small direct-mapped cache keyed by an instruction's architectural value (opcode, operands,
// parameters; not its issue cycle or sequence number). Kernels issue the same few instructions
// over and over, so per-instruction work that depends only on the instruction (operand checks,
// latency with bank conflicts) is done once per distinct instruction, not once per issue.
#pragma once
#include <array>
#include <cstddef>

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

}  // namespace sfumato
