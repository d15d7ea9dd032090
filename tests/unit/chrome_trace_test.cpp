// traces/chrome_trace.h: past its buffer the writer spills to a temporary file and still writes
// one valid trace with every event, in order.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "traces/chrome_trace.h"

using namespace sfumato;

TEST_CASE("chrome trace: more events than the buffer holds spill and are all written") {
    ChromeTraceWriter w;
    const TrackId t = w.track("device", "core 0", 0);
    const TrackId c = w.counter_track("device", "depth");
    const size_t n = ChromeTraceWriter::kMaxBuffered + ChromeTraceWriter::kMaxBuffered / 2;
    for (size_t i = 0; i < n; ++i) {
        // Distinct names: never merged.
        w.slice_str(t, "s" + std::to_string(i), Tick(i * 1000), Tick(i * 1000 + 500), nullptr, 0);
        if (i % 1000 == 0) w.counter(c, Tick(i * 1000), static_cast<double>(i));
    }
    CHECK(w.events() == n + (n + 999) / 1000);
    const std::string path = (std::filesystem::temp_directory_path() / "sfumato_chrome_spill.json").string();
    w.write(path);
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    const auto j = nlohmann::json::parse(ss.str());
    size_t slices = 0, counters = 0;
    bool ordered = true;
    for (const auto& e : j["traceEvents"]) {
        if (e["ph"] == "X") {
            ordered = ordered && e["name"] == "s" + std::to_string(slices);
            ++slices;
        }
        if (e["ph"] == "C") ++counters;
    }
    CHECK(slices == n);
    CHECK(counters == (n + 999) / 1000);
    CHECK(ordered);
    std::filesystem::remove(path);
}
