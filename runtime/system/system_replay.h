// `sfumato replay FILE.json --system F` as a library: a multi-device workload on a system of
// chips (runtime/system/system_run.h). One host program per device (runtime/replay/replay_host.h,
// DeviceReplay) replays the tasks of its device in file order, and its part of every collective
// it is a rank of, through a communicator per rank set (replay::Collectives). Kernels are planned
// as in the single-chip replay (runtime/replay/replay_kernels.h), each device with its own scratch
// operands. Split over ranks (SystemRun::distribute before), each process runs its own devices and
// the tasks' times are merged over every process.
//
//   sys::SystemRun run(system, host_params, &trace, stats_root);   // system: models/link's System
//   const sys::SystemReplay r = sys::replay_system(run, w, comm_params, {file, "ops", reuse, chip});
//   ... r.times[i].end_cycle, run.total_cycles() ...
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "runtime/comm/communicator.h"
#include "runtime/reuse/timing_reuse.h"
#include "runtime/system/system_run.h"
#include "traces/workload.h"
#include "traces/workload_replay.h"

namespace sfumato::sys {

struct SystemReplayOptions {
    std::string file;            // the workload's path (messages; files its tasks read are beside it)
    std::string level = "ops";   // ops | instructions (the recorded instruction streams)
    reuse::ReuseOptions reuse;   // timing re-use (off when split over ranks)
    std::string chip;            // the chip's name (a recording's instruction streams are checked against it)
};

struct SystemReplay {
    uint32_t devices = 0;  // the workload's devices (0..devices-1)
    // Every task once (a collective from its first rank's issue to its last rank's end), over
    // every process when split.
    std::vector<workload::TaskTimes> times;
    // The bytes the d2h copies that `save` read, of this process's devices (functional mode; none
    // in timing mode).
    std::vector<std::pair<std::string, std::vector<uint8_t>>> saved;
    reuse::ReuseCounters reuse;  // summed over this process's devices
};

// InputError naming the task (FILE: task N (kind): field ...) for a device or rank the system does
// not have.
void check_workload(const SystemRun& run, const workload::Workload& w, const std::string& file);
// Runs the workload (check_workload first; split: InputError when a rank would simulate none of
// its devices, or re-use is on). A deadlock's SimError lists the tasks still pending.
SystemReplay replay_system(SystemRun& run, const workload::Workload& w, const comm::CommParams& comm,
                           const SystemReplayOptions& o);

}  // namespace sfumato::sys
