// Helpers for tests that drive the sfumato CLI as a user would: run a command, capture its
// output and exit code, read the JSON it wrote, and load parameters of a preset.
#pragma once
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <nlohmann/json.hpp>
#include <string>
#include <sys/wait.h>
#include <system_error>
#include <vector>

namespace sfumato::test {

struct CliResult {
    int code = -1;
    std::string output;  // stdout and stderr
};

inline std::string source_dir() { return SFUMATO_SOURCE_DIR; }
inline std::string config(const std::string& preset) { return source_dir() + "/configs/" + preset + ".ini"; }

// Runs a shell command line as given (its redirections included) and returns what it wrote to
// stdout and its exit code (-1 when it did not exit normally).
inline CliResult run_command(const std::string& cmd) {
    CliResult r;
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) return r;
    std::array<char, 4096> buf;
    size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
    const int status = pclose(p);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

// A shell command line with stdout and stderr captured.
inline CliResult run_shell(const std::string& cmd) { return run_command(cmd + " 2>&1"); }

// `streams`: the shell redirection that picks what is captured (both by default).
inline CliResult run_cli(const std::string& args, const char* streams = "2>&1") {
    return run_command(std::string(SFUMATO_BINARY) + " " + args + " " + streams);
}

// Runs the CLI and returns its stdout only (stderr is dropped) and exit code.
inline CliResult run_cli_stdout(const std::string& args) { return run_cli(args, "2>/dev/null"); }

// The directories temp_dir() made in this process. The test main (tests/catch_main.cpp) removes
// them when every case passed, unless SFUMATO_KEEP_TEST_DIRS is set; a failing case keeps its
// outputs for inspection. (An installed Ascend C prefix alone is ~280 MB: left behind by every
// run, they filled the disk.)
inline std::vector<std::filesystem::path>& temp_dirs_made() {
    static std::vector<std::filesystem::path> dirs;
    return dirs;
}

// A fresh directory under the system's temporary directory, unique per test name and process.
inline std::string temp_dir(const std::string& name) {
    const auto d = std::filesystem::temp_directory_path() / ("sfumato_test_" + name + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(d);
    std::filesystem::create_directories(d);
    temp_dirs_made().push_back(d);
    return d.string();
}

inline void remove_temp_dirs() {
    std::error_code ec;
    for (const auto& d : temp_dirs_made()) std::filesystem::remove_all(d, ec);
    temp_dirs_made().clear();
}

// A file's whole text ("" when it cannot be read).
inline std::string read_text(const std::string& path) {
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

inline nlohmann::json read_json(const std::string& path) {
    std::ifstream f(path);
    return nlohmann::json::parse(f);
}

}  // namespace sfumato::test
