// Comparing two runs (`sfumato diff`): each run's summary.json gives its total cycles and its
// kernels (name, type, stream, cycles); kernels are grouped by name (repeated names count
// as name#2, name#3, ... in order), by operator type or by stream, and each group's cycles are
// compared. Rows are sorted by impact (|delta cycles|); groups present in one run only are
// listed apart. The verdict: every delta (total included) within the tolerance, in percent of
// the first run's value, and no group in one run only.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace sfumato::diff {

enum class By : uint8_t { Op, Type, Stream };
bool parse_by(const std::string& s, By& out);

struct Row {
    std::string key, type;
    uint64_t a = 0, b = 0;  // cycles
    int64_t delta() const { return static_cast<int64_t>(b) - static_cast<int64_t>(a); }
    double pct() const;  // of a (100 when a is 0 and b is not)
};

struct Result {
    uint64_t total_a = 0, total_b = 0;
    double total_pct = 0;
    std::vector<Row> rows;         // in both, by |delta| descending
    std::vector<Row> only_a, only_b;
    size_t beyond = 0;             // rows beyond the tolerance
    bool within = true;
};

// Reads summary.json from a run's out dir or the file itself; throws InputError naming it.
nlohmann::json load_summary(const std::string& path);
Result compare(const nlohmann::json& a, const nlohmann::json& b, By by, double tolerance_pct);

}  // namespace sfumato::diff
