// Writes a run's statistics to HDF5: /meta (version, command line, config hash), /config (every
// effective parameter, as strings) and /stats/<component path>/<stat> with `unit` and
// `description` attributes. Written to a temporary file and renamed.
#pragma once
#include <map>
#include <string>

#include "sim/stats.h"

namespace sfumato {

struct RunMeta {
    std::string version;
    std::string command_line;
    std::string config_hash;
    std::string mode;
};

void write_stats_h5(const std::string& path, const StatGroup& root, const std::map<std::string, std::string>& config,
                    const RunMeta& meta);

}  // namespace sfumato
