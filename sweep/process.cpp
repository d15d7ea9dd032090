#include "sweep/process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

extern char** environ;

namespace sfumato::sweep {

namespace {

using Clock = std::chrono::steady_clock;

std::vector<char*> c_argv(const std::vector<std::string>& argv) {
    std::vector<char*> v;
    for (const auto& a : argv) v.push_back(const_cast<char*>(a.c_str()));
    v.push_back(nullptr);
    return v;
}

int decode(int status, ExitInfo& info) {
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) {
        info.signal = WTERMSIG(status);
        return 128 + info.signal;
    }
    return 1;
}

// Waits for pid, polling so that a timeout or a stop request can end it. `drain` is called
// on every poll (to read a pipe).
void wait_child(pid_t pid, double timeout_seconds, const std::atomic<bool>* stop, ExitInfo& info,
                const std::function<void()>& drain = {}) {
    const auto start = Clock::now();
    Clock::time_point kill_at{};
    bool term_sent = false;
    for (;;) {
        int status = 0;
        const pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) {
            if (drain) drain();
            info.code = decode(status, info);
            return;
        }
        if (r < 0 && errno != EINTR) {
            info.code = 1;
            info.error = std::string("waitpid: ") + std::strerror(errno);
            return;
        }
        if (drain) drain();
        const auto now = Clock::now();
        const bool over = timeout_seconds > 0 && std::chrono::duration<double>(now - start).count() > timeout_seconds;
        const bool halt = stop && stop->load();
        if (!term_sent && (over || halt)) {
            info.timed_out = over && !halt;
            info.stopped = halt;
            kill(pid, SIGTERM);
            term_sent = true;
            kill_at = now + std::chrono::seconds(5);
        } else if (term_sent && now > kill_at) {
            kill(pid, SIGKILL);
            kill_at = now + std::chrono::hours(1);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(drain ? 5 : 20));
    }
}

}  // namespace

ExitInfo run_to_files(const std::vector<std::string>& argv, const std::string& out_file, const std::string& err_file,
                      double timeout_seconds, const std::atomic<bool>* stop) {
    ExitInfo info;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, out_file.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, err_file.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    std::vector<char*> args = c_argv(argv);
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        info.code = -1;
        info.error = "cannot start '" + argv[0] + "': " + std::strerror(rc);
        return info;
    }
    wait_child(pid, timeout_seconds, stop, info);
    return info;
}

ExitInfo run_capture(const std::vector<std::string>& argv, std::string* output, double timeout_seconds) {
    ExitInfo info;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        info.code = -1;
        info.error = std::string("pipe: ") + std::strerror(errno);
        return info;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
    std::vector<char*> args = c_argv(argv);
    pid_t pid = 0;
    const int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        info.code = -1;
        info.error = "cannot run '" + argv[0] + "': " + std::strerror(rc);
        return info;
    }
    fcntl(fds[0], F_SETFL, O_NONBLOCK);
    std::string out;
    auto drain = [&] {
        char buf[4096];
        for (;;) {
            const ssize_t n = read(fds[0], buf, sizeof buf);
            if (n <= 0) break;
            out.append(buf, static_cast<size_t>(n));
        }
    };
    wait_child(pid, timeout_seconds, nullptr, info, drain);
    close(fds[0]);
    if (output) *output = out;
    return info;
}

std::string file_tail(const std::string& path, size_t lines, size_t max_chars) {
    std::ifstream f(path, std::ios::binary);
    if (!f) return "";
    f.seekg(0, std::ios::end);
    const std::streamoff size = f.tellg();
    const std::streamoff from = size > static_cast<std::streamoff>(max_chars * 4) ? size - static_cast<std::streamoff>(max_chars * 4) : 0;
    f.seekg(from);
    std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
    size_t pos = s.size();
    for (size_t n = 0; n < lines && pos > 0; ++n) {
        const size_t nl = s.rfind('\n', pos - 1);
        if (nl == std::string::npos) {
            pos = 0;
            break;
        }
        pos = nl;
    }
    std::string tail = s.substr(pos);
    if (!tail.empty() && tail.front() == '\n') tail.erase(0, 1);
    if (tail.size() > max_chars) tail = "..." + tail.substr(tail.size() - max_chars);
    return tail;
}

std::string self_executable() {
    std::error_code ec;
    const auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::string() : p.string();
}

}  // namespace sfumato::sweep
