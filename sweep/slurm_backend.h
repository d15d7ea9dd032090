// The Slurm backend: the points to run become one job array (one task per point, resources
// from the spec's [slurm] section) written to DIR/slurm/sweep.sbatch and submitted with
// sbatch. Each array task runs `sfumato sweep --run-point DIR/points/pNNNN`, which runs the
// point exactly as the local backend does and writes its status.json. The sweep follows the job
// with squeue until no task is left, then asks scontrol why tasks without a status ended
// (cancelled, timeout, node failure; accounting is not needed) and reports them with the tail of
// the task's own output; a rerun submits them again. The job id is kept in DIR/slurm/job.json,
// so an interrupted sweep that is rerun while its job still runs follows that job instead of
// submitting another. Nothing here is known to the simulator.
#pragma once
#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "sweep/progress.h"
#include "sweep/spec.h"

namespace sfumato::sweep {

// "0-3,5,7-9" for sorted indices.
std::string array_ranges(const std::vector<size_t>& indices);

std::string sbatch_script(const Spec& spec, const std::string& binary, const std::string& out_dir,
                          const std::string& workdir, const std::vector<size_t>& indices, size_t num_points,
                          const std::string& job_name);

struct SlurmTask {
    size_t index = 0;
    std::string state, reason, exit_code;
};
// Array tasks of `scontrol -o show job ID` (one line per task; ArrayTaskId may be a range for
// tasks not yet started, those are expanded).
std::vector<SlurmTask> parse_scontrol_tasks(const std::string& text);

struct QueueCount {
    size_t pending = 0, running = 0, other = 0;
    size_t total() const { return pending + running + other; }
};
// `squeue -h -r -j ID -o "%i %T"`: one line per task.
QueueCount parse_squeue(const std::string& text);

// The job id of the last submission of DIR, if squeue still lists it.
std::string live_job(const std::string& out_dir);

struct SlurmOutcome {
    std::map<size_t, std::string> errors;  // points without a status: what Slurm says
    std::map<size_t, std::string> states;  // their Slurm state (CANCELLED, TIMEOUT, ...)
    bool interrupted = false;
};

// Submits the points (already prepared) as one array job, or follows `job_id` if given, until
// the job has left the queue or *stop is set.
SlurmOutcome run_slurm(const Spec& spec, const std::string& binary, const std::string& out_dir,
                       const std::vector<size_t>& indices, size_t num_points, const std::string& job_id,
                       Progress& progress, const std::atomic<bool>& stop);

}  // namespace sfumato::sweep
