// Functional semantics of the ISA: pure functions over byte buffers, no timing and no SystemC.
// A core (or a unit test) supplies an IMemView that maps an operand's (position, address,
// length) to bytes; footprint() reports the byte ranges an instruction reads and writes, which
// the model uses for bounds checks and race detection.
#pragma once
#include <cstdint>
#include <string>

#include "isa/instr.h"

namespace sfumato::isa {

class IMemView {
public:
    virtual ~IMemView() = default;
    // Contiguous bytes [addr, addr+len) of a local buffer; the caller has bounds-checked.
    virtual uint8_t* local(Pos pos, uint64_t addr, uint64_t len) = 0;
    virtual void gm_read(uint64_t addr, void* dst, uint64_t len) = 0;
    virtual void gm_write(uint64_t addr, const void* src, uint64_t len) = 0;
};

struct Extent {
    Pos pos = Pos::GM;
    uint64_t lo = 0, hi = 0;  // [lo, hi)
    bool write = false;
};

// Up to kMaxExtents byte ranges an instruction touches (conservative hull per operand).
constexpr int kMaxExtents = 5;  // vmrgsort4: four lists and dst
int footprint(const Instr& in, Extent out[kMaxExtents]);

// Bytes moved to/from global memory by a data-movement instruction (0 for others).
uint64_t gm_bytes(const Instr& in);

// Applies an instruction's effect. Throws std::invalid_argument for malformed operands
// (bad repeat, unsupported dtype for the opcode).
void execute(const Instr& in, IMemView& mem);

// Checks operand fields that do not depend on buffer sizes; returns "" when valid.
std::string validate(const Instr& in);

// Scalar-unit state the scalar/system-register instructions read and write.
struct ScalarState {
    uint64_t x[32] = {};
    uint32_t block_idx = 0, block_num = 1, sub_block_id = 0;
    uint64_t sys_cnt = 0;  // the core's cycle counter, kept current by the caller
    uint64_t mask_lo = ~0ull, mask_hi = ~0ull;
};
// Applies GET_SYSREG and SET_MASK (other opcodes leave the state unchanged).
void execute_scalar(const Instr& in, ScalarState& st);
// The same, plus LD_GM (reads global memory through mem into x[xd]).
void execute_scalar(const Instr& in, ScalarState& st, IMemView& mem);
// The value an LD_GM reads: the element's raw bits, zero-extended. ST_GM's store is execute()'s.
uint64_t load_scalar(const Instr& in, IMemView& mem);

// VREDUCEV2 (GatherMask) with a built-in pattern 1..7: whether element e of a repeat is kept.
bool gathermask_pattern_bit(uint32_t pattern, uint64_t e);

// Bytes an MTE/FIX/load instruction moves (read side); 0 for compute and sync instructions.
uint64_t moved_bytes(const Instr& in);

// VMRGSORT4's configuration (isa/README.md): the four list lengths in 8-byte structures (mask_lo, 16
// bits each), the valid lists (3, 7 or 15: the first 2, 3 or 4; mask_hi bits 0..3), exhausted suspension
// (mask_hi bit 4: stop when a list runs out); list 3's UB address is Instr::scalar.
struct MrgSort4Config {
    uint16_t len[4] = {0, 0, 0, 0};
    uint8_t valid = 15;
    bool exhausted = false;
};
MrgSort4Config mrgsort4_config(const Instr& in);
void set_mrgsort4_config(Instr& in, const MrgSort4Config& c, uint64_t list3_addr);
// Lists a valid-bits value enables (0 for a value other than 3, 7, 15).
uint32_t mrgsort4_lists(uint8_t valid);
// One repeat of VMRGSORT4 on host bytes: merges the valid lists (lists[i]: c.len[i] structures) into dst
// (skipped when null), sets consumed[i] to the structures taken from list i (the chip's VMS4_SR) and
// returns the structures written.
uint64_t mrgsort4_merge(DType score, const uint8_t* const lists[4], const MrgSort4Config& c, uint8_t* dst,
                        uint32_t consumed[4]);

// VNCHWCONV's address lists (isa/instr.h): the UB byte address of source i and of destination j (before the
// repeat strides), and setting all 32 from byte addresses (multiples of 32 below 1 MiB: "" or what is
// wrong; the four address operands become the packed source list, in UB).
uint64_t nchw_src_addr(const Instr& in, int i);
uint64_t nchw_dst_addr(const Instr& in, int j);
std::string set_nchw_lists(Instr& in, const uint64_t dst[kNchwList], const uint64_t src[kNchwList]);

// Number of lanes in one 256-byte repeat for a dtype.
constexpr uint32_t lanes_per_repeat(DType t) { return 256 / dtype_size(t); }

}  // namespace sfumato::isa
