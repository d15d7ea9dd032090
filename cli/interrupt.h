// SIGINT and SIGTERM for the CLI (the only place that touches signals; model code never does).
// The first signal only sets a flag: the run driver polls it between simulation slices and before
// committing outputs, and stops with SimError(128 + signal) — exit 130 for SIGINT, 143 for
// SIGTERM — leaving the outputs absent (or complete, if they were committed before the signal).
// A second signal ends the process at once. SIGXFSZ is ignored, so a file-size limit
// (`ulimit -f`) makes writes fail with an error (exit 2) instead of killing the process mid-file.
#pragma once
#include <string>

namespace sfumato::cli {

void install_signal_handlers();
// The signal that asked the run to stop, or 0.
int stop_signal();
// Throws SimError(128 + signal) naming the signal and `when` if a stop was requested.
void throw_if_interrupted(const std::string& when);

}  // namespace sfumato::cli
