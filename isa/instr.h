// The instruction set of a DaVinci-style AI core, as the pipes see it: one compact POD per
// instruction (no heap), tagged with the pipe that executes it. The scalar unit issues these
// into per-pipe in-order queues; functional semantics live in isa/semantics.h.
#pragma once
#include <cstdint>

#include "isa/dtype.h"

namespace sfumato::isa {

// Pipes of a core. S = scalar; ALL only names "every pipe" in barriers.
enum class Pipe : uint8_t { S, MTE1, MTE2, MTE3, M, FIX, V, ALL, kCount };
constexpr int kNumPipes = static_cast<int>(Pipe::ALL);
const char* pipe_name(Pipe p);
bool parse_pipe(const char* s, Pipe& out);

// Storage positions (buffers) an operand can live in.
enum class Pos : uint8_t { GM, L1, L0A, L0B, L0C, UB, BT, FB, kCount };
const char* pos_name(Pos p);

enum class Opcode : uint16_t {
    NOP,
    // sync
    SET_FLAG,      // flag: src pipe, dst pipe, event id (executes in src pipe)
    WAIT_FLAG,     // executes in dst pipe
    PIPE_BARRIER,  // orders one pipe (executes in that pipe)
    // data movement
    COPY_GM_TO_UB,  // MTE2, burst mode (copy params)
    COPY_UB_TO_GM,  // MTE3, burst mode
    COPY_UB_TO_UB,  // V
    // vector binary
    VADD, VSUB, VMUL, VDIV, VMAX, VMIN,
    kCount
};
const char* opcode_name(Opcode op);
bool parse_opcode(const char* s, Opcode& out);

struct Addr {
    uint64_t addr = 0;
    Pos pos = Pos::GM;
};

// Vector instruction parameters: repeats of 256 B, each of 8 blocks of 32 B.
// Strides in 32 B blocks; mask either a continuous count or a 128-bit lane mask.
struct VecParams {
    uint16_t repeat = 1;  // 1..255
    uint16_t dst_blk_stride = 1, src0_blk_stride = 1, src1_blk_stride = 1;
    uint16_t dst_rep_stride = 8, src0_rep_stride = 8, src1_rep_stride = 8;
    uint64_t mask_lo = ~0ull, mask_hi = ~0ull;  // bit i = lane i of each repeat
};

// Burst-mode copy: nburst bursts of len_bytes each; gaps between bursts in 32 B blocks at
// the local side and in bytes at the GM side. Local-side bursts are padded to 32 B.
struct CopyParams {
    uint32_t nburst = 1;
    uint32_t len_bytes = 0;
    uint32_t src_gap = 0;
    uint32_t dst_gap = 0;
};

struct FlagParams {
    Pipe src = Pipe::S;
    Pipe dst = Pipe::S;
    uint8_t event_id = 0;
};

struct Instr {
    Opcode op = Opcode::NOP;
    Pipe pipe = Pipe::S;
    DType dtype = DType::FP16;
    Addr dst, src0, src1;
    union {
        VecParams vec;
        CopyParams copy;
        FlagParams flag;
    };
    double scalar = 0.0;      // vector-scalar operand
    uint64_t issue_cycle = 0; // scalar cycle at which it entered its pipe queue (set by the core)
    uint32_t seq = 0;         // program order within the block (set by the core)

    Instr() : vec() {}
};

// Which pipe executes an opcode (for the data-movement and compute classes it is fixed).
Pipe default_pipe(Opcode op);

}  // namespace sfumato::isa
