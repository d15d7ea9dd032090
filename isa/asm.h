// Text assembly for the AI core's ISA: one instruction per line, for microbenchmarks, tests and
// recorded streams. Syntax:
//   mnemonic[.dtype] operand, operand, ..., key=value, ...
//   vadd.fp16 ub[0x0], ub[0x100], ub[0x200], repeat=8, mask=128, dstrep=8
//   set_flag MTE2, V, 0          wait_flag MTE2, V, 0          pipe_barrier ALL
//   set_cross_flag FIX, 2, 3     (pipe, mode, flag id)
// Operands are addresses pos[expr] in the order dst, src0, src1, src2 (pos: gm l1 l0a l0b l0c
// ub bt fb); trailing operands left out keep make_instr()'s defaults. Keys set parameter fields
// (see asm.cpp's field table), plus scalar=<number> and pipe=<PIPE>; omitted fields keep their
// defaults. mask=N is a continuous mask of N lanes, mask=0xHI:0xLO a 128-bit lane mask; without
// mask= a vector instruction takes the mask last set by set_mask (all lanes at the start), like
// the chip's mask register. The disassembler always prints mask= for vector instructions.
// Comments start with # or //. Programs are bounded (AsmLimits). Directives: .set NAME expr (integer constant), .rep N [, VAR]
// ... .endr (nestable; VAR counts 0..N-1 inside). Integer values are expressions over + - * / %
// and parentheses with decimal or 0x numbers and names.
// disassemble() prints the canonical form: assemble(disassemble(i)) == i for every valid Instr
// (issue_cycle and seq are not part of the text).
#pragma once
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "isa/instr.h"

namespace sfumato::isa {

// Limits of one program (after .rep expansion), so that no text can take unbounded time or
// memory to assemble: instructions, lines processed (directives included), .rep nesting and
// expression nesting. The defaults are what `sfumato asm` uses.
struct AsmLimits {
    size_t max_instructions = size_t{1} << 20;
    uint64_t max_line_visits = uint64_t{1} << 22;
    int max_rep_depth = 64;
    int max_expr_depth = 256;
};

class AsmError : public std::runtime_error {
public:
    AsmError(int line, const std::string& token, const std::string& what)
        : std::runtime_error("line " + std::to_string(line) + ": " + what + " at '" + token + "'"),
          m_line(line),
          m_token(token) {}
    int line() const { return m_line; }
    const std::string& token() const { return m_token; }

private:
    int m_line;
    std::string m_token;
};

// Assembles a program; throws AsmError naming the line (1-based) and the offending token.
// Instructions are also checked with validate().
std::vector<Instr> assemble(const std::string& text, const AsmLimits& limits = {});
std::string disassemble(const Instr& in);
// One instruction per line.
std::string disassemble(const std::vector<Instr>& prog);

}  // namespace sfumato::isa
