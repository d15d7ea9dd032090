// examples/host/two_streams.cpp, built by CMake next to the sfumato binary, runs and checks out:
// two streams, an event, async copies overlapping a kernel, and the add kernel's numerics.
#include <catch2/catch.hpp>
#include <filesystem>

#include "tests/support.h"

using namespace sfumato::test;

TEST_CASE("examples/host: the two-stream host program runs and checks out") {
    const auto exe = std::filesystem::path(SFUMATO_BINARY).parent_path() / "host_two_streams";
    REQUIRE(std::filesystem::exists(exe));  // built by the default target (examples/host)
    CliResult r;
    const std::string cmd = "SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 " + exe.string() + " " + config("tiny") + " 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    REQUIRE(p);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
    const int status = pclose(p);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    INFO(r.output);
    CHECK(r.code == 0);
    CHECK_THAT(r.output, Catch::Contains("overlapped with the kernel: yes"));
    CHECK_THAT(r.output, Catch::Contains("waited for the kernel's event: yes"));
}
