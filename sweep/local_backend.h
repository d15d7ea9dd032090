// The local backend: a pool of worker threads, each running one point at a time as a child
// process (the sfumato binary re-executed with the point's arguments), until every point ran
// or *stop is set (SIGINT/SIGTERM): running points are then terminated and left for a rerun.
#pragma once
#include <atomic>
#include <string>
#include <vector>

#include "sweep/point_run.h"
#include "sweep/progress.h"
#include "sweep/spec.h"

namespace sfumato::sweep {

// dirs[i] is the prepared directory of points[i]. Returns each point's status, in order.
std::vector<PointStatus> run_local(const std::string& binary, const std::vector<const Point*>& points,
                                   const std::vector<std::string>& dirs, unsigned jobs, Progress& progress,
                                   const std::atomic<bool>& stop);

// "key=value key=value" of a point, for progress lines.
std::string params_text(const Point& p);

}  // namespace sfumato::sweep
