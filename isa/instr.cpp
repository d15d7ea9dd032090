#include "isa/instr.h"

#include <cstring>

namespace sfumato::isa {

namespace {
constexpr const char* kPipeNames[] = {"S", "MTE1", "MTE2", "MTE3", "M", "FIX", "V", "ALL"};
constexpr const char* kPosNames[] = {"GM", "L1", "L0A", "L0B", "L0C", "UB", "BT", "FB"};
constexpr const char* kOpNames[] = {"nop", "set_flag", "wait_flag", "pipe_barrier",
                                    "copy_gm_to_ub", "copy_ub_to_gm", "copy_ub_to_ub",
                                    "vadd", "vsub", "vmul", "vdiv", "vmax", "vmin"};
static_assert(sizeof(kOpNames) / sizeof(kOpNames[0]) == static_cast<size_t>(Opcode::kCount));
}  // namespace

const char* pipe_name(Pipe p) { return kPipeNames[static_cast<int>(p)]; }
bool parse_pipe(const char* s, Pipe& out) {
    for (int i = 0; i <= kNumPipes; ++i)
        if (std::strcmp(s, kPipeNames[i]) == 0) { out = static_cast<Pipe>(i); return true; }
    return false;
}
const char* pos_name(Pos p) { return kPosNames[static_cast<int>(p)]; }
const char* opcode_name(Opcode op) { return kOpNames[static_cast<int>(op)]; }
bool parse_opcode(const char* s, Opcode& out) {
    for (size_t i = 0; i < static_cast<size_t>(Opcode::kCount); ++i)
        if (std::strcmp(s, kOpNames[i]) == 0) { out = static_cast<Opcode>(i); return true; }
    return false;
}

Pipe default_pipe(Opcode op) {
    switch (op) {
        case Opcode::COPY_GM_TO_UB: return Pipe::MTE2;
        case Opcode::COPY_UB_TO_GM: return Pipe::MTE3;
        case Opcode::COPY_UB_TO_UB:
        case Opcode::VADD: case Opcode::VSUB: case Opcode::VMUL: case Opcode::VDIV:
        case Opcode::VMAX: case Opcode::VMIN: return Pipe::V;
        default: return Pipe::S;
    }
}

}  // namespace sfumato::isa
