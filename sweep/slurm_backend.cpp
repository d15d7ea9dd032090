#include "sweep/slurm_backend.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "sim/error.h"
#include "sweep/point_run.h"
#include "sweep/process.h"
#include "traces/atomic_file.h"

namespace sfumato::sweep {

namespace fs = std::filesystem;

namespace {

constexpr double kCommandTimeout = 60;  // seconds for one sbatch/squeue/scontrol call

std::string sh_quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) {
        if (c == '\'') q += "'\\''";
        else q += c;
    }
    return q + "'";
}

void check_sbatch_path(const std::string& what, const std::string& p) {
    if (p.find_first_of(" \t\n\r\"'\\%") != std::string::npos)
        throw InputError("the Slurm backend needs " + what + " without spaces, quotes, backslashes or '%': '" + p + "'");
}

std::string field(const std::string& line, const std::string& key) {
    const std::string k = " " + key + "=";
    size_t p = line.find(k);
    if (p == std::string::npos) {
        if (line.rfind(key + "=", 0) != 0) return "";
        p = 0;
    } else {
        p += 1;
    }
    p += key.size() + 1;
    const size_t e = line.find(' ', p);
    return line.substr(p, e == std::string::npos ? std::string::npos : e - p);
}

// "3", "4-7", "4-7%2", "1,3,5-6" -> indices.
std::vector<size_t> parse_task_ids(std::string s) {
    std::vector<size_t> v;
    const size_t pct = s.find('%');
    if (pct != std::string::npos) s = s.substr(0, pct);
    std::stringstream ss(s);
    std::string part;
    while (std::getline(ss, part, ',')) {
        try {
            const size_t dash = part.find('-');
            if (dash == std::string::npos) {
                v.push_back(std::stoul(part));
            } else {
                const size_t lo = std::stoul(part.substr(0, dash)), hi = std::stoul(part.substr(dash + 1));
                for (size_t i = lo; i <= hi && i - lo < 1000000; ++i) v.push_back(i);
            }
        } catch (const std::exception&) {
        }
    }
    return v;
}

std::string job_file(const std::string& out_dir) { return out_dir + "/slurm/job.json"; }

struct SubmittedJob {
    std::string id;
    std::vector<size_t> indices;
};

SubmittedJob read_job(const std::string& out_dir) {
    SubmittedJob j;
    std::ifstream f(job_file(out_dir));
    if (!f) return j;
    try {
        const nlohmann::json d = nlohmann::json::parse(f);
        j.id = d.at("job_id").get<std::string>();
        j.indices = d.at("indices").get<std::vector<size_t>>();
    } catch (const nlohmann::json::exception&) {
        return SubmittedJob{};
    }
    return j;
}

// squeue's view of the job; false when squeue failed for another reason than the job being
// gone (then *error holds its output).
bool query_queue(const std::string& job, QueueCount& q, std::string* error) {
    std::string out;
    const ExitInfo e = run_capture({"squeue", "-h", "-r", "-j", job, "-o", "%i %T"}, &out, kCommandTimeout);
    if (e.code == 0) {
        q = parse_squeue(out);
        return true;
    }
    if (out.find("Invalid job id") != std::string::npos) {
        q = QueueCount{};
        return true;
    }
    if (error) *error = !e.error.empty() ? e.error : out;
    return false;
}

}  // namespace

std::string array_ranges(const std::vector<size_t>& indices) {
    std::string s;
    for (size_t i = 0; i < indices.size();) {
        size_t j = i;
        while (j + 1 < indices.size() && indices[j + 1] == indices[j] + 1) ++j;
        if (!s.empty()) s += ",";
        s += std::to_string(indices[i]);
        if (j > i) s += "-" + std::to_string(indices[j]);
        i = j + 1;
    }
    return s;
}

std::string sbatch_script(const Spec& spec, const std::string& binary, const std::string& out_dir,
                          const std::string& workdir, const std::vector<size_t>& indices, size_t num_points,
                          const std::string& job_name) {
    check_sbatch_path("the out directory", out_dir);
    check_sbatch_path("the working directory", workdir);
    const SlurmOptions& o = spec.slurm;
    std::string s = "#!/bin/sh\n";
    s += "# sfumato sweep " + spec.path + ": one array task per point (written by sfumato sweep --backend slurm)\n";
    s += "#SBATCH --job-name=" + job_name + "\n";
    s += "#SBATCH --array=" + array_ranges(indices) + (o.max_parallel ? "%" + std::to_string(o.max_parallel) : "") + "\n";
    s += "#SBATCH --output=" + out_dir + "/slurm/%A_%a.out\n";
    s += "#SBATCH --chdir=" + workdir + "\n";
    s += "#SBATCH --ntasks=1\n";
    s += "#SBATCH --cpus-per-task=" + std::to_string(o.cpus_per_task) + "\n";
    if (!o.partition.empty()) s += "#SBATCH --partition=" + o.partition + "\n";
    if (!o.time.empty()) s += "#SBATCH --time=" + o.time + "\n";
    if (!o.mem.empty()) s += "#SBATCH --mem=" + o.mem + "\n";
    if (!o.account.empty()) s += "#SBATCH --account=" + o.account + "\n";
    if (!o.qos.empty()) s += "#SBATCH --qos=" + o.qos + "\n";
    for (const auto& x : o.extra) s += "#SBATCH " + x + "\n";
    std::string width = point_name(0, num_points);
    s += "exec " + sh_quote(binary) + " sweep --run-point \"" + out_dir + "/points/$(printf 'p%0" +
         std::to_string(width.size() - 1) + "d' \"$SLURM_ARRAY_TASK_ID\")\"\n";
    return s;
}

std::vector<SlurmTask> parse_scontrol_tasks(const std::string& text) {
    std::vector<SlurmTask> v;
    std::stringstream ss(text);
    std::string line;
    while (std::getline(ss, line)) {
        const std::string ids = field(line, "ArrayTaskId");
        if (ids.empty()) continue;
        for (size_t i : parse_task_ids(ids)) {
            SlurmTask t;
            t.index = i;
            t.state = field(line, "JobState");
            t.reason = field(line, "Reason");
            t.exit_code = field(line, "ExitCode");
            v.push_back(t);
        }
    }
    return v;
}

QueueCount parse_squeue(const std::string& text) {
    QueueCount q;
    std::stringstream ss(text);
    std::string id, state;
    while (ss >> id >> state) {
        if (state == "PENDING" || state == "REQUEUED" || state == "CONFIGURING") ++q.pending;
        else if (state == "RUNNING" || state == "COMPLETING") ++q.running;
        else ++q.other;
    }
    return q;
}

std::string live_job(const std::string& out_dir) {
    const SubmittedJob j = read_job(out_dir);
    if (j.id.empty()) return "";
    QueueCount q;
    std::string err;
    if (!query_queue(j.id, q, &err))
        throw SimError(kExitFailure, "squeue failed for the sweep's earlier job " + j.id + ": " + err);
    return q.total() > 0 ? j.id : "";
}

SlurmOutcome run_slurm(const Spec& spec, const std::string& binary, const std::string& out_dir,
                       const std::vector<size_t>& indices_in, size_t num_points, const std::string& job_id_in,
                       Progress& progress, const std::atomic<bool>& stop) {
    SlurmOutcome outcome;
    std::string job_id = job_id_in;
    std::vector<size_t> indices = indices_in;
    std::error_code ec;
    fs::create_directories(out_dir + "/slurm", ec);
    if (ec) throw SimError(kExitFailure, "cannot create '" + out_dir + "/slurm': " + ec.message());
    if (job_id.empty()) {
        const std::string script_path = out_dir + "/slurm/sweep.sbatch";
        const std::string name = "sfumato-sweep-" + fs::path(out_dir).filename().string();
        write_text_atomically(script_path, sbatch_script(spec, binary, out_dir, fs::current_path().string(), indices,
                                                         num_points, name));
        std::string out;
        const ExitInfo e = run_capture({"sbatch", "--parsable", script_path}, &out, kCommandTimeout);
        if (e.code != 0)
            throw SimError(kExitFailure, "sbatch failed (exit " + std::to_string(e.code) + "): " + (e.error.empty() ? out : e.error));
        job_id = out.substr(0, out.find_first_of(";\n\r "));
        if (job_id.empty() || job_id.find_first_not_of("0123456789") != std::string::npos)
            throw SimError(kExitFailure, "sbatch printed no job id: '" + out + "'");
        const nlohmann::json j = {{"job_id", job_id}, {"indices", indices}, {"script", script_path}};
        write_text_atomically(job_file(out_dir), j.dump(2) + "\n");
        progress.message("sweep: submitted job array " + job_id + " (" + std::to_string(indices.size()) + " tasks, " +
                         script_path + ")");
    } else {
        indices = read_job(out_dir).indices;
        progress.message("sweep: following job " + job_id + ", submitted earlier (" + std::to_string(indices.size()) + " tasks)");
    }

    std::set<size_t> reported;
    auto report_new = [&] {
        for (size_t i : indices) {
            if (reported.count(i)) continue;
            const std::string dir = out_dir + "/points/" + point_name(i, num_points);
            const PointStatus s = read_status(dir);
            if (!s.present) continue;
            reported.insert(i);
            std::string params;
            if (std::ifstream f(dir + "/point.json"); f) {
                try {
                    // Named: a range-for keeps only the last temporary of its range alive.
                    const nlohmann::json point = nlohmann::json::parse(f);
                    for (const auto& [k, v] : point.at("params").items())
                        params += (params.empty() ? "" : " ") + k + "=" + v.get<std::string>();
                } catch (const nlohmann::json::exception&) {
                }
            }
            progress.finished(point_name(i, num_points), params, s);
        }
    };
    int failures = 0;
    std::string last_error;
    const auto poll = std::chrono::milliseconds(static_cast<long>(spec.slurm.poll_seconds * 1000));
    for (;;) {
        QueueCount q;
        if (query_queue(job_id, q, &last_error)) {
            failures = 0;
            progress.set_parallel(static_cast<unsigned>(std::max<size_t>(1, q.running)));
            progress.set_running(q.running);
            report_new();
            if (q.total() == 0) break;
        } else if (++failures >= 10) {
            throw SimError(kExitFailure, "lost contact with Slurm while following job " + job_id + " (squeue: " + last_error +
                                             "); rerun the same command to follow it again");
        }
        for (auto waited = std::chrono::milliseconds(0); waited < poll && !stop.load(); waited += std::chrono::milliseconds(100))
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        if (stop.load()) {
            progress.message("sweep: stopped following job " + job_id +
                             "; it keeps running on Slurm: rerun the same command to follow it and gather the results");
            outcome.interrupted = true;
            return outcome;
        }
    }
    report_new();
    progress.set_running(0);
    // Tasks that left the queue without a status: ask scontrol how they ended.
    std::vector<size_t> missing;
    for (size_t i : indices)
        if (!reported.count(i)) missing.push_back(i);
    if (missing.empty()) return outcome;
    std::string out;
    run_capture({"scontrol", "-o", "show", "job", job_id}, &out, kCommandTimeout);
    std::map<size_t, SlurmTask> tasks;
    for (const auto& t : parse_scontrol_tasks(out)) tasks[t.index] = t;
    for (size_t i : missing) {
        const std::string task = job_id + "_" + std::to_string(i);
        const std::string task_out = out_dir + "/slurm/" + task + ".out";
        std::string state, msg;
        if (auto it = tasks.find(i); it != tasks.end()) {
            state = it->second.state;
            msg = "Slurm task " + task + " ended " + state +
                  (it->second.reason.empty() || it->second.reason == "None" ? "" : " (" + it->second.reason + ")") +
                  (it->second.exit_code.empty() ? "" : ", exit code " + it->second.exit_code) + " without a result";
        } else if (!fs::exists(task_out, ec)) {
            // A pending array task that is cancelled leaves no job record (and, without
            // accounting, no trace at all); a task that started has its output file.
            state = "CANCELLED";
            msg = "Slurm task " + task + " left the queue without starting: CANCELLED while pending";
        } else {
            state = "LOST";
            msg = "Slurm task " + task + " started but ended without a result, and scontrol no longer knows it";
        }
        const std::string tail = file_tail(task_out, 10, 1500);
        if (!tail.empty()) msg += "\n" + tail;
        for (auto& c : state) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        outcome.errors[i] = msg;
        outcome.states[i] = state;
        PointStatus s;
        s.state = state;
        s.error = msg;
        progress.finished(point_name(i, num_points), "", s);
    }
    return outcome;
}

}  // namespace sfumato::sweep
