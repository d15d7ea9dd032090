#include "sweep/point_run.h"

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sim/error.h"
#include "sweep/process.h"
#include "traces/atomic_file.h"

namespace sfumato::sweep {

namespace fs = std::filesystem;

namespace {

nlohmann::json read_json(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) return nullptr;
    try {
        return nlohmann::json::parse(f);
    } catch (const nlohmann::json::exception&) {
        return nullptr;
    }
}

}  // namespace

void prepare_point(const std::string& dir, const Point& p, double timeout_seconds) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) throw SimError(kExitFailure, "cannot create '" + dir + "': " + ec.message());
    for (const char* f : {"status.json", "summary.json", "stdout.txt", "stderr.txt"}) fs::remove(fs::path(dir) / f, ec);
    nlohmann::json params = nlohmann::json::object();
    for (const auto& [k, v] : p.params) params[k] = v;
    const nlohmann::json j = {{"index", p.index}, {"params", params}, {"args", p.args}, {"timeout_seconds", timeout_seconds}};
    write_text_atomically(dir + "/point.json", j.dump(2) + "\n");
}

PointStatus read_status(const std::string& dir) {
    PointStatus s;
    const nlohmann::json j = read_json(dir + "/status.json");
    if (!j.is_object()) return s;
    try {
        s.present = true;
        s.state = j.at("state").get<std::string>();
        s.exit_code = j.at("exit_code").get<int>();
        s.wall_seconds = j.at("wall_seconds").get<double>();
        s.error = j.at("error").get<std::string>();
        s.args = j.at("args").get<std::vector<std::string>>();
    } catch (const nlohmann::json::exception&) {
        return PointStatus{};
    }
    return s;
}

bool point_complete(const std::string& dir, const Point& p) {
    const PointStatus s = read_status(dir);
    std::error_code ec;
    return s.ok() && s.args == p.args && fs::is_regular_file(dir + "/summary.json", ec);
}

PointStatus run_point(const std::string& binary, const std::string& dir, const std::atomic<bool>* stop) {
    PointStatus s;
    const nlohmann::json pj = read_json(dir + "/point.json");
    if (!pj.is_object() || !pj.contains("args")) throw InputError("'" + dir + "/point.json' is missing or malformed");
    s.args = pj.at("args").get<std::vector<std::string>>();
    const double timeout = pj.value("timeout_seconds", 0.0);
    std::vector<std::string> argv{binary};
    argv.insert(argv.end(), s.args.begin(), s.args.end());
    argv.push_back("--out");
    argv.push_back(dir);
    const auto t0 = std::chrono::steady_clock::now();
    const ExitInfo e = run_to_files(argv, dir + "/stdout.txt", dir + "/stderr.txt", timeout, stop);
    s.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    s.exit_code = e.code;
    const bool interrupted = e.stopped || (!e.timed_out && (e.signal == SIGINT || e.signal == SIGTERM)) ||
                             (stop && stop->load());
    if (interrupted) {
        s.state = "interrupted";
        return s;
    }
    std::error_code ec;
    if (e.code == 0 && !fs::is_regular_file(dir + "/summary.json", ec)) {
        s.state = "failed";
        s.error = "the command exited 0 but wrote no summary.json";
    } else if (e.code == 0) {
        s.state = "done";
    } else {
        s.state = e.timed_out ? "timeout" : "failed";
        s.error = !e.error.empty() ? e.error : file_tail(dir + "/stderr.txt", 20, 2000);
        if (s.error.empty()) s.error = file_tail(dir + "/stdout.txt", 20, 2000);
        if (e.timed_out) s.error = "killed after the time limit of " + std::to_string(timeout) + " s" + (s.error.empty() ? "" : "\n" + s.error);
    }
    s.present = true;
    const nlohmann::json j = {{"state", s.state},       {"exit_code", s.exit_code}, {"wall_seconds", s.wall_seconds},
                              {"error", s.error},       {"args", s.args}};
    write_text_atomically(dir + "/status.json", j.dump(2) + "\n");
    return s;
}

}  // namespace sfumato::sweep
