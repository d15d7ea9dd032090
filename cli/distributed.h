// How a system command runs: in one process (one SystemC kernel for every chip), or split by
// chip over window-synchronised ranks (sim/window_sync.h): MPI processes when an MPI launcher
// started this one (mpirun -np N, or srun under Slurm; sfumato built with MPI), or one loopback
// rank (`--distributed on` without a launcher: the same windows and messages in one process,
// which every rank count reproduces cycle for cycle).
#pragma once
#include <memory>
#include <string>

#include "cli/session.h"
#include "sim/window_sync.h"

namespace sfumato::cli {

// --distributed auto|on|off (auto: split when an MPI launcher started the process).
void add_distributed_option(po::options_description& d, std::string& mode);
// Null: run in one process as before. Exit 2 for a mode other than auto/on/off, `off` under a
// launcher of several ranks, or a launcher when this sfumato was built without MPI.
std::unique_ptr<IRankTransport> open_transport(const std::string& mode);
// The launcher's process count (1 without a launcher), from its environment.
uint32_t launcher_ranks();
// Non-empty (the reason) when `command` cannot run under a launcher of several ranks.
std::string split_refusal(const std::string& command);

}  // namespace sfumato::cli
