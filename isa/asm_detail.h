// Internal to the assembler and disassembler (isa/asm.cpp, isa/asm_fields.cpp): the parameter field
// table both directions use, and the address-operand rules of the text form. Not part of the ISA's
// public interface.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "isa/instr.h"

namespace sfumato::isa::asm_detail {

enum class FT : uint8_t { U, DT, RM, CM, QM, SR };
struct Field {
    const char* key;
    ParamKind kind;
    FT type;
    size_t off, size;
};

// Every parameter field of every instruction class, one row each (asm_fields.cpp).
extern const Field kFields[];
extern const size_t kNumFields;

uint64_t get_field(const Instr& in, const Field& f);
void set_field(Instr& in, const Field& f, uint64_t v);
std::string field_text(const Field& f, uint64_t v);
// The address operands an opcode's text names, in order: scalar loads name their source only,
// scalar stores and DCCI their destination only; everything else dst, src0, src1, src2.
int addr_slots(const Instr& in, const Addr* out[4]);
// Address operands an opcode always prints (more when a later one is not the default).
int required_addrs(Opcode op);
// True if the 128-bit mask is a prefix of `count` lanes.
bool prefix_mask(uint64_t lo, uint64_t hi, int& count);

}  // namespace sfumato::isa::asm_detail
