// How a run on a system of chips is carried: in one process (one SystemC kernel for every chip),
// or split by chip over window-synchronised ranks (sim/window_sync.h): MPI processes when an MPI
// launcher started this one (mpirun -np N, or srun under Slurm; sfumato built with MPI), or one
// loopback rank (`on` without a launcher: the same windows and messages in one process, which
// every rank count reproduces cycle for cycle). SystemRun::distribute takes the transport.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "sim/window_sync.h"

namespace sfumato::sys {

// mode auto | on | off (auto: split when an MPI launcher started the process). Null: run in one
// process. InputError for another mode, `off` under a launcher of several ranks, or a launcher
// when this build has no MPI.
std::unique_ptr<IRankTransport> open_transport(const std::string& mode);
// The launcher's process count (1 without a launcher), from its environment.
uint32_t launcher_ranks();

}  // namespace sfumato::sys
