// Building Ascend C programs the ways a user does: scripts/ascendc-build on an .asc source and on a
// CPU-debug main.cpp + kernel source; the installed CMake packages (find_package(ASC) with the
// ASC language, find_package(sfumato)) on the examples' own CMakeLists; and an API sfumato does not
// model failing to compile with its name in the message; the vendor compiler's placement lists
// (__forceinline__[host, aicore] under __CCE__); GetSubBlockNum and the other calls catlass makes. Each built program runs and matches its golden data.
#include <catch2/catch.hpp>
#include <filesystem>

#include "tests/support.h"

using namespace sfumato::test;
namespace fs = std::filesystem;

namespace {

CliResult sh(const std::string& cmd) { return run_shell(cmd); }

std::string build_dir() { return fs::path(SFUMATO_BINARY).parent_path().parent_path().string(); }
std::string example(const std::string& name) { return source_dir() + "/examples/ascendc/" + name; }
std::string env() { return "SFUMATO_BUILD_DIR=" + build_dir() + " "; }

// Runs `program` in `dir` on ascend910b-like after the example's gen_data.py; verifies `output`.
void run_and_verify(const std::string& dir, const std::string& program, const std::string& ex,
                    const std::string& output, const std::string& dtype) {
    const CliResult gen = sh("cd " + dir + " && /usr/bin/python3 " + example(ex) + "/scripts/gen_data.py");
    REQUIRE(gen.code == 0);
    const CliResult run =
        sh("cd " + dir + " && SFUMATO_CONFIG=ascend910b-like SFUMATO_TRACE=off SFUMATO_OUT=" + dir + "/sim " + program);
    INFO(run.output);
    REQUIRE(run.code == 0);
    const CliResult verify = sh("cd " + dir + " && /usr/bin/python3 " + example(ex) + "/scripts/verify_result.py " +
                                output + " output/golden.bin " + dtype);
    INFO(verify.output);
    CHECK(verify.code == 0);
    CHECK(fs::exists(dir + "/sim/summary.json"));
}

}  // namespace

TEST_CASE("ascendc-build: an .asc program and a CPU-debug program build unmodified and match their golden data") {
    const std::string dir = temp_dir("ascendc_build");
    const CliResult asc = sh(env() + source_dir() + "/scripts/ascendc-build " + dir + "/demo " + example("add_asc") +
                             "/add_custom.asc");
    INFO(asc.output);
    REQUIRE(asc.code == 0);
    run_and_verify(dir, dir + "/demo", "add_asc", "output/output.bin", "float32");

    const std::string dir2 = temp_dir("ascendc_build_cpu");
    const CliResult cpu = sh(env() + source_dir() + "/scripts/ascendc-build " + dir2 + "/add_cpu " + example("add") +
                             "/main.cpp " + example("add") + "/add_custom.cpp");
    INFO(cpu.output);
    REQUIRE(cpu.code == 0);
    run_and_verify(dir2, dir2 + "/add_cpu", "add", "output/output_z.bin", "float16");
}

TEST_CASE("ascendc-build: a kernel calling an API sfumato does not model fails to compile naming it") {
    const std::string dir = temp_dir("ascendc_unsupported");
    {
        std::ofstream k(dir + "/k.cpp");
        k << "#include \"kernel_operator.h\"\n"
             "extern \"C\" __global__ __aicore__ void k(GM_ADDR x) {\n"
             "    AscendC::LocalTensor<half> a, b;\n"
             "    AscendC::RpSort16(a, b, 8);\n"
             "}\n";
    }
    const CliResult r = sh(env() + source_dir() + "/scripts/sfumato-asc --cpu-debug -c " + dir + "/k.cpp -o " + dir + "/k.o");
    INFO(r.output);
    CHECK(r.code != 0);
    CHECK_THAT(r.output, Catch::Contains("AscendC::RpSort16 is not on Atlas A2"));
    CHECK_FALSE(fs::exists(dir + "/k.o"));
    // An advanced API in a form sfumato does not model (SoftMax on half tensors) names itself too.
    {
        std::ofstream k(dir + "/s.cpp");
        k << "#include \"kernel_operator.h\"\n"
             "extern \"C\" __global__ __aicore__ void k(GM_ADDR x) {\n"
             "    AscendC::LocalTensor<half> a, b, c;\n"
             "    AscendC::LocalTensor<uint8_t> t;\n"
             "    SoftMaxTiling tiling;\n"
             "    AscendC::SoftMax<half>(a, b, c, a, t, tiling, {16, 16, 16, 16});\n"
             "}\n";
    }
    const CliResult s = sh(env() + source_dir() + "/scripts/sfumato-asc --cpu-debug -c " + dir + "/s.cpp -o " + dir + "/s.o");
    INFO(s.output);
    CHECK(s.code != 0);
    CHECK_THAT(s.output, Catch::Contains("softmax APIs of sfumato's Ascend C layer support float tensors only"));
    CHECK_FALSE(fs::exists(dir + "/s.o"));
    // Forms of supported APIs that sfumato does not model name themselves (one unit, every diagnostic).
    {
        std::ofstream k(dir + "/f.cpp");
        k << "#include \"kernel_operator.h\"\n"
             "extern \"C\" __global__ __aicore__ void k(GM_ADDR x) {\n"
             "    AscendC::LocalTensor<int16_t> i;\n"
             "    AscendC::ShiftLeft<int16_t>(i, i, int16_t(3), 128);\n"
             "    AscendC::LocalTensor<float> a;\n"
             "    AscendC::Select<float, AscendC::SELMODE::VSEL_TENSOR_TENSOR_MODE>(a, a, a, 1, {});\n"
             "    AscendC::LocalTensor<fp8_e4m3fn_t> e;\n"
             "    AscendC::LocalTensor<half> h;\n"
             "    AscendC::Cast(h, e, AscendC::RoundMode::CAST_NONE, 128);\n"
             "}\n";
    }
    const CliResult f = sh(env() + source_dir() + "/scripts/sfumato-asc --cpu-debug -c " + dir + "/f.cpp -o " + dir + "/f.o");
    INFO(f.output);
    CHECK(f.code != 0);
    CHECK_THAT(f.output, Catch::Contains("AscendC::ShiftLeft is supported by sfumato's Ascend C layer for uint16_t and uint32_t"));
    CHECK_THAT(f.output, Catch::Contains("AscendC::Select<T, VSEL_TENSOR_TENSOR_MODE> without a mask"));
    // fp8 conversions: the reference lists them for Ascend 950 only, none for Atlas A2.
    CHECK_THAT(f.output, Catch::Contains("AscendC::Cast to or from an 8-bit float (fp8_e4m3fn_t, fp8_e5m2_t, hifloat8_t) is not on Atlas A2"));
    CHECK_FALSE(fs::exists(dir + "/f.o"));
}

TEST_CASE("sfumato-asc: __CCE__ is defined and the vendor's placement lists (__forceinline__[host, aicore]) compile") {
    const std::string dir = temp_dir("ascendc_placement");
    {
        std::ofstream h(dir + "/hd.h");
        h << "#pragma once\n"
             "#if defined(__CCE__)\n"
             "#include <kernel_operator.h>\n"
             "#define HD __forceinline__[host, aicore]\n"
             "#else\n"
             "#error the ASC compiler defines __CCE__\n"
             "#endif\n"
             "template <typename T> HD constexpr T twice(T v) { return v + v; }\n"
             "struct Box { HD\n"
             "  int get() const { return n; }\n  int n = 21; };\n";
        std::ofstream m(dir + "/main.asc");
        m << "#define K_MAX_SHAPE_DIM 0\n"
             "#include \"hd.h\"\n"
             "#include <cstdio>\n"
             "static_assert(twice(4) == 8);\n"
             "int main() {\n"
             "    const uint32_t dims[2] = {3, 4};\n"
             "    AscendC::ShapeInfo none(2, dims);\n"
             "    std::printf(\"value %d dims %d\\n\", twice(Box{}.get()), int(none.shapeDim));\n"
             "    return 0;\n"
             "}\n";
    }
    const std::string asc = env() + source_dir() + "/scripts/sfumato-asc ";
    // -isystem on sfumato's headers, as the installed package gives them: the preprocessor then marks
    // __forceinline__'s expansion with line markers, between `inline` and the list.
    const CliResult c = sh(asc + "-isystem " + source_dir() + "/runtime/ascendc/include -c " + dir + "/main.asc -o " + dir +
                           "/main.o && " + asc + dir + "/main.o -o " + dir + "/demo");
    INFO(c.output);
    REQUIRE(c.code == 0);
    const CliResult r = sh(dir + "/demo");
    INFO(r.output);
    CHECK(r.code == 0);
    // 2 x 21; ShapeInfo keeps no dimension when the program sets K_MAX_SHAPE_DIM to 0.
    CHECK_THAT(r.output, Catch::Contains("value 42 dims 0"));
}

TEST_CASE("sfumato-asc: GetSubBlockNum, SetSyncBaseAddr, the pipe_barrier intrinsic and SizeOfBits in a mix and a vector kernel") {
    // The AIVs per AIC of the chip the program runs on, from its config (what a mix kernel's GetSubBlockNum is).
    std::ifstream ini(source_dir() + "/configs/ascend910b-like.ini");
    std::string line;
    int ratio = 0;
    while (std::getline(ini, line))
        if (line.rfind("aiv_per_aic", 0) == 0) ratio = std::stoi(line.substr(line.find('=') + 1));
    REQUIRE(ratio > 1);
    const std::string dir = temp_dir("ascendc_subblocks");
    {
        std::ofstream m(dir + "/sub.asc");
        m << "#include \"kernel_operator.h\"\n"
             "#include \"acl/acl.h\"\n"
             "#include <cstdio>\n"
             "static_assert(AscendC::SizeOfBits<half>::value == 16 && AscendC::SizeOfBits<float>::value == 32);\n"
             "static_assert(AscendC::SizeOfBits<AscendC::int4b_t>::value == 4);\n"
             "__global__ __mix__(1, 2) __aicore__ void mixk(GM_ADDR out) {\n"
             "    AscendC::SetSyncBaseAddr(0);\n"
             "    AscendC::GlobalTensor<int32_t> o;\n"
             "    o.SetGlobalBuffer((__gm__ int32_t*)out, 64);\n"
             "    pipe_barrier(PIPE_ALL);\n"
             "    if ASCEND_IS_AIV { o.SetValue(AscendC::GetBlockIdx(), (int32_t)AscendC::GetSubBlockNum()); }\n"
             "    if ASCEND_IS_AIC { o.SetValue(32 + AscendC::GetBlockIdx(), (int32_t)AscendC::GetSubBlockNum()); }\n"
             "}\n"
             "__global__ __vector__ __aicore__ void veck(GM_ADDR out) {\n"
             "    AscendC::GlobalTensor<int32_t> o;\n"
             "    o.SetGlobalBuffer((__gm__ int32_t*)out, 64);\n"
             "    pipe_barrier(PIPE_V);\n"
             "    o.SetValue(48 + AscendC::GetBlockIdx(), (int32_t)AscendC::GetSubBlockNum());\n"
             "}\n"
             "int main() {\n"
             "    aclInit(nullptr); aclrtSetDevice(0);\n"
             "    aclrtStream s = nullptr; aclrtCreateStream(&s);\n"
             "    void* d = nullptr; aclrtMalloc(&d, 256, ACL_MEM_MALLOC_HUGE_FIRST);\n"
             "    int32_t h[64] = {}; aclrtMemcpy(d, 256, h, 256, ACL_MEMCPY_HOST_TO_DEVICE);\n"
             "    mixk<<<2, nullptr, s>>>((GM_ADDR)d);\n"
             "    veck<<<2, nullptr, s>>>((GM_ADDR)d);\n"
             "    aclrtSynchronizeStream(s);\n"
             "    aclrtMemcpy(h, 256, d, 256, ACL_MEMCPY_DEVICE_TO_HOST);\n"
             "    for (int i = 0; i < 64; ++i) if (h[i]) std::printf(\"%d:%d \", i, h[i]);\n"
             "    std::printf(\"\\n\");\n"
             "    return 0;\n"
             "}\n";
    }
    const std::string asc = env() + source_dir() + "/scripts/sfumato-asc ";
    const CliResult c = sh(asc + "-c " + dir + "/sub.asc -o " + dir + "/sub.o && " + asc + dir + "/sub.o -o " + dir + "/sub");
    INFO(c.output);
    REQUIRE(c.code == 0);
    const CliResult r = sh("cd " + dir + " && SFUMATO_CONFIG=ascend910b-like SFUMATO_TRACE=off SFUMATO_OUT=" + dir +
                           "/sim " + dir + "/sub");
    INFO(r.output);
    REQUIRE(r.code == 0);
    // Mix kernel of 2 blocks: its 2 x ratio AIVs and its 2 AICs see ratio; the vector kernel's 2 blocks see 1.
    std::string want;
    for (int i = 0; i < 2 * ratio; ++i) want += std::to_string(i) + ":" + std::to_string(ratio) + " ";
    want += "32:" + std::to_string(ratio) + " 33:" + std::to_string(ratio) + " 48:1 49:1 ";
    CHECK_THAT(r.output, Catch::Contains(want));
}

TEST_CASE("cmake packages: find_package(ASC) and find_package(sfumato) build the examples' own CMakeLists") {
    const std::string prefix = temp_dir("ascendc_prefix");
    const CliResult inst = sh("cmake --install " + build_dir() + " --prefix " + prefix);
    INFO(inst.output);
    REQUIRE(inst.code == 0);
    REQUIRE(fs::exists(prefix + "/lib/cmake/ASC/ASCConfig.cmake"));

    const std::string asc = temp_dir("ascendc_cmake_asc");
    const CliResult conf = sh("cmake -S " + example("add_asc") + " -B " + asc + "/build -G Ninja -DCMAKE_PREFIX_PATH=" + prefix +
                              " && cmake --build " + asc + "/build");
    INFO(conf.output);
    REQUIRE(conf.code == 0);
    run_and_verify(asc, asc + "/build/demo", "add_asc", "output/output.bin", "float32");

    const std::string cpu = temp_dir("ascendc_cmake_cpu");
    const CliResult conf2 = sh("cmake -S " + example("add") + " -B " + cpu + "/build -G Ninja -DCMAKE_PREFIX_PATH=" + prefix +
                               " && cmake --build " + cpu + "/build");
    INFO(conf2.output);
    REQUIRE(conf2.code == 0);
    run_and_verify(cpu, cpu + "/build/ascendc_add_cpu", "add", "output/output_z.bin", "float16");

    // A project linking the CANN libraries by name (as catlass's examples do with link_libraries) links:
    // each is an empty target, everything they would provide being libsfumato_ascendc's.
    const std::string libs = temp_dir("ascendc_cmake_libs");
    {
        std::ofstream c(libs + "/CMakeLists.txt");
        c << "cmake_minimum_required(VERSION 3.16)\n"
             "find_package(ASC REQUIRED)\n"
             "project(libs LANGUAGES ASC CXX)\n"
             "link_libraries(ascendc_runtime runtime profapi mmpa ascend_dump c_sec error_manager ascendcl\n"
             "               tiling_api nnopbase platform ascend_hal dl)\n"
             "add_executable(demo main.asc)\n";
        std::ofstream m(libs + "/main.asc");
        m << "#include \"acl/acl.h\"\n"
             "int main() { return aclrtSetDevice(0) == ACL_SUCCESS ? 0 : 1; }\n";
    }
    const CliResult conf3 = sh("cmake -S " + libs + " -B " + libs + "/build -G Ninja -DCMAKE_PREFIX_PATH=" + prefix +
                               " && cmake --build " + libs + "/build && cd " + libs + " && SFUMATO_TRACE=off SFUMATO_OUT=" + libs +
                               "/sim build/demo");
    INFO(conf3.output);
    CHECK(conf3.code == 0);

    // The package's set_env.sh, sourced as the vendor's is: the install's programs, library and prefix.
    const CliResult envr = sh("env -u LD_LIBRARY_PATH -u ASCEND_HOME_PATH -u CMAKE_PREFIX_PATH bash -c 'source " + prefix +
                              "/share/sfumato/set_env.sh && echo \"[$ASCEND_HOME_PATH|$CMAKE_PREFIX_PATH|$LD_LIBRARY_PATH]\" "
                              "&& command -v sfumato-asc'");
    INFO(envr.output);
    REQUIRE(envr.code == 0);
    const std::string p = fs::canonical(prefix).string();
    CHECK_THAT(envr.output, Catch::Contains("[" + p + "|" + p + "|" + p + "/lib]"));
    CHECK_THAT(envr.output, Catch::Contains(p + "/bin/sfumato-asc"));
}
