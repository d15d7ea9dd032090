#include "sweep/progress.h"

#include <algorithm>
#include <cmath>

namespace sfumato::sweep {

Progress::Progress(size_t total, size_t skipped, unsigned parallel, bool terminal, std::FILE* out)
    : m_out(out), m_terminal(terminal), m_total(total), m_skipped(skipped), m_parallel(std::max(1u, parallel)),
      m_start(std::chrono::steady_clock::now()) {}

std::string Progress::format_duration(double seconds) {
    const long s = static_cast<long>(std::llround(std::max(0.0, seconds)));
    char buf[48];
    if (s >= 3600) std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
    else std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
    return buf;
}

std::string Progress::status_line() const {
    const size_t finished = m_skipped + m_done + m_failed;
    std::string s = "sweep: " + std::to_string(finished) + "/" + std::to_string(m_total) + " points (" +
                    std::to_string(m_done + m_skipped) + " done";
    if (m_skipped) s += ", " + std::to_string(m_skipped) + " from before";
    s += ", " + std::to_string(m_failed) + " failed), " + std::to_string(m_running) + " running";
    const size_t ran = m_done + m_failed;
    if (ran > 0 && finished < m_total) {
        const double left = m_wall_sum / static_cast<double>(ran) * static_cast<double>(m_total - finished) / m_parallel;
        s += ", about " + format_duration(left) + " left";
    }
    const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
    s += ", " + format_duration(el) + " elapsed";
    return s;
}

void Progress::redraw() {
    if (!m_terminal) return;
    std::fprintf(m_out, "\r\033[K%s", status_line().c_str());
    std::fflush(m_out);
}

void Progress::started(const std::string&) {
    std::lock_guard<std::mutex> l(m_mutex);
    ++m_running;
    redraw();
}

void Progress::finished(const std::string& name, const std::string& params, const PointStatus& s) {
    std::lock_guard<std::mutex> l(m_mutex);
    if (m_running) --m_running;
    if (s.ok()) ++m_done;
    else ++m_failed;
    m_wall_sum += s.wall_seconds;
    char wall[32];
    std::snprintf(wall, sizeof wall, "%.1f s", s.wall_seconds);
    std::string first_error = s.error.substr(0, s.error.find('\n'));
    if (s.error.find('\n') != std::string::npos) {
        // The last line of a tail says most (the error message follows any log lines).
        first_error = s.error.substr(s.error.rfind('\n') + 1);
    }
    const std::string line = "sweep: " + name + " " + (s.ok() ? "done" : s.state + " (exit " + std::to_string(s.exit_code) + ")") +
                             " in " + wall + (params.empty() ? "" : " [" + params + "]") +
                             (s.ok() || first_error.empty() ? "" : ": " + first_error);
    if (m_terminal) {
        if (!s.ok()) std::fprintf(m_out, "\r\033[K%s\n", line.c_str());
        redraw();
    } else {
        std::fprintf(m_out, "%s; %s\n", line.c_str(), status_line().c_str());
        std::fflush(m_out);
    }
}

void Progress::message(const std::string& line) {
    std::lock_guard<std::mutex> l(m_mutex);
    if (m_terminal) std::fprintf(m_out, "\r\033[K%s\n", line.c_str());
    else std::fprintf(m_out, "%s\n", line.c_str());
    redraw();
    std::fflush(m_out);
}

void Progress::set_parallel(unsigned p) {
    std::lock_guard<std::mutex> l(m_mutex);
    m_parallel = std::max(1u, p);
}

void Progress::set_running(size_t n) {
    std::lock_guard<std::mutex> l(m_mutex);
    m_running = n;
    redraw();
}

void Progress::tick() {
    std::lock_guard<std::mutex> l(m_mutex);
    redraw();
}

void Progress::done() {
    std::lock_guard<std::mutex> l(m_mutex);
    if (m_terminal) {
        std::fprintf(m_out, "\r\033[K%s\n", status_line().c_str());
        std::fflush(m_out);
    }
}

}  // namespace sfumato::sweep
