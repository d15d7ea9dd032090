// For CLI regression tests (Catch2): run a command that must succeed with `--out` a fresh
// directory and return the summary.json it wrote; the command and its output are the failure's
// context. Also the tiny system (configs/system-tiny.ini) the several-chip tests run on.
#pragma once
#include <catch2/catch.hpp>
#include <string>

#include "tests/support.h"

namespace sfumato::test {

inline nlohmann::json summary_of(const std::string& args, const std::string& name) {
    const std::string out = temp_dir(name);
    const CliResult r = run_cli(args + " --out " + out);
    INFO(args << "\n" << r.output);
    REQUIRE(r.code == 0);
    return read_json(out + "/summary.json");
}

// `--system <tiny system> --trace off `, ready to be followed by more options.
inline std::string tiny_system() { return "--system " + config("system-tiny") + " --trace off "; }

}  // namespace sfumato::test
