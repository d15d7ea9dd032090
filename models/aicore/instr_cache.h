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
#include <type_traits>
#include <vector>

#include "isa/instr.h"

namespace sfumato {

// One direct-mapped table of (instruction, value) for both: `Slot::of(in)` picks an entry in
// [0, N) from fields the equality compares (equal instructions land in one slot); a slot holds the
// instruction put last. Small tables live inside their owner, large ones on the heap.
template <class V, size_t N, class Slot>
class InstrTable {
public:
    struct Entry {
        isa::Instr key;  // the instruction first put, equal to every one found with it (isa::operator==)
        V value{};
        bool valid = false;
    };
    InstrTable() {
        if constexpr (kHeap) m_entries.resize(N);
    }
    // The entry (it stays as it is until its slot is put again).
    const Entry* find(const isa::Instr& in) const {
        const Entry& e = m_entries[Slot::of(in)];
        return e.valid && e.key == in ? &e : nullptr;
    }
    const Entry& put(const isa::Instr& in, const V& v) {
        Entry& e = m_entries[Slot::of(in)];
        e.key = in;
        e.value = v;
        e.valid = true;
        return e;
    }

private:
    static constexpr bool kHeap = N > 64;
    std::conditional_t<kHeap, std::vector<Entry>, std::array<Entry, N>> m_entries;
};

namespace detail {

// The small cache's slot: cheap, and a tile loop's flags differ only in their pipes and event id,
// so those count too.
template <size_t N>
struct SmallSlot {
    static size_t of(const isa::Instr& in) {
        const size_t flag = in.op == isa::Opcode::SET_FLAG || in.op == isa::Opcode::WAIT_FLAG
                                ? static_cast<size_t>(in.flag.src) + static_cast<size_t>(in.flag.dst) * 5 + in.flag.event_id * 3
                                : 0;
        return (static_cast<size_t>(in.op) * 31 + flag + (in.dst.addr >> 5) + (in.src0.addr >> 5) * 7 +
                (in.src1.addr >> 5) * 13) %
               N;
    }
};

// The memo's slot, a multiplicative hash of only fields the equality compares: opcode, pipe and
// dtype, the operands' addresses, and the parameter block's first bytes where its class compares
// them (every class but NOP's and SET_MASK's; a flag's three bytes), so that flags differing only
// in their pipes or event id, or copies only in their burst count, do not share a slot.
template <unsigned Log2N>
struct HashedSlot {
    static size_t of(const isa::Instr& in) {
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
};

}  // namespace detail

template <class V, size_t N = 16>
using InstrCache = InstrTable<V, N, detail::SmallSlot<N>>;
template <class V, unsigned Log2N = 12>
using InstrMemo = InstrTable<V, size_t{1} << Log2N, detail::HashedSlot<Log2N>>;

}  // namespace sfumato
