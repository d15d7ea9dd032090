// Writes a run's statistics to HDF5: /meta (version, command line, config hash), /config (every
// effective parameter, as strings) and /stats/<component path>/<stat> with `unit` and
// `description` attributes. Written to a temporary file and renamed.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "sim/stats.h"
#include "traces/table.h"

namespace sfumato {

struct RunMeta {
    std::string version;
    std::string command_line;
    std::string config_hash;
    std::string mode;
    std::string git_revision;  // "" when unknown
    // Input files (model, workload): kind -> "path fnv1a64:HEX", under /meta/inputs.
    std::map<std::string, std::string> inputs;
};

// One dataset of /stats as read back: its path below /stats, values (one for a scalar, the
// buckets of a histogram) and unit.
struct StatRecord {
    std::string path;
    std::vector<double> values;
    std::string unit;
    std::string description;
    double lo = 0, width = 0;  // a histogram's first bucket and bucket width (0 for other stats)
};

// Reads every dataset under /stats (depth first, in name order). Throws InputError naming the
// file if it is missing or not a stats file.
std::vector<StatRecord> read_stats_h5(const std::string& path);

// A table written beside the stats (e.g. /graph/memory_plan): a group holding one 1-D dataset
// per column, each with a `unit` attribute, and the table's attrs (e.g. "description") as the
// group's attributes (traces/hdf5_table.h, write_table_columns).
struct H5Table {
    std::string path;  // group path, e.g. "/graph/memory_plan"
    Table table;
};

void write_stats_h5(const std::string& path, const StatGroup& root, const std::map<std::string, std::string>& config,
                    const RunMeta& meta, const std::vector<H5Table>& tables = {});

}  // namespace sfumato
