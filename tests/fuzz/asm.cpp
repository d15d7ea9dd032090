// Fuzz target `asm`: the text assembler (isa/asm.h) as `sfumato asm FILE.s` runs it, and what
// the CLI computes from each instruction before a run (pipe, footprint, GM bytes, timing on the
// default core). Properties: every assembled instruction passes validate(), and disassembling
// and reassembling it gives the same instruction (the round trip asm.h promises). AsmError is
// the documented error (the CLI turns it into InputError, exit 2). The program limits are
// smaller than the CLI's (the same checks, reached by short inputs; each input stays fast).
#include "isa/asm.h"
#include "isa/semantics.h"
#include "models/aicore/core_timing.h"
#include "sim/config.h"
#include "tests/fuzz/fuzz_target.h"

using namespace sfumato;

SFUMATO_FUZZ_TARGET(asm) {
    static Config config;
    static const CoreParams core(ParamScope(config, "chip.aicore"));
    std::vector<isa::Instr> prog;
    try {
        isa::AsmLimits lim;
        lim.max_instructions = 4096;
        lim.max_line_visits = 65536;
        prog = isa::assemble(std::string(fuzz::as_text(data, size)), lim);
    } catch (const isa::AsmError&) {
        return;
    }
    for (const isa::Instr& in : prog) {
        if (std::string err = isa::validate(in); !err.empty()) fuzz::fail("assembled an invalid instruction: " + err);
        const std::string text = isa::disassemble(in);
        std::vector<isa::Instr> again;
        try {
            again = isa::assemble(text);
        } catch (const isa::AsmError& e) {
            fuzz::fail("disassembly '" + text + "' does not assemble: " + e.what());
        }
        if (again.size() != 1 || !(again[0] == in)) fuzz::fail("round trip changes '" + text + "'");
        isa::Extent ext[isa::kMaxExtents];
        (void)isa::footprint(in, ext);
        (void)isa::gm_bytes(in);
        (void)isa::exec_pipe(in);
        (void)compute_timing(in, core);
    }
}
