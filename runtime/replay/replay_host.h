// Replay's host program, a library (issue 29): what `sfumato replay` runs on each device
// (cli/cmd_replay.cpp, cli/replay_system.cpp only parse, call and print), for a user's own C++
// program too. DeviceReplay is one device's host program: its timing re-use service
// (runtime/reuse/timing_reuse.h), installed before the workload's first launch, and the
// workload::Replayer of its tasks with the kernels of ReplayKernels (replay_kernels.h).
// Collectives holds the communicators a multi-device workload's collective tasks run on (one per
// rank set, set up before time zero: buffers, streams and notifies allocated, the ranks
// rendezvous) and each collective task's anonymous buffers (a collective without send/recv
// buffers gets them, placed at no simulated cost; their contents are whatever is there).
//
//   replay::ReplayKernels kernels(file, false, {}, rt.device_info());
//   replay::DeviceReplay dev(rt, w, kernels, reuse_options, dir);  // in the device's host thread
//   dev.run();
//   ... dev.replayer().times(clock), dev.reuse_counters() ...
#pragma once
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "runtime/comm/communicator.h"
#include "runtime/replay/replay_kernels.h"
#include "runtime/reuse/timing_reuse.h"
#include "traces/workload_replay.h"

namespace sfumato::replay {

class DeviceReplay {
public:
    // Installs the re-use service on rt's context (Off: none) and builds the device's Replayer
    // (dir: the workload file's directory; device: the device whose tasks it replays; coll: the
    // collective tasks' hook, Collectives::hook()). `kernels` outlives it.
    DeviceReplay(rt::Runtime& rt, const workload::Workload& w, ReplayKernels& kernels,
                 const reuse::ReuseOptions& o, const std::string& dir, uint32_t device = 0,
                 workload::CollectiveHook coll = {});
    ~DeviceReplay();
    // The host program (from the device's host thread): replays the device's tasks, then hands the
    // last stand-ins' traffic to the device, before anything reads the memory system's stats.
    void run();
    const workload::Replayer& replayer() const { return *m_rep; }
    // Valid after run() (the device synchronised).
    reuse::ReuseCounters reuse_counters() const { return m_reuse->counters(); }

private:
    std::unique_ptr<reuse::TimingReuse> m_reuse;
    std::unique_ptr<workload::Replayer> m_rep;
};

class Collectives {
public:
    // devices: every device of the system, by device id (a rank set names them).
    Collectives(const SystemInfo& sys, const std::vector<rt::Device*>& devices, const comm::CommParams& p,
                const workload::Workload& w);
    ~Collectives();
    workload::CollectiveHook hook();
    // Split over window-synchronised processes (sim/window_sync.h): every communicator, in
    // rank-set order (the same on every process).
    void distribute(WindowSync& sync);

private:
    struct Group {
        std::unique_ptr<comm::Communicator> comm;
        std::vector<bool> ready;
    };
    void init(rt::Context& ctx, const workload::Task& t, uint32_t rank);
    void issue(const workload::Task& t, uint32_t rank, const workload::Placer& p, rt::StreamId s);
    std::map<std::vector<uint32_t>, Group> m_comms;
    std::map<std::tuple<size_t, uint32_t, int>, rt::DevPtr> m_anon;
};

}  // namespace sfumato::replay
