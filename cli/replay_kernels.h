// `sfumato replay`'s CLI side: the planning is a library (runtime/replay/replay_kernels.h); this
// names it for cli/cmd_replay.cpp and declares the system-of-chips command (cli/replay_system.cpp).
#pragma once
#include <string>

#include "runtime/replay/replay_kernels.h"
#include "traces/workload.h"

namespace sfumato::cli {

using replay::load_streams;
using replay::ReplayKernels;
using replay::validate_op;

struct CommonOptions;
// `sfumato replay --system F` (cli/replay_system.cpp): the workload on a system of chips.
int replay_on_system(const std::string& file, const workload::Workload& w, const std::string& level,
                     const CommonOptions& common, const std::string& system_file, const std::string& cmdline,
                     const std::string& reuse_arg, const std::string& split_mode);

}  // namespace sfumato::cli
