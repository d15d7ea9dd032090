// `sfumato asm` end to end on the 910B-like preset: the acceptance programs of examples/asm
// (cube and vector peaks, UB bank conflicts, MTE1 rate, race, deadlock), their outputs, and
// input errors. Expected cycles are derived from the preset's parameters.
#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <sstream>

#include "isa/asm.h"
#include "models/chip/chip_params.h"
#include "tests/support.h"

using namespace sfumato;
using namespace sfumato::test;

namespace {

std::string example(const std::string& name) { return source_dir() + "/examples/asm/" + name + ".s"; }

std::string asm_cmd(const std::string& name, const std::string& extra, const std::string& out) {
    return "asm " + example(name) + " --config " + config("ascend910b-like") + " " + extra + (out.empty() ? "" : " --out " + out);
}

// An op's cycles are its execution span (Task::cycles): from the core-clock edge at which its
// first block starts to the edge at which its last block is done. Expected counts are exact,
// also on the 1.8 GHz preset where the launch (host time, in ns) falls between edges.
bool cycles_match(uint64_t got, uint64_t expect) { return got == expect; }

struct Preset {
    Config cfg;
    std::unique_ptr<ChipParams> p;
    Preset() {
        cfg.load_ini(config("ascend910b-like"));
        p = std::make_unique<ChipParams>(cfg);
    }
    // Scalar cycles to issue the first line of an example program.
    uint64_t issue(const std::string& text) const { return p->core.issue_cost(isa::assemble(text).at(0)); }
};

}  // namespace

TEST_CASE("asm: cube_peak keeps the Cube pipe busy (pipe_util.cube >= 0.98)") {
    const std::string out = temp_dir("asm_cube");
    const CliResult r = run_cli(asm_cmd("cube_peak", "--mode timing", out));
    INFO(r.output);
    REQUIRE(r.code == 0);
    const auto s = read_json(out + "/summary.json");
    CHECK(s["pipe_util"]["cube"].get<double>() >= 0.98);
    CHECK(s["kind"] == "cube");
    // 2000 MADs of 128^3 fp16: steps from the preset's fractal shape, after the core's start-up.
    Preset pr;
    const auto& c = pr.p->core;
    const uint64_t steps = (128 / c.cube_m0) * (128 / c.cube_k0_16bit) * (128 / c.cube_n0) * c.cube_cycles_per_step;
    const uint64_t issue = pr.issue("mad.fp16 l0c[0x0], l0a[0x0], l0b[0x0], m=128, k=128, n=128, acc=1");
    CHECK(cycles_match(s["ops"][0]["cycles"].get<uint64_t>(), s["ops"][0]["startup_cycles"].get<uint64_t>() + issue +
                                                                  2000 * steps + c.cube_fill));
}

TEST_CASE("asm: vector_peak reaches pipe_util.vector >= 0.95 and writes every output") {
    const std::string out = temp_dir("asm_vec");
    const CliResult r = run_cli(asm_cmd("vector_peak", "", out));
    INFO(r.output);
    REQUIRE(r.code == 0);
    const auto s = read_json(out + "/summary.json");
    CHECK(s["pipe_util"]["vector"].get<double>() >= 0.95);
    for (const char* f : {"trace.json", "stats.h5", "summary.json", "instr.csv"}) CHECK(std::filesystem::exists(out + "/" + f));
    const std::string csv = read_text(out + "/instr.csv");
    CHECK(csv.rfind("instruction,pipe,count,cycles,avg_cycles\n", 0) == 0);
    CHECK(csv.find("vadd,V,4000,") != std::string::npos);
    // The trace has a V track with instruction slices.
    const std::string trace = read_text(out + "/trace.json");
    CHECK(trace.find("\"vadd\"") != std::string::npos);
}

TEST_CASE("asm: ub_bank_conflict runs slower than vector_peak by the factor the bank parameters imply") {
    // Both programs: 4000 adds of 64 repeats. vector_peak's sources read complementary bank
    // groups and its destination another bank; in ub_bank_conflict all three operands' 8 blocks
    // fall in the same 8 banks (16 KiB apart, a multiple of bank_groups x bank_bytes, inside one
    // bank span), so each repeat takes 3 cycles: 2 extra.
    for (const char* f : {"vector_peak", "ub_bank_conflict"}) {
        const std::string t = read_text(example(f));
        REQUIRE(t.find(".rep 4000") != std::string::npos);
        REQUIRE(t.find("repeat=64") != std::string::npos);
    }
    Preset pr;
    const auto& c = pr.p->core;
    REQUIRE((16 * 1024) % (c.ub_bank_groups * c.ub_bank_bytes) == 0);
    REQUIRE(3 * 16 * 1024 <= uint64_t{c.ub_bank_groups} * c.ub_bank_rows * c.ub_bank_bytes);  // one bank span
    const std::string o1 = temp_dir("asm_peak"), o2 = temp_dir("asm_conflict");
    REQUIRE(run_cli(asm_cmd("vector_peak", "--mode timing", o1)).code == 0);
    REQUIRE(run_cli(asm_cmd("ub_bank_conflict", "--mode timing", o2)).code == 0);
    const auto op1 = read_json(o1 + "/summary.json")["ops"][0], op2 = read_json(o2 + "/summary.json")["ops"][0];
    const uint64_t peak = op1["cycles"].get<uint64_t>(), conf = op2["cycles"].get<uint64_t>();
    // The two kernels' start-ups are the same (the same code size, the same arguments).
    REQUIRE(op1["startup_cycles"] == op2["startup_cycles"]);
    const uint64_t fixed = op1["startup_cycles"].get<uint64_t>() +
                           pr.issue("vadd.fp16 ub[0x10000], ub[0x4100], ub[0x8000], repeat=64, mask=128") +
                           c.vec_startup;
    const uint64_t rep = 4000 * 64;
    CHECK(cycles_match(peak, fixed + rep * c.vec_cycles_per_repeat));
    CHECK(cycles_match(conf, fixed + rep * (c.vec_cycles_per_repeat + 2 * c.ub_bank_conflict_cycles)));
    // Exactly the conflict cycles apart (the launch rounding cancels), i.e. the vector part is
    // slower by (cycles_per_repeat + 2 x conflict) / cycles_per_repeat.
    CHECK(conf - peak == rep * 2 * c.ub_bank_conflict_cycles);
    const double factor = double(c.vec_cycles_per_repeat + 2 * c.ub_bank_conflict_cycles) / c.vec_cycles_per_repeat;
    CHECK(double(conf - peak) / double(rep * c.vec_cycles_per_repeat) + 1.0 == Approx(factor));
    CHECK(conf > peak);
}

TEST_CASE("asm: mte1_rate loads at the L1->L0A and L1->L0B rates") {
    const std::string out = temp_dir("asm_mte1");
    REQUIRE(run_cli(asm_cmd("mte1_rate", "--mode timing", out)).code == 0);
    Preset pr;
    const auto& c = pr.p->core;
    const uint64_t per_pair = 64 * 512 / c.mte1_l1_l0a_bpc + 64 * 512 / c.mte1_l1_l0b_bpc;
    const auto s = read_json(out + "/summary.json");
    const uint64_t issue = pr.issue("load2d.fp16 l0a[0x0], l1[0x0], repeat=64");
    CHECK(cycles_match(s["ops"][0]["cycles"].get<uint64_t>(),
                       s["ops"][0]["startup_cycles"].get<uint64_t>() + issue + 1200 * per_pair + c.mte1_startup));
    CHECK(s["pipe_util"]["mte1"].get<double>() > 0.9);
}

TEST_CASE("asm: race.s with --check-races exits 3 naming both instructions and the block") {
    const CliResult r = run_cli(asm_cmd("race", "--check-races", ""));
    INFO(r.output);
    CHECK(r.code == 3);
    CHECK(r.output.find("copy_gm_to_ub.fp16 ub[0x0], gm[0x0], len=4096") != std::string::npos);
    CHECK(r.output.find("vadd.fp16 ub[0x2000], ub[0x0], ub[0x800]") != std::string::npos);
    CHECK(r.output.find("block 0") != std::string::npos);
    CHECK(run_cli(asm_cmd("race", "--mode timing", "")).code == 0);  // unchecked, it runs
}

TEST_CASE("asm: deadlock.s exits 4 with each pipe's state, quickly") {
    const auto t0 = std::chrono::steady_clock::now();
    const CliResult r = run_cli(asm_cmd("deadlock", "", ""));
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    INFO(r.output);
    CHECK(r.code == 4);
    CHECK(secs < 30);
    CHECK(r.output.find("deadlock") != std::string::npos);
    CHECK(r.output.find("wait_flag MTE2->V #0") != std::string::npos);
    CHECK(r.output.find("blocked: flag never set") != std::string::npos);
    for (const char* p : {"MTE2:", "MTE3:", "V:"}) CHECK(r.output.find(p) != std::string::npos);
}

TEST_CASE("asm: a malformed program or kind exits 2 naming the line") {
    const std::string dir = temp_dir("asm_bad");
    {
        std::ofstream f(dir + "/bad.s");
        f << "vadd.fp16 ub[0x0], ub[0x100], ub[0x200], repeat=1\nvfoo ub[0x0]\n";
    }
    CliResult r = run_cli("asm " + dir + "/bad.s --config " + config("tiny"));
    CHECK(r.code == 2);
    CHECK(r.output.find("line 2") != std::string::npos);
    r = run_cli("asm " + example("vector_peak") + " --kind sideways --config " + config("tiny"));
    CHECK(r.code == 2);
}

TEST_CASE("asm: a mix program with .aic/.aiv sections synchronises through cross-core flags") {
    const std::string dir = temp_dir("asm_mix");
    {
        std::ofstream f(dir + "/mix.s");
        f << ".kind mix\n.aic\nmad.fp16 l0c[0x0], l0a[0x0], l0b[0x0], m=64, k=64, n=64\nset_cross_flag M, 2, 1\n"
             ".aiv\nwait_cross_flag V, 2, 1\nvadd.fp16 ub[0x0], ub[0x100], ub[0x200], repeat=4, mask=128\n";
    }
    const CliResult r = run_cli("asm " + dir + "/mix.s --config " + config("tiny") + " --block-dim 2 --out " + dir);
    INFO(r.output);
    REQUIRE(r.code == 0);
    const auto s = read_json(dir + "/summary.json");
    CHECK(s["kind"] == "mix");
    CHECK(s["instructions"]["aic"] == 2);
    CHECK(s["instructions"]["aiv"] == 2);
    CHECK(s["ops"][0]["pipe_util"]["cube"].get<double>() > 0);
    CHECK(s["ops"][0]["pipe_util"]["vector"].get<double>() > 0);
}
