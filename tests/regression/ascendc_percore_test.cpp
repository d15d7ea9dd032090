// Units compiled once per core kind (scripts/sfumato-asc): tests/ascendc/percore/percore.asc is written the
// way catlass writes its kernels (g_coreType as a template argument's default, explicit specialisations of a
// member template inside the class, `if constexpr` on g_coreType, launches of an overloaded kernel template
// in a header). It builds, each core kind runs its own body, both overloads launch, and the modes agree; on
// a chip without separate AIC and AIV cores the launch stops naming the reason. Integer division by zero in
// the kernel completes without a trap, as on the chip (runtime/ascendc/scalar_div.cpp). The cube APIs catlass's
// headers name but sfumato does not model compile until a kernel uses them, and then fail naming them.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <vector>

#include "tests/support.h"

using namespace sfumato::test;
namespace fs = std::filesystem;

namespace {

CliResult sh(const std::string& cmd) { return run_shell(cmd); }

std::string env() {
    return "SFUMATO_BUILD_DIR=" + fs::path(SFUMATO_BINARY).parent_path().parent_path().string() + " ";
}

uint64_t cycles(const std::string& dir) {
    const nlohmann::json s = read_json(dir + "/summary.json");
    uint64_t c = 0;
    for (const auto& op : s["ops"]) c += op["cycles"].get<uint64_t>();
    return c;
}

// The non-zero words of one printed line of percore.asc for a launch of `blocks` blocks with `base`, over
// what an earlier launch left (`prev`): AIV i writes base + i, AIC b writes base + 1001 at 64 + b and, dividing
// base + 7 by zero, the remainder (the dividend) at 96 + b and the quotient (all ones: -1) at 112 + b.
std::map<int, int> stamped(std::map<int, int> prev, int blocks, int ratio, int base) {
    for (int i = 0; i < blocks * ratio; ++i) prev[i] = base + i;
    for (int b = 0; b < blocks; ++b) prev[64 + b] = base + 1001, prev[96 + b] = base + 7, prev[112 + b] = -1;
    return prev;
}
std::string line_of(const std::map<int, int>& m) {
    std::string s;
    for (const auto& [i, v] : m) s += std::to_string(i) + ":" + std::to_string(v) + " ";
    return s + "\n";
}

}  // namespace

TEST_CASE("sfumato-asc: a unit naming g_coreType is compiled per core kind, each kind runs its body, x / 0 does not trap") {
    std::ifstream ini(source_dir() + "/configs/ascend910b-like.ini");
    std::string line;
    int ratio = 0;
    while (std::getline(ini, line))
        if (line.rfind("aiv_per_aic", 0) == 0) ratio = std::stoi(line.substr(line.find('=') + 1));
    REQUIRE(ratio > 1);
    const std::string dir = temp_dir("ascendc_percore");
    const std::string asc = env() + source_dir() + "/scripts/sfumato-asc ";
    const CliResult c = sh(asc + "-c " + source_dir() + "/tests/ascendc/percore/percore.asc -o " + dir + "/p.o && " + asc +
                           dir + "/p.o -o " + dir + "/percore");
    INFO(c.output);
    REQUIRE(c.code == 0);
    const auto first = stamped({}, 3, ratio, 100);
    const auto second = stamped(first, 2, ratio, 200);
    const CliResult f = sh("cd " + dir + " && SFUMATO_CONFIG=ascend910b-like SFUMATO_TRACE=off SFUMATO_OUT=" + dir +
                           "/f ./percore");
    INFO(f.output);
    REQUIRE(f.code == 0);
    CHECK_THAT(f.output, Catch::Contains(line_of(first) + line_of(second)));
    const CliResult t = sh("cd " + dir + " && SFUMATO_CONFIG=ascend910b-like SFUMATO_MODE=timing SFUMATO_TRACE=off "
                           "SFUMATO_OUT=" + dir + "/t ./percore");
    REQUIRE(t.code == 0);
    CHECK(cycles(dir + "/f") > 0);
    CHECK(cycles(dir + "/f") == cycles(dir + "/t"));
    // A chip whose cores each have a cube and a vector unit has no AIC and AIV programs to pick from.
    const CliResult k = sh("cd " + dir + " && SFUMATO_CONFIG=ascend910-like SFUMATO_TRACE=off SFUMATO_OUT=" + dir +
                           "/k ./percore");
    INFO(k.output);
    CHECK(k.code == 2);
    CHECK_THAT(k.output, Catch::Contains("compiled once per core kind"));
    CHECK_FALSE(fs::exists(dir + "/k/summary.json"));
}

TEST_CASE("sfumato-asc: declared-only APIs compile in a template nobody instantiates and fail to compile when used") {
    const std::string dir = temp_dir("ascendc_percore_unsupported");
    const std::string asc = env() + source_dir() + "/scripts/sfumato-asc --cpu-debug -c ";
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"AscendC::LocalTensor<uint16_t> a, b; AscendC::ShiftRight(a, b, uint16_t(1), 16);",
         "AscendC::ShiftRight is not supported"},
        {"AscendC::LocalTensor<half> a, b; AscendC::Scatter(a, b, 16);", "AscendC::Scatter is not on Atlas A2"},
    };
    int n = 0;
    for (const auto& [body, msg] : cases) {
        const std::string src = dir + "/k" + std::to_string(n) + ".cpp";
        {
            std::ofstream k(src);
            // The same calls in a template nobody instantiates compile (catlass's headers hold such templates).
            k << "#include \"kernel_operator.h\"\n"
                 "template <class T> void unused(T) {\n" << body << "\n}\n"
                 "extern \"C\" __global__ __aicore__ void k(GM_ADDR x) {\n" << body << "\n}\n";
        }
        const CliResult r = sh(asc + src + " -o " + dir + "/k.o");
        INFO(body << "\n" << r.output);
        CHECK(r.code != 0);
        CHECK_THAT(r.output, Catch::Contains(msg));
        ++n;
    }
    {
        std::ofstream k(dir + "/ok.cpp");
        k << "#include \"kernel_operator.h\"\n"
             "template <class T> void unused(T) {\n";
        for (const auto& c : cases) k << "{ " << c.first << " }\n";
        k << "}\nextern \"C\" __global__ __aicore__ void k(GM_ADDR x) {}\n";
    }
    const CliResult ok = sh(asc + dir + "/ok.cpp -o " + dir + "/ok.o");
    INFO(ok.output);
    CHECK(ok.code == 0);
}
