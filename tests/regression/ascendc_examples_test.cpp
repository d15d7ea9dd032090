// The Ascend C examples (examples/ascendc, CPU-debug programs built by CMake against
// libsfumato_ascendc) run as a user runs them: gen_data.py writes inputs and golden data, the
// program runs on a preset named by SFUMATO_CONFIG, verify_result.py compares. Also: timing mode
// gives functional mode's cycles, the AscendCL form of the add runs, and misuse ends a program
// with the sfumato command's exit codes (2 bad input naming block and call, 3 race, 4 deadlock).
#include <catch2/catch.hpp>
#include <filesystem>

#include "tests/support.h"

using namespace sfumato::test;
namespace fs = std::filesystem;

namespace {

CliResult sh(const std::string& cmd) { return run_shell(cmd); }

std::string bin(const std::string& name) { return (fs::path(SFUMATO_BINARY).parent_path() / name).string(); }
std::string example(const std::string& name) { return source_dir() + "/examples/ascendc/" + name; }

struct Example {
    std::string dir;     // under examples/ascendc
    std::string binary;  // in the build tree's bin/
    std::string output;  // what the program writes, relative to its working directory
    std::string dtype;   // of the output, for verify_result.py
};

const Example kAdd{"add", "ascendc_add", "output/output_z.bin", "float16"};
const Example kLeakyRelu{"leaky_relu", "ascendc_leaky_relu", "output/output_y.bin", "float16"};
const Example kReduce{"reduce_sum", "ascendc_reduce_sum", "output/output.bin", "float32"};
const Example kMatmul{"matmul", "ascendc_matmul", "output/output.bin", "float32"};
const Example kMatmul1001{"matmul", "ascendc_matmul_1001", "output/output.bin", "float32"};
const Example kMix{"matmul_leakyrelu", "ascendc_matmul_leakyrelu", "output/output.bin", "float16"};

struct Run {
    CliResult program, verify;
    nlohmann::json summary;
};

// Generates the example's data in a fresh directory, runs it there and verifies its output.
Run run_example(const Example& e, const std::string& preset, const std::string& mode, const std::string& tag) {
    Run r;
    const std::string dir = temp_dir("ascendc_" + e.binary + "_" + preset + "_" + mode + tag);
    const CliResult gen = sh("cd " + dir + " && /usr/bin/python3 " + example(e.dir) + "/scripts/gen_data.py");
    INFO(gen.output);
    REQUIRE(gen.code == 0);
    r.program = sh("cd " + dir + " && SFUMATO_CONFIG=" + preset + " SFUMATO_MODE=" + mode + " SFUMATO_OUT=" + dir +
                   "/sim SFUMATO_TRACE=op " + bin(e.binary));
    if (r.program.code == 0) r.summary = read_json(dir + "/sim/summary.json");
    if (mode == "functional")
        r.verify = sh("cd " + dir + " && /usr/bin/python3 " + example(e.dir) + "/scripts/verify_result.py " + e.output +
                      " output/golden.bin " + e.dtype);
    return r;
}

void check_passes(const Example& e, const std::string& preset) {
    const Run r = run_example(e, preset, "functional", "");
    INFO(e.binary << " on " << preset << ":\n" << r.program.output << r.verify.output);
    REQUIRE(r.program.code == 0);
    CHECK(r.verify.code == 0);
    CHECK_THAT(r.verify.output, Catch::Contains("test pass"));
    REQUIRE(r.summary["ops"].size() == 1);
    CHECK(r.summary["ops"][0]["cycles"].get<uint64_t>() > 0);
    CHECK_THAT(r.program.output, Catch::Contains("sfumato: kernel "));
}

void check_timing_mode(const Example& e, const std::string& preset) {
    const Run f = run_example(e, preset, "functional", "f");
    const Run t = run_example(e, preset, "timing", "t");
    INFO(f.program.output << t.program.output);
    REQUIRE(f.program.code == 0);
    REQUIRE(t.program.code == 0);
    CHECK(t.summary["mode"] == "timing");
    CHECK(t.summary["ops"][0]["cycles"] == f.summary["ops"][0]["cycles"]);
    CHECK(t.summary["total_cycles"] == f.summary["total_cycles"]);
}

}  // namespace

TEST_CASE("ascendc examples: the vector examples match their golden data on ascend910b-like") {
    check_passes(kAdd, "ascend910b-like");
    check_passes(kLeakyRelu, "ascend910b-like");
    check_passes(kReduce, "ascend910b-like");
}

TEST_CASE("ascendc examples: the vector examples match their golden data on ascend910-like") {
    check_passes(kAdd, "ascend910-like");
    check_passes(kLeakyRelu, "ascend910-like");
    check_passes(kReduce, "ascend910-like");
}

TEST_CASE("ascendc examples: the matmul matches its golden data on both presets, the mix kernel on ascend910b-like") {
    check_passes(kMatmul, "ascend910b-like");
    check_passes(kMatmul1001, "ascend910-like");
    check_passes(kMix, "ascend910b-like");
}

TEST_CASE("ascendc examples: timing mode gives functional mode's cycles") {
    check_timing_mode(kAdd, "ascend910b-like");
    check_timing_mode(kReduce, "ascend910b-like");
    check_timing_mode(kMatmul, "ascend910b-like");
    check_timing_mode(kMix, "ascend910b-like");
    check_timing_mode(kLeakyRelu, "ascend910-like");
    check_timing_mode(kMatmul1001, "ascend910-like");
}

TEST_CASE("ascendc examples: the add's AscendCL form runs, with its copies on the timeline") {
    const Run r = run_example({"add", "ascendc_add_npu", "output/output_z.bin", "float16"}, "ascend910b-like",
                              "functional", "");
    INFO(r.program.output << r.verify.output);
    REQUIRE(r.program.code == 0);
    CHECK(r.verify.code == 0);
    size_t copies = 0, kernels = 0;
    for (const auto& t : r.summary["tasks"]) {
        copies += t["kind"] == "memcpy";
        kernels += t["kind"] == "kernel";
    }
    CHECK(copies == 3);  // x and y in, z out
    CHECK(kernels == 1);
}

TEST_CASE("ascendc: misuse ends the program with the block and the call named, exit 2") {
    const std::string prog = bin("ascendc_misuse");
    auto run = [&](const std::string& c, const std::string& env = "") {
        const std::string dir = temp_dir("ascendc_misuse_" + c);
        return sh("cd " + dir + " && SFUMATO_CONFIG=tiny SFUMATO_OUT=" + dir + "/sim " + env + " " + prog + " " + c);
    };
    const CliResult ok = run("ok");
    INFO(ok.output);
    CHECK(ok.code == 0);
    CHECK_THAT(ok.output, Catch::Contains("result ok"));
    const CliResult alloc = run("alloc");
    CHECK(alloc.code == 2);
    CHECK_THAT(alloc.output, Catch::Contains("sfumato: error: block 1 (AIV): AscendC::TQue::AllocTensor: all 2 buffers"));
    const CliResult deque = run("deque");
    CHECK(deque.code == 2);
    CHECK_THAT(deque.output, Catch::Contains("(AIV): AscendC::TQue::DeQue: DeQue of an empty queue"));
    const CliResult ub = run("ub");
    CHECK(ub.code == 2);
    CHECK_THAT(ub.output, Catch::Contains("AscendC::TPipe::InitBuffer:") && Catch::Contains("does not fit in UB"));
    const CliResult gm = run("gm");
    CHECK(gm.code == 2);
    CHECK_THAT(gm.output, Catch::Contains("block 3 (AIV): AscendC::DataCopy: GM bytes [3584, 4608) of a buffer of 4096 bytes"));
    const CliResult gmask = run("gathermask");
    CHECK(gmask.code == 2);
    CHECK_THAT(gmask.output, Catch::Contains("GatherMask: src1Pattern 8 (the built-in patterns are 1..7)"));
    const CliResult gcount = run("gathermask_count");
    CHECK(gcount.code == 2);
    CHECK_THAT(gcount.output, Catch::Contains("GatherMask: repeatTimes 256 (at most 255 in one instruction)"));
    const CliResult mvalid = run("mrgsort_valid");
    CHECK(mvalid.code == 2);
    CHECK_THAT(mvalid.output, Catch::Contains("AscendC::MrgSort: validBit 5 (3, 7 or 15"));
    const CliResult mrep = run("mrgsort_repeat");
    CHECK(mrep.code == 2);
    CHECK_THAT(mrep.output, Catch::Contains("AscendC::MrgSort: repeatTimes 2 needs validBit 15"));
    const CliResult mover = run("mrgsort_overlap");
    CHECK(mover.code == 2);
    CHECK_THAT(mover.output,
               Catch::Contains("AscendC::MrgSort: src1 (UB bytes [") && Catch::Contains("overlaps dst"));
    const CliResult s32 = run("sort32");
    CHECK(s32.code == 2);
    CHECK_THAT(s32.output, Catch::Contains("AscendC::Sort32: dst holds 1024 bytes, the call uses 1280"));
    const CliResult gb = run("gatherb");
    CHECK(gb.code == 2);
    CHECK_THAT(gb.output,
               Catch::Contains("AscendC::Gatherb: offset at UB address") && Catch::Contains("not 32-byte aligned"));
    // An offset the data make invalid is found when the vgatherb runs: the core and the instruction named.
    const CliResult grange = run("gatherb_range");
    CHECK(grange.code == 2);
    CHECK_THAT(grange.output, Catch::Contains("vgatherb: offset 4096 outside span 768"));
    const CliResult trap = run("trap");  // AscendC::Trap() on block 2
    CHECK(trap.code == 2);
    CHECK_THAT(trap.output, Catch::Contains("block 2 (AIV): AscendC::Trap: the kernel trapped"));
    const CliResult gmfree = run("gmfree");
    CHECK(gmfree.code == 2);
    CHECK_THAT(gmfree.output, Catch::Contains("AscendC::GmFree of a pointer GmAlloc did not return"));
    // No outputs after an error.
    CHECK_FALSE(fs::exists(fs::temp_directory_path() / ("sfumato_test_ascendc_misuse_gm_" + std::to_string(::getpid())) / "sim"));
    CHECK(fs::exists(fs::temp_directory_path() / ("sfumato_test_ascendc_misuse_ok_" + std::to_string(::getpid())) / "sim" / "summary.json"));
}

TEST_CASE("ascendc: a flag nobody sets is a deadlock (exit 4), a missing flag a race under SFUMATO_CHECK_RACES (exit 3)") {
    const std::string prog = bin("ascendc_misuse");
    const std::string dir = temp_dir("ascendc_flags");
    const CliResult dead = sh("cd " + dir + " && SFUMATO_CONFIG=tiny SFUMATO_OUT=" + dir + "/a " + prog + " deadlock");
    INFO(dead.output);
    CHECK(dead.code == 4);
    CHECK_THAT(dead.output, Catch::Contains("deadlock"));
    const CliResult race =
        sh("cd " + dir + " && SFUMATO_CONFIG=tiny SFUMATO_CHECK_RACES=1 SFUMATO_OUT=" + dir + "/b " + prog + " race");
    INFO(race.output);
    CHECK(race.code == 3);
}
