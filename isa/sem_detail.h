// Internal helpers shared by the semantics files (isa/sem_*.cpp): operand geometry of vector
// instructions, burst sizes, and the per-class entry points the dispatcher in semantics.cpp
// calls. Not part of the ISA's public interface.
#pragma once
#include <cstdint>
#include <string>

#include "isa/semantics.h"

namespace sfumato::isa::detail {

constexpr uint64_t kBlock = 32;

inline uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

// Fractals one load2d repeat moves: a square of two (1- and 4-byte transposes) or four (int4: 64 x 64
// nibbles, four 16 x 64 fractals stacked), else one.
inline uint32_t load2d_fractals(const Instr& in) { return !load2d_squares(in) ? 1 : in.dtype == DType::INT4 ? 4 : 2; }

// Vector class helpers.
bool is_vector_compute(Opcode op);
std::string validate_vector(const Instr& in);
int footprint_vector(const Instr& in, Extent out[kMaxExtents]);
void exec_vector(const Instr& in, IMemView& mem);

// Sorts and the block gather (VBITSORT, VMRGSORT4, VGATHERB; isa/sem_sort.cpp), reached through the
// vector entry points above.
bool is_sort_kind(VecKind k);
std::string validate_sort(const Instr& in);
int footprint_sort(const Instr& in, Extent out[kMaxExtents]);
void exec_sort(const Instr& in, IMemView& mem);

// VNCHWCONV (isa/sem_nchw.cpp), dispatched before the vector class.
std::string validate_nchw(const Instr& in);
int footprint_nchw(const Instr& in, Extent out[kMaxExtents]);
void exec_nchw(const Instr& in, IMemView& mem);

// Data movement (copies, ND2NZ, load2d, load3d, fill).
std::string validate_move(const Instr& in);
int footprint_move(const Instr& in, Extent out[kMaxExtents]);
void exec_move(const Instr& in, IMemView& mem);

// Cube mad and FixPipe.
std::string validate_cube(const Instr& in);
int footprint_cube(const Instr& in, Extent out[kMaxExtents]);
void exec_cube(const Instr& in, IMemView& mem);

// Scalar loads, stores and data-cache maintenance of global memory.
bool is_scalar_mem(Opcode op);
std::string validate_scalar_mem(const Instr& in);
int footprint_scalar_mem(const Instr& in, Extent out[kMaxExtents]);
void exec_scalar_mem(const Instr& in, IMemView& mem);

inline std::string bad_dtype(const Instr& in, DType t) {
    return std::string("dtype ") + dtype_name(t) + " not supported by " + opcode_name(in.op);
}
inline std::string bad_pos(const Instr& in, const char* operand, Pos p) {
    return std::string(operand) + " in " + pos_name(p) + " not allowed for " + opcode_name(in.op);
}

}  // namespace sfumato::isa::detail
