// Race detection (--check-races) and deadlock reports of the AI core: an unordered pair of
// accesses is reported with both instructions, the core and the block; flags, barriers and
// scalar waits order pipes and give no report; a cross-core wait that nothing sets deadlocks.
#include <catch2/catch.hpp>

#include "isa/asm.h"
#include "sim/error.h"
#include "tests/sim_harness.h"

using namespace sfumato;
using namespace sfumato::test;

namespace {
std::function<void(isa::IInstrSink&)> program(const std::string& text) {
    auto prog = std::make_shared<std::vector<isa::Instr>>(isa::assemble(text));
    return [prog](isa::IInstrSink& s) {
        for (const auto& in : *prog) s.issue(in);
    };
}

// Runs a program with race checking on; returns the race report ("" if none).
std::string race_report(const std::string& text, uint32_t block_dim = 1) {
    Harness h({"chip.aicore.check_races=true"});
    auto t = Harness::kernel(program(text), block_dim);
    try {
        h.run({t});
    } catch (const SimError& e) {
        CHECK(e.code() == kExitRace);
        return e.what();
    }
    return "";
}
}  // namespace

TEST_CASE("aicore race: a vector read of a range MTE2 is still loading is reported with both instructions") {
    const std::string r = race_report(
        "copy_gm_to_ub ub[0x0], gm[0x0], len=1024\n"
        "vadd.fp16 ub[0x1000], ub[0x200], ub[0x800], repeat=1, mask=128\n");
    CHECK(r.find("copy_gm_to_ub.fp16 ub[0x0], gm[0x0], len=1024") != std::string::npos);
    CHECK(r.find("vadd.fp16 ub[0x1000], ub[0x200], ub[0x800]") != std::string::npos);
    CHECK(r.find("block 0") != std::string::npos);
    CHECK(r.find("UB [0x200, 0x300)") != std::string::npos);
}

TEST_CASE("aicore race: a flag between the pipes orders them: no report") {
    CHECK(race_report("copy_gm_to_ub ub[0x0], gm[0x0], len=1024\n"
                      "set_flag MTE2, V, 0\n"
                      "wait_flag MTE2, V, 0\n"
                      "vadd.fp16 ub[0x1000], ub[0x200], ub[0x800], repeat=1, mask=128\n"
                      "set_flag V, MTE3, 1\n"
                      "wait_flag V, MTE3, 1\n"
                      "copy_ub_to_gm gm[0x4000], ub[0x1000], len=256\n") == "");
}

TEST_CASE("aicore race: ordering is transitive through a chain of flags and a PIPE_ALL barrier") {
    // MTE2 -> V -> MTE3 orders MTE3's read after the load; the barrier orders the next load
    // (overwriting ub[0x0]) after MTE3's read of it.
    CHECK(race_report("copy_gm_to_ub ub[0x0], gm[0x0], len=512\n"
                      "set_flag MTE2, V, 0\n"
                      "wait_flag MTE2, V, 0\n"
                      "vadd.fp16 ub[0x1000], ub[0x1000], ub[0x1000], repeat=1, mask=128\n"
                      "set_flag V, MTE3, 0\n"
                      "wait_flag V, MTE3, 0\n"
                      "copy_ub_to_gm gm[0x4000], ub[0x0], len=512\n"
                      "pipe_barrier ALL\n"
                      "copy_gm_to_ub ub[0x0], gm[0x8000], len=512\n") == "");
}

TEST_CASE("aicore race: a write after read without ordering is a race (MTE2 reloads a buffer V reads)") {
    const std::string r = race_report(
        "copy_gm_to_ub ub[0x0], gm[0x0], len=512\n"
        "set_flag MTE2, V, 0\n"
        "wait_flag MTE2, V, 0\n"
        "vadd.fp16 ub[0x1000], ub[0x0], ub[0x0], repeat=1, mask=128\n"
        "copy_gm_to_ub ub[0x0], gm[0x8000], len=512\n");
    CHECK(r.find("vadd.fp16") != std::string::npos);
    CHECK(r.find("gm[0x8000]") != std::string::npos);
}

TEST_CASE("aicore race: reads by two pipes never race") {
    CHECK(race_report("copy_ub_to_gm gm[0x4000], ub[0x0], len=512\n"
                      "vadd.fp16 ub[0x1000], ub[0x0], ub[0x0], repeat=1, mask=128\n") == "");
}

TEST_CASE("aicore race: checking is off by default") {
    Harness h;  // no check_races: the same racy program runs to completion
    auto t = Harness::kernel(program("copy_gm_to_ub ub[0x0], gm[0x0], len=1024\n"
                                     "vadd.fp16 ub[0x1000], ub[0x200], ub[0x800], repeat=1, mask=128\n"));
    CHECK(h.run({t}));
}

TEST_CASE("aicore race: each block is checked on its own core and named") {
    const std::string r = race_report(
        "copy_gm_to_ub ub[0x0], gm[0x0], len=1024\n"
        "vadd.fp16 ub[0x1000], ub[0x200], ub[0x800], repeat=1, mask=128\n", 3);
    CHECK(r.find("race: chip.aiv") != std::string::npos);
    CHECK(r.find(" block ") != std::string::npos);
}

TEST_CASE("aicore deadlock: a cross-core wait nothing sets leaves the run unfinished and the report names it") {
    Harness h;
    auto body = program("wait_cross_flag V, 2, 4\n"
                        "vadd.fp16 ub[0x1000], ub[0x0], ub[0x0], repeat=1, mask=128\n");
    auto t = Harness::kernel([body](isa::IInstrSink& s) {
        if (s.core_kind() == isa::CoreKind::Vector) body(s);
    }, 1, KernelKind::Mix);
    CHECK_FALSE(h.run({t}));
    const std::string state = h.chip().describe_state();
    CAPTURE(state);
    CHECK(state.find("wait_cross_flag") != std::string::npos);
    CHECK(state.find("cross-core counter is 0") != std::string::npos);
}

TEST_CASE("aicore errors: cross-core flags on a coupled part are refused with the instruction named") {
    Harness h({}, "ascend910-like", false);
    auto t = Harness::kernel(program("set_cross_flag V, 0, 1\n"));
    try {
        h.run({t});
        FAIL("no error");
    } catch (const ModelError& e) {
        CHECK(std::string(e.what()).find("set_cross_flag") != std::string::npos);
        CHECK(std::string(e.what()).find("split") != std::string::npos);
    }
}
