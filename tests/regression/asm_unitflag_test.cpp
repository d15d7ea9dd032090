// Mmad/FixPipe unit flags in the core model, through `sfumato asm` on the 910B-like preset: a mad with
// uf=3 sets the L0C blocks' unit bits at its end and a fixpipe with uf=3 waits for them (and clears them
// at its end, which the next mad with a unit flag waits for). Two rounds of mad -> fixpipe on one L0C tile
// synchronised by unit flags alone take the cycles of the same program synchronised by M -> FIX and
// FIX -> M flags (both start each instruction when the one it waits for ends), less at most the scalar
// unit's cost of issuing the flag instructions, and more than the program with no synchronisation at
// all, where the FixPipe drains the tile while the cube still writes it.
#include <catch2/catch.hpp>
#include <fstream>

#include "isa/asm.h"
#include "models/chip/chip_params.h"
#include "tests/support.h"

using namespace sfumato;
using namespace sfumato::test;

namespace {

enum class Sync { UnitFlags, Flags, None };

std::string program(Sync sync) {
    const std::string uf = sync == Sync::UnitFlags ? ", uf=3" : "";
    std::string prog;
    for (int round = 0; round < 2; ++round) {
        if (round == 1 && sync == Sync::Flags) prog += "wait_flag FIX, M, 0\n";
        prog += "mad.fp16 l0c[0x0], l0a[0x0], l0b[0x0], m=128, k=128, n=128" + uf + "\n";
        if (sync == Sync::Flags) prog += "set_flag M, FIX, 0\nwait_flag M, FIX, 0\n";
        prog += "fixpipe.fp32 gm[0x" + std::string(round ? "10000" : "0") +
                "], l0c[0x0], m=128, n=128, srcstride=128, dststride=128, out=fp16, nz2nd=1" + uf + "\n";
        if (round == 0 && sync == Sync::Flags) prog += "set_flag FIX, M, 0\n";
    }
    return prog;
}

uint64_t run(Sync sync, const std::string& mode) {
    const std::string tag = sync == Sync::UnitFlags ? "uf" : sync == Sync::Flags ? "flags" : "none";
    const std::string dir = temp_dir("asm_unitflag_" + tag + "_" + mode);
    const std::string prog = program(sync);
    {
        std::ofstream f(dir + "/p.s");
        f << prog;
    }
    const CliResult r = run_cli("asm " + dir + "/p.s --config " + config("ascend910b-like") +
                                " --kind cube --mode " + mode + " --out " + dir);
    INFO(prog << r.output);
    REQUIRE(r.code == 0);
    return read_json(dir + "/summary.json")["ops"][0]["cycles"].get<uint64_t>();
}

}  // namespace

TEST_CASE("asm: unit flags order mad and fixpipe as M <-> FIX flags do, in both modes") {
    for (const char* mode : {"functional", "timing"}) {
        INFO(mode);
        const uint64_t uf = run(Sync::UnitFlags, mode), flags = run(Sync::Flags, mode),
                       none = run(Sync::None, mode);
        // What issuing the flag program's set_flag/wait_flag lines costs the scalar unit.
        Config cfg;
        cfg.load_ini(config("ascend910b-like"));
        const ChipParams p(cfg);
        uint64_t sync_issue = 0;
        for (const isa::Instr& in : isa::assemble(program(Sync::Flags)))
            if (in.op == isa::Opcode::SET_FLAG || in.op == isa::Opcode::WAIT_FLAG)
                sync_issue += p.core.issue_cost(in);
        CHECK(uf <= flags);
        CHECK(flags <= uf + sync_issue);
        CHECK(none < uf);
    }
}

TEST_CASE("asm: a fixpipe with a unit flag whose tile no mad wrote is a deadlock naming the unit flag") {
    const std::string dir = temp_dir("asm_unitflag_never");
    {
        std::ofstream f(dir + "/p.s");
        f << "fixpipe.fp32 gm[0x0], l0c[0x0], m=16, n=16, srcstride=16, dststride=16, out=fp16, nz2nd=1, "
             "uf=3\n";
    }
    const CliResult r = run_cli("asm " + dir + "/p.s --config " + config("ascend910b-like") + " --kind cube");
    INFO(r.output);
    CHECK(r.code == 4);
    CHECK(r.output.find("unit flag") != std::string::npos);
}

namespace {

// `sfumato asm --check-races` on a program: its exit code and output.
CliResult check_races(const std::string& tag, const std::string& prog) {
    const std::string dir = temp_dir("asm_unitflag_races_" + tag);
    {
        std::ofstream f(dir + "/p.s");
        f << prog;
    }
    return run_cli("asm " + dir + "/p.s --config " + config("ascend910b-like") +
                   " --kind cube --check-races --out " + dir);
}

}  // namespace

TEST_CASE("asm --check-races: unit flags order the mad and fixpipe that use them, nothing else") {
    // Both rounds ordered by unit bits alone: the fixpipe reads the tile after the mad that set its
    // bits, the second mad overwrites it after the fixpipe that cleared them.
    const CliResult uf = check_races("uf", program(Sync::UnitFlags));
    INFO(uf.output);
    CHECK(uf.code == 0);
    // The same instructions with no synchronisation: the checker reports the fixpipe's read.
    const CliResult none = check_races("none", program(Sync::None));
    INFO(none.output);
    CHECK(none.code == kExitRace);
    CHECK(none.output.find("touch L0C") != std::string::npos);
    // A fixpipe without a unit flag does not wait for the bits, so the mad's do not order it.
    const std::string half =
        "mad.fp16 l0c[0x0], l0a[0x0], l0b[0x0], m=128, k=128, n=128, uf=3\n"
        "fixpipe.fp32 gm[0x0], l0c[0x0], m=128, n=128, srcstride=128, dststride=128, out=fp16, nz2nd=1\n";
    const CliResult h = check_races("half", half);
    INFO(h.output);
    CHECK(h.code == kExitRace);
    // Unit bits are per 512-B block: a fixpipe waiting on tile A's bits is ordered after the mad that
    // set them, not after a later mad that set tile B's, so a FixPipe read of B with no unit flag of
    // its own still races with that mad.
    const std::string other =
        "mad.fp16 l0c[0x0], l0a[0x0], l0b[0x0], m=16, k=16, n=16, uf=3\n"
        "mad.fp16 l0c[0x4000], l0a[0x0], l0b[0x0], m=16, k=16, n=16, uf=3\n"
        "fixpipe.fp32 gm[0x0], l0c[0x0], m=16, n=16, srcstride=16, dststride=16, out=fp16, nz2nd=1, uf=3\n"
        "fixpipe.fp32 gm[0x1000], l0c[0x4000], m=16, n=16, srcstride=16, dststride=16, out=fp16, nz2nd=1\n";
    const CliResult o = check_races("other", other);
    INFO(o.output);
    CHECK(o.code == kExitRace);
    CHECK(o.output.find("l0c[0x4000]") != std::string::npos);
}
