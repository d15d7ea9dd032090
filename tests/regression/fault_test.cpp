// Fault cases through the CLI: an output directory on a full file system and on a read-only one,
// SIGINT and SIGTERM during a long run, device memory exhausted, and kernels that never end.
// Each checks the documented exit code and that no partial output remains: a run's outputs are
// all present and complete, or none is.
// Full and read-only file systems are made with a private mount namespace (`unshare -m` + a small
// tmpfs) where the machine allows it; otherwise with a file-size limit (`ulimit -f`, EFBIG
// instead of ENOSPC) and a directory without write permission (in a user namespace when running
// as root, where permission bits do not stop writes). The method used is printed.
#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <spawn.h>
#include <thread>
#include <unistd.h>

#include "tests/support.h"

using namespace sfumato::test;
namespace fs = std::filesystem;

extern char** environ;

namespace {

// Runs a /bin/sh script; output and exit code.
CliResult run_sh(const std::string& script) {
    const std::string path = temp_dir("fault_sh") + "/script.sh";
    {
        std::ofstream f(path);
        f << script;
    }
    return run_shell("sh " + path);
}

std::string sfumato() { return SFUMATO_BINARY; }

// A private mount namespace where tmpfs can be mounted (root in a container may not have it).
bool can_mount() {
    static const bool ok = run_sh("unshare -m sh -c 'd=$(mktemp -d) && mount -t tmpfs -o size=64k tmpfs $d && umount $d; "
                                  "r=$?; rmdir $d; exit $r'")
                               .code == 0;
    return ok;
}

// The files under dir (recursively), as paths relative to it.
std::vector<std::string> files_under(const std::string& dir) {
    std::vector<std::string> out;
    if (!fs::exists(dir)) return out;
    for (const auto& e : fs::recursive_directory_iterator(dir))
        if (e.is_regular_file()) out.push_back(fs::relative(e.path(), dir).string());
    return out;
}

// Parses "rc=N" and the file list "files:" ... "end" that the scripts below print.
struct ShOutcome {
    int rc = -1;
    std::vector<std::string> files;
    std::string text;
};
ShOutcome outcome(const CliResult& r) {
    ShOutcome o;
    o.text = r.output;
    const size_t p = r.output.find("rc=");
    if (p != std::string::npos) o.rc = std::atoi(r.output.c_str() + p + 3);
    const size_t f = r.output.find("files:\n");
    if (f != std::string::npos) {
        std::istringstream in(r.output.substr(f + 7));
        for (std::string line; std::getline(in, line) && line != "end";) o.files.push_back(line);
    }
    return o;
}

// A kernel run with a large trace.json (instruction level), on the tiny preset.
std::string add_run(const std::string& out) {
    return sfumato() + " kernel add --n 65536 --dtype fp16 --config " + config("tiny") + " --trace instr --out " + out;
}

}  // namespace

TEST_CASE("fault: output on a full file system exits 2 and leaves no file") {
    const std::string dir = temp_dir("fault_full");
    std::string script;
    if (can_mount()) {
        WARN("full file system: a 32 KiB tmpfs in a private mount namespace");
        script = "unshare -m sh -c 'mount -t tmpfs -o size=32k tmpfs " + dir + " && " + add_run(dir + "/out") +
                 "; echo rc=$?; echo files:; find " + dir + " -type f; echo end'\n";
    } else {
        WARN("full file system: no mount here; a 32 KiB file-size limit (ulimit -f) instead");
        script = "ulimit -f 64; " + add_run(dir + "/out") + "; echo rc=$?; echo files:; find " + dir + " -type f; echo end\n";
    }
    const ShOutcome o = outcome(run_sh(script));
    INFO(o.text);
    CHECK(o.rc == 2);
    CHECK(o.files.empty());
    CHECK((o.text.find("No space left") != std::string::npos || o.text.find("File too large") != std::string::npos ||
           o.text.find("cannot write") != std::string::npos));
    // The same run with room writes all four files.
    const std::string ok_dir = dir + "/roomy";
    const CliResult r = run_sh(add_run(ok_dir));
    CHECK(r.code == 0);
    CHECK(files_under(ok_dir).size() == 4);
}

TEST_CASE("fault: output on a read-only file system exits 2 and leaves no file") {
    const std::string dir = temp_dir("fault_ro");
    std::string script;
    if (can_mount()) {
        WARN("read-only file system: a tmpfs remounted read-only in a private mount namespace");
        // Both an output directory to create and one that exists already.
        script = "unshare -m sh -c 'mount -t tmpfs -o size=1m tmpfs " + dir + " && mkdir " + dir + "/exists && mount -o remount,ro " +
                 dir + " && " + add_run(dir + "/new") + "; echo rc=$?; " + add_run(dir + "/exists") +
                 "; echo rc2=$?; echo files:; find " + dir + " -type f; echo end'\n";
    } else if (::geteuid() == 0) {
        WARN("read-only file system: no mount here; a directory without write permission, as root in a user namespace");
        script = "mkdir " + dir + "/exists && chmod 555 " + dir + " " + dir + "/exists && unshare -U sh -c '" + add_run(dir + "/new") +
                 "; echo rc=$?; " + add_run(dir + "/exists") + "; echo rc2=$?'; echo files:; find " + dir +
                 " -type f; echo end; chmod 755 " + dir + " " + dir + "/exists\n";
    } else {
        WARN("read-only file system: a directory without write permission");
        script = "mkdir " + dir + "/exists && chmod 555 " + dir + " " + dir + "/exists && { " + add_run(dir + "/new") + "; echo rc=$?; " +
                 add_run(dir + "/exists") + "; echo rc2=$?; }; echo files:; find " + dir + " -type f; echo end; chmod 755 " + dir +
                 " " + dir + "/exists\n";
    }
    const ShOutcome o = outcome(run_sh(script));
    INFO(o.text);
    CHECK(o.rc == 2);
    const size_t p2 = o.text.find("rc2=");
    REQUIRE(p2 != std::string::npos);
    CHECK(std::atoi(o.text.c_str() + p2 + 4) == 2);
    CHECK(o.files.empty());
    CHECK(o.text.find("output directory") != std::string::npos);
}

namespace {

// Starts sfumato with args, sends sig after delay, returns its exit status; output in log.
int interrupt_run(const std::vector<std::string>& args, int sig, std::chrono::milliseconds delay, const std::string& log,
                  double& seconds_to_stop) {
    std::vector<std::string> argv_s = {sfumato()};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
    pid_t pid = 0;
    REQUIRE(posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ) == 0);
    posix_spawn_file_actions_destroy(&fa);
    std::this_thread::sleep_for(delay);
    ::kill(pid, sig);
    const auto t0 = std::chrono::steady_clock::now();
    int status = 0;
    ::waitpid(pid, &status, 0);
    seconds_to_stop = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// A run of many seconds: 3 x 256 MiB of fp32 through the tiny chip's memory, no data.
std::vector<std::string> long_run(const std::string& out) {
    return {"kernel", "add", "--n", "67108864", "--dtype", "fp32", "--config", config("tiny"), "--mode", "timing", "--out", out};
}

// A several-chip run of many seconds: all-reduces of 64 MiB on the tiny system's links, 1000 times.
std::vector<std::string> long_system_run(const std::string& out) {
    return {"collective", "all_reduce", "--bytes", "67108864", "--iters", "1000", "--system", config("system-tiny"),
            "--mode", "timing", "--out", out};
}

void check_interrupt(int sig, int expect_code) {
    const std::string dir = temp_dir(sig == SIGINT ? "fault_sigint" : "fault_sigterm");
    double stop_s = 0;
    const int code = interrupt_run(long_run(dir + "/out"), sig, std::chrono::milliseconds(1500), dir + "/log", stop_s);
    const std::string log = read_text(dir + "/log");
    INFO(log);
    CHECK(code == expect_code);
    CHECK(log.find("interrupted by") != std::string::npos);
    // Interrupted before its end: no output at all (complete outputs would be all four files).
    CHECK(files_under(dir + "/out").empty());
    // It stops within a simulation step, not at the end of the run.
    CHECK(stop_s < 20.0);
}

}  // namespace

TEST_CASE("fault: SIGINT during a long run exits 130 and leaves no output") { check_interrupt(SIGINT, 130); }

TEST_CASE("fault: SIGTERM during a long run exits 143 and leaves no output") { check_interrupt(SIGTERM, 143); }

TEST_CASE("fault: device memory exhausted is the runtime's error (exit 2), not a crash") {
    const std::string dir = temp_dir("fault_oom");
    // Three 1 GiB fp32 tensors on the tiny chip's 1 GiB of device memory.
    const CliResult r = run_cli("kernel add --n 268435456 --dtype fp32 --config " + config("tiny") + " --mode timing --out " + dir + "/out");
    INFO(r.output);
    CHECK(r.code == 2);
    CHECK(r.output.find("device memory exhausted") != std::string::npos);
    CHECK(files_under(dir + "/out").empty());
    // The same through a workload file: the copy that does not fit is named.
    const std::string w = dir + "/w.json";
    std::ofstream(w) << R"({"format": "sfumato-workload", "version": 1, "streams": [{"id": 0}],
        "tasks": [{"kind": "memcpy", "stream": 0, "dir": "h2d", "bytes": 2147483648}]})";
    const CliResult r2 = run_cli("replay " + w + " --config " + config("tiny") + " --mode timing --out " + dir + "/out2");
    INFO(r2.output);
    CHECK(r2.code == 2);
    CHECK(r2.output.find("task 0") != std::string::npos);
    CHECK(files_under(dir + "/out2").empty());
}

TEST_CASE("fault: a kernel that never ends gives the deadlock report (exit 4) and no output") {
    const std::string dir = temp_dir("fault_deadlock");
    const CliResult r = run_cli("asm " + source_dir() + "/examples/asm/deadlock.s --config " + config("tiny") + " --out " + dir + "/out");
    INFO(r.output);
    CHECK(r.code == 4);
    CHECK(r.output.find("deadlock") != std::string::npos);
    CHECK(files_under(dir + "/out").empty());
}

TEST_CASE("fault: a kernel still running at --max-cycles gives the timeout report (exit 4) and no output") {
    const std::string dir = temp_dir("fault_timeout");
    const std::string prog = dir + "/long.s";
    // Far more vector work than the limit allows: 2000 x 32 repeats of at least a cycle each.
    std::ofstream(prog) << ".kind vector\n.rep 2000\nvadd.fp16 ub[0x0], ub[0x2000], ub[0x4000], repeat=32\n.endr\n";
    const uint64_t limit = 5000;
    const CliResult r = run_cli("asm " + prog + " --config " + config("tiny") + " --max-cycles " + std::to_string(limit) + " --out " +
                                dir + "/out");
    INFO(r.output);
    CHECK(r.code == 4);
    CHECK(r.output.find("timeout") != std::string::npos);
    CHECK(r.output.find("--max-cycles " + std::to_string(limit)) != std::string::npos);
    CHECK(files_under(dir + "/out").empty());
    // Without the limit the same program finishes, beyond it.
    const CliResult ok = run_cli("asm " + prog + " --config " + config("tiny") + " --mode timing --out " + dir + "/ok");
    REQUIRE(ok.code == 0);
    CHECK(read_json(dir + "/ok/summary.json")["total_cycles"].get<uint64_t>() > limit);
}

// The system driver (cli/system_session.cpp) polls for a stop between steps of its slices too.
TEST_CASE("fault: SIGTERM during a several-chip run exits 143 soon and leaves no output") {
    const std::string dir = temp_dir("fault_sigterm_system");
    double stop_s = 0;
    const int code =
        interrupt_run(long_system_run(dir + "/out"), SIGTERM, std::chrono::milliseconds(1500), dir + "/log", stop_s);
    const std::string log = read_text(dir + "/log");
    INFO(log);
    CHECK(code == 143);
    CHECK(log.find("interrupted by") != std::string::npos);
    CHECK(files_under(dir + "/out").empty());
    CHECK(stop_s < 20.0);
}
