// One sweep point on disk and its run. DIR/points/pNNNN/ holds point.json (the point's
// parameters and the exact command arguments), the files the command writes (--out is this
// directory: summary.json, stats.h5, ...), its stdout.txt/stderr.txt, and status.json once it
// ended (state, exit code, wall time, the tail of stderr when it failed). A point is complete
// when status.json says done for the same arguments and summary.json exists. Both backends run
// a point through run_point (locally in a worker thread, on Slurm inside the array task).
#pragma once
#include <atomic>
#include <string>
#include <vector>

#include "sweep/spec.h"

namespace sfumato::sweep {

struct PointStatus {
    bool present = false;  // status.json exists
    std::string state;     // done | failed | timeout | interrupted | (slurm states for tasks without a status)
    int exit_code = -1;
    double wall_seconds = 0;
    std::string error;  // tail of the command's stderr (or why it did not run)
    std::vector<std::string> args;
    bool ok() const { return present && state == "done"; }
};

// Writes point.json and removes what an earlier run of the point left (status, summary).
void prepare_point(const std::string& dir, const Point& p, double timeout_seconds);
// Runs the point described by dir/point.json with `binary` and writes status.json, unless the
// run was stopped (*stop set, or the command ended by SIGINT/SIGTERM): then state is
// "interrupted" and nothing is written, so a rerun runs it again.
PointStatus run_point(const std::string& binary, const std::string& dir, const std::atomic<bool>* stop);
PointStatus read_status(const std::string& dir);
bool point_complete(const std::string& dir, const Point& p);

}  // namespace sfumato::sweep
