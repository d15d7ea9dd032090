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
#include <cstring>
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
    // A flag's pipes and event id count too: a tile loop's flags differ only there.
    static size_t slot(const isa::Instr& in) {
        const size_t flag = in.op == isa::Opcode::SET_FLAG || in.op == isa::Opcode::WAIT_FLAG
                                ? static_cast<size_t>(in.flag.src) + static_cast<size_t>(in.flag.dst) * 5 + in.flag.event_id * 3
                                : 0;
        return (static_cast<size_t>(in.op) * 31 + flag + (in.dst.addr >> 5) + (in.src0.addr >> 5) * 7 +
                (in.src1.addr >> 5) * 13) %
               N;
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
    // Only fields the equality compares (equal instructions land in one slot): opcode, pipe and
    // dtype, the operands' addresses, and the parameter block's first bytes where its class compares
    // them (every class but NOP's and SET_MASK's; a flag's three bytes), so that flags differing only
    // in their pipes or event id, or copies only in their burst count, do not share a slot.
    static size_t slot(const isa::Instr& in) {
        constexpr uint64_t k = 0x9e3779b97f4a7c15ull;
        uint32_t head = 0, params = 0;
        std::memcpy(&head, &in, sizeof head);
        const isa::ParamKind kind = isa::param_kind(in.op);
        if (kind != isa::ParamKind::None && in.op != isa::Opcode::SET_MASK)
            std::memcpy(&params, &in.vec, kind == isa::ParamKind::Flag ? 3 : 4);
        uint64_t h = (uint64_t{head} | uint64_t{params} << 32) * k;
        h = (h ^ (h >> 29) ^ in.dst.addr) * k;
        h = (h ^ (h >> 29) ^ in.src0.addr) * k;
        h = (h ^ (h >> 29) ^ in.src1.addr) * k;
        h = (h ^ (h >> 29) ^ in.src2.addr) * k;
        return static_cast<size_t>(h >> (64 - Log2N));
    }
    std::vector<Entry> m_entries;
};

}  // namespace sfumato
