// Child processes for the sweep: spawn a program with its output in files, wait for it with an
// optional time limit and a stop flag, or run a short command and capture its output (sbatch,
// squeue, scontrol). POSIX only; no shell is involved, so arguments are never re-parsed.
#pragma once
#include <atomic>
#include <string>
#include <vector>

namespace sfumato::sweep {

struct ExitInfo {
    int code = 0;          // exit status; 128 + signal when killed by a signal; -1 if not started
    int signal = 0;        // the signal that ended it, if any
    bool timed_out = false;
    bool stopped = false;  // ended because *stop became true
    std::string error;     // why it could not start
};

// Runs argv[0] (a path) with stdin from /dev/null and stdout/stderr appended to the given files.
// Polls the child: past timeout_seconds (> 0) or once *stop is set it is sent SIGTERM, then
// SIGKILL 5 s later.
ExitInfo run_to_files(const std::vector<std::string>& argv, const std::string& out_file, const std::string& err_file,
                      double timeout_seconds, const std::atomic<bool>* stop);

// Runs argv[0] (looked up in PATH) and returns its exit code; stdout and stderr together in
// *output. Killed after timeout_seconds.
ExitInfo run_capture(const std::vector<std::string>& argv, std::string* output, double timeout_seconds);

// The last `lines` lines of a text file (at most max_chars characters, cut at the front).
std::string file_tail(const std::string& path, size_t lines, size_t max_chars);

// This program's own executable (for re-executing it).
std::string self_executable();

}  // namespace sfumato::sweep
