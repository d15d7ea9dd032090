// What an installed sfumato relies on, checked on the build tree's program: --version names the
// presets directory in use, a --config or --system value that is not a file is looked up there
// (by name, NAME.ini, or the docs' configs/NAME.ini from any working directory), and --help-all
// prints every registered command's help (the man page's text). The package test
// (tests/package/package_test.sh) runs the same from an installed package.
#include <catch2/catch.hpp>
#include <sstream>

#include "tests/support.h"

using namespace sfumato::test;

TEST_CASE("installation: --version: the version and the presets directory, the source tree's configs/ in a build tree") {
    const CliResult r = run_cli_stdout("--version");
    CHECK(r.code == 0);
    CHECK_THAT(r.output, Catch::StartsWith("sfumato "));
    CHECK_THAT(r.output, Catch::Contains("presets: " + source_dir() + "/configs\n"));
}

TEST_CASE("installation: --config and --system: a preset by name, NAME.ini or configs/NAME.ini from outside the source tree") {
    // CTest runs this in the build tree, which has no configs/ of its own.
    for (const char* c : {"tiny", "tiny.ini", "configs/tiny.ini", "configs/tiny"}) {
        INFO(c);
        const CliResult r = run_cli("info --config " + std::string(c));
        INFO(r.output);
        CHECK(r.code == 0);
    }
    const CliResult sys = run_cli("info --system system-tiny");
    INFO(sys.output);
    CHECK(sys.code == 0);
    const CliResult missing = run_cli("info --config no-such-chip");
    CHECK(missing.code == 2);
    CHECK_THAT(missing.output, Catch::Contains("'no-such-chip' not found"));
    CHECK_THAT(missing.output, Catch::Contains(source_dir() + "/configs"));
    const CliResult missing_sys = run_cli("info --system no-such-system");
    CHECK(missing_sys.code == 2);
    CHECK_THAT(missing_sys.output, Catch::Contains("'no-such-system' does not exist"));
}

TEST_CASE("installation: --help-all: every command's help with its options, kernel's run options included") {
    const CliResult list = run_cli_stdout("--help");
    REQUIRE(list.code == 0);
    const CliResult all = run_cli_stdout("--help-all");
    REQUIRE(all.code == 0);
    std::istringstream in(list.output);
    std::string line;
    int commands = 0;
    while (std::getline(in, line)) {
        if (line.size() < 3 || line.rfind("  ", 0) != 0 || line[2] == ' ') continue;  // a command line of the list
        const std::string name = line.substr(2, line.find(' ', 2) - 2);
        INFO(name);
        CHECK_THAT(all.output, Catch::Contains("== sfumato " + name + ": "));
        ++commands;
    }
    CHECK(commands >= 18);
    CHECK_THAT(all.output, Catch::Contains("--l2 arg"));
    CHECK_THAT(all.output, Catch::Contains("--max-cycles arg"));
}
