// The compute part of an elementwise kernel as data: a straight-line list of vector steps over
// tile-sized registers in UB, planned on the host and replayed by the device kernel for every
// tile (runtime/ops/ew/kernel.cpp). A register is a Tile (one value per element of the tile),
// a Block (one 32-byte block holding a single value, read with block and repeat stride 0: the
// "stride-0 read" of a scalar operand) or Bits (a compare result, one bit per element).
// Inputs arrive in their storage type (Tile) or already converted (Block); the Builder inserts
// the conversions, folds plan-time constants into vector-scalar instructions (the "scalar
// operand" form) or constant Blocks, and allocates temporaries to a few UB slots by liveness.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "isa/instr.h"
#include "runtime/ref/host_tensor.h"

namespace sfumato::ops::ew {

enum class RegKind : uint8_t { Tile, Block, Bits };
enum class RegSrc : uint8_t { Temp, Input, Const, Out };

struct RegInfo {
    RegKind kind = RegKind::Tile;
    RegSrc src = RegSrc::Temp;
    isa::DType dt = isa::DType::FP32;
    int input = -1;    // RegSrc::Input: the kernel input it holds
    double value = 0;  // RegSrc::Const: the value of a constant Block
    int slot = -1;     // RegSrc::Temp: UB slot (after allocation)
};

// One vector instruction (repeated over the tile). dst = op(a, b) with scalar, or for VSEL
// dst = bit(sel) ? a : b; VCONV converts a to dst's type with `round`.
struct Step {
    isa::Opcode op = isa::Opcode::NOP;
    int dst = -1, a = -1, b = -1, sel = -1;
    double scalar = 0;
    isa::CmpMode cmp = isa::CmpMode::EQ;
    isa::RoundMode round = isa::RoundMode::RINT;
};

struct Program {
    std::vector<RegInfo> regs;
    std::vector<Step> steps;
    std::vector<int> input_reg;        // per kernel input: its register, -1 = folded or unused
    int out = -1;                      // the output register (RegSrc::Out)
    std::vector<uint32_t> slot_bits;   // per temp slot: bits per tile element (8 * size, or 1 for Bits)
    std::string text() const;          // one line per step, for tests and describe()
};

// A value during building: a register, or a plan-time constant.
struct Val {
    int reg = -1;
    bool imm = false;
    double v = 0;
    isa::DType dt = isa::DType::FP32;  // an immediate's type (a register's is in Program::regs)
};

enum class InKind : uint8_t { Tile, Block, Imm };
struct InputDesc {
    isa::DType storage = isa::DType::FP32;
    ref::ElemType elem = ref::ElemType::Float;
    InKind kind = InKind::Tile;
    double imm = 0;       // InKind::Imm: the value
    bool present = true;  // false: an omitted optional input
};

class Builder {
public:
    Builder(std::vector<InputDesc> inputs, isa::DType out_storage);

    // Input i as type `want` (a conversion for Tiles; Blocks are delivered converted; Imms are
    // rounded to `want`). Each Block input must be asked for in one type only.
    Val in(int i, isa::DType want);
    const InputDesc& input(int i) const { return m_in.at(static_cast<size_t>(i)); }
    isa::DType type_of(const Val& v) const;
    static Val imm(double x, isa::DType t);  // an immediate of type t (value rounded to it)

    Val conv(const Val& x, isa::DType to, isa::RoundMode r = isa::RoundMode::RINT);
    // dst = a op b for VADD VSUB VMUL VDIV VMAX VMIN VAND VOR; immediates become vector-scalar
    // instructions where the ISA has one, else constant Blocks.
    Val bin(isa::Opcode op, const Val& a, const Val& b);
    Val un(isa::Opcode op, const Val& a);                // VEXP VLN VSQRT VRSQRT VREC VABS VRELU VNOT
    Val scal(isa::Opcode op, const Val& a, double s);    // VADDS VMULS VMAXS VMINS VLRELU
    Val cmp(isa::CmpMode m, const Val& a, const Val& b); // Bits
    Val sel(const Val& bits, const Val& a, const Val& b);
    Val copy(const Val& a);                              // a fresh Tile with a's values
    Val const_block(double v, isa::DType t);

    // Ends the program: converts `result` to the output's storage type, writes it into the
    // output register and allocates temporaries.
    Program finish(const Val& result, isa::RoundMode r = isa::RoundMode::RINT);

private:
    int new_reg(RegKind k, isa::DType t, RegSrc s = RegSrc::Temp);
    int emit(const Step& s);
    Val block_of(const Val& imm, isa::DType t);
    void allocate();

    std::vector<InputDesc> m_in;
    isa::DType m_out;
    Program m_p;
    std::vector<std::pair<int, isa::DType>> m_block_in;  // Block inputs: (input, type asked)
};

// Value of x rounded to type t (floats round to nearest even, integers truncate and saturate as
// a VCONV would).
double round_to(double x, isa::DType t);
bool is_float_dt(isa::DType t);

}  // namespace sfumato::ops::ew
