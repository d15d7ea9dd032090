#include "sweep/local_backend.h"

#include <chrono>
#include <exception>
#include <filesystem>
#include <thread>

namespace sfumato::sweep {

std::string params_text(const Point& p) {
    std::string s;
    for (const auto& [k, v] : p.params) s += (s.empty() ? "" : " ") + k + "=" + v;
    return s;
}

std::vector<PointStatus> run_local(const std::string& binary, const std::vector<const Point*>& points,
                                   const std::vector<std::string>& dirs, unsigned jobs, Progress& progress,
                                   const std::atomic<bool>& stop) {
    std::vector<PointStatus> result(points.size());
    std::atomic<size_t> next{0}, finished{0};
    auto worker = [&] {
        for (;;) {
            const size_t i = next.fetch_add(1);
            if (i >= points.size() || stop.load()) break;
            const std::string name = std::filesystem::path(dirs[i]).filename().string();
            progress.started(name);
            PointStatus s;
            try {
                s = run_point(binary, dirs[i], &stop);
            } catch (const std::exception& e) {
                s.state = "failed";
                s.error = e.what();
            }
            result[i] = s;
            if (s.state != "interrupted") progress.finished(name, params_text(*points[i]), s);
            finished.fetch_add(1);
        }
    };
    const unsigned n = std::max(1u, std::min<unsigned>(jobs, static_cast<unsigned>(std::max<size_t>(1, points.size()))));
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < n; ++t) pool.emplace_back(worker);
    auto last_tick = std::chrono::steady_clock::now();
    while (finished.load() < points.size() && !(stop.load() && next.load() >= points.size())) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        if (stop.load()) break;
        if (std::chrono::steady_clock::now() - last_tick > std::chrono::seconds(1)) {
            progress.tick();
            last_tick = std::chrono::steady_clock::now();
        }
    }
    for (auto& t : pool) t.join();
    for (size_t i = 0; i < result.size(); ++i)
        if (result[i].state.empty()) result[i].state = "interrupted";
    return result;
}

}  // namespace sfumato::sweep
