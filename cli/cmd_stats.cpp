// `sfumato stats FILE [FILTER...]`: prints the /stats datasets of a run's stats.h5 as text, one
// line per statistic (path, value, unit), optionally only those whose path contains every
// FILTER. Histograms print their sample count and bucket count. For quick looks without an
// HDF5 tool; scripts should read the HDF5 file itself.
#include <cstdio>

#include "cli/command.h"
#include "sim/error.h"
#include "traces/hdf5_stats.h"

namespace sfumato::cli {

namespace {
int cmd_stats(const std::vector<std::string>& args) {
    std::string file;
    std::vector<std::string> filters;
    for (const auto& a : args) {
        if (a == "--help" || a == "-h") {
            std::printf("usage: sfumato stats FILE [FILTER...]\n"
                        "  prints every statistic of FILE (a run's stats.h5) whose path contains all FILTERs\n");
            return 0;
        }
        if (!a.empty() && a[0] == '-') throw InputError("unrecognised option '" + a + "' (see --help)");
        if (file.empty()) file = a;
        else filters.push_back(a);
    }
    if (file.empty()) throw InputError("no stats file given (usage: sfumato stats FILE [FILTER...])");
    for (const auto& r : read_stats_h5(file)) {
        bool keep = true;
        for (const auto& f : filters) keep = keep && r.path.find(f) != std::string::npos;
        if (!keep) continue;
        // Counters print exactly; other values with the digits a double holds.
        if (r.values.size() == 1) {
            if (r.integer) std::printf("%-64s %16llu %s\n", r.path.c_str(), static_cast<unsigned long long>(r.ints[0]), r.unit.c_str());
            else std::printf("%-64s %16.10g %s\n", r.path.c_str(), r.values[0], r.unit.c_str());
        } else {
            uint64_t n = 0;
            for (uint64_t v : r.ints) n += v;
            std::printf("%-64s %16llu samples in %zu buckets (%s)\n", r.path.c_str(), static_cast<unsigned long long>(n),
                        r.values.size(), r.unit.c_str());
        }
    }
    return 0;
}
}  // namespace

SFUMATO_COMMAND("stats", "print the statistics of a run's stats.h5 as text", cmd_stats);

}  // namespace sfumato::cli
