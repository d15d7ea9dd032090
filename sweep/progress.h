// Progress of a sweep on stderr. On a terminal one status line is rewritten in place (points
// done and failed of the total, running, estimated time left); otherwise one plain line per
// finished point, for logs. The estimate is the mean wall time of the points finished in this
// invocation times the points left, divided by how many run at once. Thread safe.
#pragma once
#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>

#include "sweep/point_run.h"

namespace sfumato::sweep {

class Progress {
public:
    // total: points of the sweep; skipped: complete from an earlier run; parallel: points that
    // run at once (for the estimate).
    Progress(size_t total, size_t skipped, unsigned parallel, bool terminal, std::FILE* out = stderr);
    void started(const std::string& name);
    void finished(const std::string& name, const std::string& params, const PointStatus& s);
    // A line of its own (clears the status line first on a terminal).
    void message(const std::string& line);
    void set_parallel(unsigned p);
    void tick();
    void set_running(size_t n);  // when the runs are not started here (Slurm)  // redraws the status line (elapsed time, estimate)
    void done();  // ends the status line
    size_t failed() const { return m_failed; }
    size_t completed() const { return m_done; }
    // "1:02:03" or "2:03".
    static std::string format_duration(double seconds);

private:
    void redraw();  // with m_mutex held
    std::string status_line() const;
    std::FILE* m_out;
    bool m_terminal;
    size_t m_total, m_skipped, m_done = 0, m_failed = 0, m_running = 0;
    unsigned m_parallel;
    double m_wall_sum = 0;
    std::chrono::steady_clock::time_point m_start;
    std::mutex m_mutex;
};

}  // namespace sfumato::sweep
