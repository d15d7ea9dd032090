// Internal to the vector semantics (isa/sem_vector.cpp, isa/sem_vector_special.cpp): lane geometry of a
// vector instruction's operands and the entry points of the special instructions (VCI, VCPADD,
// VREDUCEV2), which have their own operand shapes. Not part of the ISA's public interface.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>

#include "isa/sem_detail.h"

namespace sfumato::isa::detail {

inline DType src_type(const Instr& in) { return in.op == Opcode::VCONV ? in.vec.src_dtype : in.dtype; }
inline uint32_t lanes_of(const Instr& in) { return 256 / std::max(dtype_size(in.dtype), dtype_size(src_type(in))); }

inline bool lane_on(const VecParams& v, uint32_t lane, uint32_t lanes) {
    const uint32_t bit = lanes > 128 ? lane / 2 : lane;
    return bit < 64 ? ((v.mask_lo >> bit) & 1u) : ((v.mask_hi >> (bit - 64)) & 1u);
}

// Byte offset of lane l of repeat r for an operand of element size es.
// Division-free: es divides 32, so lane l sits in block (l * es) / 32 at byte (l * es) % 32.
inline uint64_t lane_off(uint32_t r, uint32_t l, uint32_t es, uint16_t blk, uint16_t rep) {
    const uint32_t byte = l * es;
    return (static_cast<uint64_t>(r) * rep + static_cast<uint64_t>(byte >> 5) * blk) * kBlock + (byte & 31u);
}

inline Extent strided_extent_bits(const Addr& a, uint32_t bits, uint32_t lanes, uint16_t blk, uint16_t rep,
                           uint16_t repeat, bool write) {
    const uint64_t nblk = round_up(static_cast<uint64_t>(lanes) * bits, kBlock * 8) / (kBlock * 8);
    const uint64_t hi = (static_cast<uint64_t>(repeat - 1) * rep + (nblk - 1) * blk) * kBlock + kBlock;
    return {a.pos, a.addr, a.addr + hi, write};
}
inline Extent strided_extent(const Addr& a, uint32_t es, uint32_t lanes, uint16_t blk, uint16_t rep, uint16_t repeat,
                      bool write) {
    return strided_extent_bits(a, es * 8, lanes, blk, rep, repeat, write);
}

// The operands of one vector instruction, mapped: dst and the sources in footprint order.
struct VecPtrs {
    uint8_t* d = nullptr;
    const uint8_t* s0 = nullptr;
    const uint8_t* s1 = nullptr;
    const uint8_t* s2 = nullptr;
};

// VCI, VCPADD and VREDUCEV2: their checks, footprints and execution.
inline bool is_special_kind(VecKind k) {
    return k == VecKind::Index || k == VecKind::PairRed || k == VecKind::GatherMask;
}
std::string validate_special(const Instr& in);
int footprint_special(const Instr& in, Extent out[kMaxExtents]);
void exec_special(const Instr& in, const VecPtrs& p);

}  // namespace sfumato::isa::detail
