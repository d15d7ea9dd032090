// `sfumato sweep SPEC.ini --out DIR [-j N] [--backend local|slurm]`: runs one command over a grid
// of parameters (sweep/spec.h), each point as its own process with its own out directory
// (DIR/points/pNNNN), and gathers the results into DIR/sweep.csv and DIR/sweep.h5. Before any
// point runs, every point's command line is checked in-process by the command itself (its
// arguments, and every config key against the parameters it reads): a bad spec exits 2 and
// runs nothing. Complete points are skipped on a rerun; a failed point is recorded with its exit
// code and the tail of its stderr while the others go on (exit 1 at the end). The local backend
// is a process pool; the Slurm backend submits one job array (sweep/slurm_backend.h), whose
// tasks come back here as `sfumato sweep --run-point DIR/points/pNNNN`.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <thread>

#include "cli/command.h"
#include "cli/session.h"
#include "sim/error.h"
#include "sweep/gather.h"
#include "sweep/local_backend.h"
#include "sweep/point_run.h"
#include "sweep/process.h"
#include "sweep/progress.h"
#include "sweep/slurm_backend.h"
#include "sweep/spec.h"
#include "traces/atomic_file.h"

namespace sfumato::cli {

namespace {

namespace fs = std::filesystem;
using namespace sfumato::sweep;

// Commands a sweep can run: those that stop at validation (they elaborate a Session, or call
// stop_if_validating).
const std::set<std::string> kSweepable = {"kernel", "replay", "membench", "asm", "run"};

std::atomic<bool> g_stop{false};
std::atomic<int> g_sweep_signal{0};

extern "C" void on_signal(int sig) {
    g_sweep_signal.store(sig);
    g_stop.store(true);
}

struct SignalGuard {
    struct sigaction old_int{}, old_term{};
    SignalGuard() {
        struct sigaction sa{};
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, &old_int);
        sigaction(SIGTERM, &sa, &old_term);
    }
    ~SignalGuard() {
        sigaction(SIGINT, &old_int, nullptr);
        sigaction(SIGTERM, &old_term, nullptr);
    }
};

void validate_points(const Spec& spec, const std::vector<Point>& points) {
    const std::string& cmd = spec.command.front();
    if (!kSweepable.count(cmd)) {
        throw InputError(spec.path + ": command '" + cmd + "' cannot be swept (" +
                         (find_command(cmd) ? std::string("it runs no simulation") : std::string("no such command")) +
                         "; sweepable: kernel, replay, membench, asm, run)");
    }
    const CommandFn* fn = find_command(cmd);
    if (!fn) throw InputError(spec.path + ": no command '" + cmd + "' in this sfumato");
    struct Reset {
        ~Reset() { set_validation_only(false); }
    } reset;
    set_validation_only(true);
    for (const Point& p : points) {
        const std::vector<std::string> args(p.args.begin() + 1, p.args.end());
        const std::string where = spec.path + ": point " + point_name(p.index, points.size()) +
                                  (p.params.empty() ? "" : " (" + params_text(p) + ")");
        bool stopped = false;
        try {
            (*fn)(args);
        } catch (const ValidationDone&) {
            stopped = true;
        } catch (const SimError& e) {
            throw InputError(where + ": " + e.what());
        } catch (const std::exception& e) {
            throw InputError(where + ": " + e.what());
        }
        if (!stopped) throw InputError(where + ": the command returned without reading its parameters (is --help in the command?)");
    }
}

// Holds DIR/.sweep.lock for the life of the sweep: two sweeps never write one directory.
class DirLock {
public:
    explicit DirLock(const std::string& dir) {
        const std::string path = dir + "/.sweep.lock";
        m_fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (m_fd < 0) throw SimError(kExitFailure, "cannot open '" + path + "'");
        if (flock(m_fd, LOCK_EX | LOCK_NB) != 0)
            throw SimError(kExitFailure, "another sweep is running in '" + dir + "' (" + path + " is locked)");
    }
    ~DirLock() {
        if (m_fd >= 0) ::close(m_fd);
    }
    DirLock(const DirLock&) = delete;
    DirLock& operator=(const DirLock&) = delete;

private:
    int m_fd = -1;
};

int run_point_task(const std::string& dir) {
    SignalGuard guard;
    const PointStatus s = run_point(self_executable(), dir, &g_stop);
    if (s.state == "interrupted") return 128 + (g_sweep_signal.load() ? g_sweep_signal.load() : SIGTERM);
    std::fprintf(stderr, "sfumato sweep: %s %s (exit %d, %.1f s)\n", dir.c_str(), s.state.c_str(), s.exit_code, s.wall_seconds);
    if (!s.ok() && !s.error.empty()) std::fprintf(stderr, "%s\n", s.error.c_str());
    return s.ok() ? kExitOk : (s.exit_code > 0 && s.exit_code < 256 ? s.exit_code : kExitFailure);
}

std::string quote_args(const std::vector<std::string>& a) {
    std::string s = "sfumato";
    for (const auto& x : a) s += " " + (x.find_first_of(" \t'\"") == std::string::npos ? x : "'" + x + "'");
    return s;
}

int cmd_sweep(const std::vector<std::string>& args) {
    std::string spec_path, out, backend = "local", run_point_dir;
    unsigned jobs = 0;
    bool list = false;
    po::options_description d("sfumato sweep");
    d.add_options()("spec", po::value<std::string>(&spec_path), "sweep spec (INI: [sweep] command/config, [grid], [zip], [slurm])")(
        "out", po::value<std::string>(&out), "output directory: points/pNNNN/, sweep.csv, sweep.h5")(
        "jobs,j", po::value<unsigned>(&jobs)->default_value(0), "points run at once by the local backend (0: one per CPU)")(
        "backend", po::value<std::string>(&backend)->default_value("local"), "local (process pool) | slurm (one job array)")(
        "list", po::bool_switch(&list), "check the spec, print every point's command line and stop")(
        "run-point", po::value<std::string>(&run_point_dir), "run one prepared point directory (what a Slurm array task does)");
    po::positional_options_description pos;
    pos.add("spec", 1);
    po::variables_map vm;
    if (!parse_command(args, "sfumato sweep SPEC.ini --out DIR [-j N] [--backend local|slurm] [--list]", d, vm, &pos))
        return kExitOk;
    if (!run_point_dir.empty()) return run_point_task(run_point_dir);
    if (spec_path.empty()) throw InputError("sweep needs a spec file (sfumato sweep SPEC.ini --out DIR)");
    if (backend != "local" && backend != "slurm") throw InputError("--backend must be local or slurm, not '" + backend + "'");
    if (out.empty() && !list) throw InputError("sweep needs --out DIR");

    const Spec spec = load_spec(spec_path);
    const std::vector<Point> points = expand(spec);
    validate_points(spec, points);
    const size_t n = points.size();
    if (list) {
        for (const Point& p : points) std::printf("%s  %s\n", point_name(p.index, n).c_str(), quote_args(p.args).c_str());
        return kExitOk;
    }

    std::error_code ec;
    fs::create_directories(out + "/points", ec);
    if (ec) throw SimError(kExitFailure, "cannot create '" + out + "/points': " + ec.message());
    out = fs::absolute(out, ec).lexically_normal().string();
    if (!out.empty() && out.back() == '/') out.pop_back();
    DirLock lock(out);
    {
        std::ifstream f(spec_path, std::ios::binary);
        std::stringstream ss;
        ss << f.rdbuf();
        write_text_atomically(out + "/spec.ini", ss.str());
    }
    const std::string binary = self_executable();
    if (binary.empty()) throw SimError(kExitFailure, "cannot find the sfumato executable (/proc/self/exe)");
    auto dir_of = [&](size_t i) { return out + "/points/" + point_name(i, n); };
    std::vector<bool> complete(n);
    for (size_t i = 0; i < n; ++i) complete[i] = point_complete(dir_of(i), points[i]);

    const bool terminal = isatty(STDERR_FILENO) != 0;
    SignalGuard guard;
    g_stop.store(false);
    g_sweep_signal.store(0);
    std::map<size_t, std::string> slurm_errors, slurm_states;
    bool interrupted = false;
    size_t ran = 0;
    if (backend == "slurm") {
        const std::string live = live_job(out);
        std::vector<size_t> indices;
        if (!live.empty()) {
            // An earlier invocation's job still runs: follow it, submit nothing.
            std::ifstream f(out + "/slurm/job.json");
            for (size_t i : nlohmann::json::parse(f).at("indices").get<std::vector<size_t>>())
                if (i < n) indices.push_back(i);
        } else {
            for (size_t i = 0; i < n; ++i)
                if (!complete[i]) indices.push_back(i);
        }
        std::set<size_t> in_job(indices.begin(), indices.end());
        size_t skipped = 0;
        for (size_t i = 0; i < n; ++i) skipped += complete[i] && !in_job.count(i);
        sweep::Progress progress(n, skipped, std::max<unsigned>(1, spec.slurm.max_parallel), terminal);
        if (indices.empty()) {
            progress.message("sweep: all " + std::to_string(n) + " points are complete; nothing to run");
        } else {
            if (live.empty())
                for (size_t i : indices) prepare_point(dir_of(i), points[i], spec.timeout_seconds);
            const SlurmOutcome o = run_slurm(spec, binary, out, indices, n, live, progress, g_stop);
            slurm_errors = o.errors;
            slurm_states = o.states;
            interrupted = o.interrupted;
            ran = indices.size();
            progress.done();
        }
    } else {
        std::vector<const Point*> todo;
        std::vector<std::string> dirs;
        for (size_t i = 0; i < n; ++i) {
            if (complete[i]) continue;
            todo.push_back(&points[i]);
            dirs.push_back(dir_of(i));
        }
        const unsigned j = jobs ? jobs : std::max(1u, std::thread::hardware_concurrency());
        sweep::Progress progress(n, n - todo.size(), std::min<unsigned>(j, static_cast<unsigned>(std::max<size_t>(1, todo.size()))),
                          terminal);
        if (todo.empty()) {
            progress.message("sweep: all " + std::to_string(n) + " points are complete; nothing to run");
        } else {
            for (size_t k = 0; k < todo.size(); ++k) prepare_point(dirs[k], *todo[k], spec.timeout_seconds);
            run_local(binary, todo, dirs, j, progress, g_stop);
            ran = todo.size();
            progress.done();
        }
        interrupted = g_stop.load();
    }

    const Table t = gather(spec, points, out, slurm_errors, slurm_states);
    write_results(out, t);
    const TableColumn* status = t.find("status");
    const TableColumn* err = t.find("error");
    size_t done = 0;
    std::vector<size_t> failed;
    for (size_t r = 0; r < t.rows(); ++r) {
        if (status->texts[r] == "done") ++done;
        else failed.push_back(r);
    }
    std::printf("sweep %s: %zu points, %zu done, %zu not done (%zu run now, %zu complete from before)\n", spec.path.c_str(), n,
                done, failed.size(), ran, static_cast<size_t>(std::count(complete.begin(), complete.end(), true)));
    for (size_t r : failed) {
        std::string e = err->texts[r];
        const size_t nl = e.rfind('\n');
        if (nl != std::string::npos) e = e.substr(nl + 1);
        std::printf("  %s %s%s\n", t.find("name")->texts[r].c_str(), status->texts[r].c_str(), e.empty() ? "" : (": " + e).c_str());
    }
    std::printf("  wrote %s/sweep.csv and %s/sweep.h5\n", out.c_str(), out.c_str());
    if (interrupted) {
        const int sig = g_sweep_signal.load() ? g_sweep_signal.load() : SIGINT;
        std::fprintf(stderr, "sfumato sweep: interrupted; rerun the same command to continue\n");
        return 128 + sig;
    }
    return failed.empty() ? kExitOk : kExitFailure;
}

}  // namespace

SFUMATO_COMMAND("sweep", "run a command over a grid of parameters (process pool or Slurm) and gather a table", cmd_sweep);

}  // namespace sfumato::cli
