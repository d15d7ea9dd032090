#include "runtime/system/system_replay.h"

#include <filesystem>
#include <map>
#include <memory>

#include "runtime/replay/replay_host.h"
#include "sim/error.h"

namespace sfumato::sys {

namespace {

// Split over processes, every process runs host programs of its own: each rank must simulate at
// least one of the workload's devices (checked alike on every process).
void check_split(const WindowSync& sync, const reuse::ReuseOptions& reuse, uint32_t devices) {
    if (reuse.mode != reuse::ReuseMode::Off)
        throw InputError("timing re-use: a replay split over processes runs without it (off)");
    std::vector<bool> has(sync.ranks(), false);
    const std::vector<uint32_t> owner = block_partition(sync.endpoints(), sync.ranks());
    for (uint32_t d = 0; d < devices; ++d) has[owner[d]] = true;
    for (uint32_t r = 0; r < sync.ranks(); ++r) {
        if (!has[r])
            throw InputError(std::to_string(sync.ranks()) + " ranks for a workload on devices 0.." + std::to_string(devices - 1) +
                             " of " + std::to_string(sync.endpoints()) + " chips: rank " + std::to_string(r) +
                             " would simulate none of them (use fewer ranks)");
    }
}

// Each task's times over every process: a task from the process whose device ran it, a collective
// from its first issue to its last end over its ranks (as merge_times does in one process).
void merge_over_ranks(std::vector<workload::TaskTimes>& t, IRankTransport& tr) {
    constexpr uint64_t kNone = ~uint64_t(0);
    std::vector<uint64_t> v;
    for (const workload::TaskTimes& x : t) {
        if (x.mine) v.insert(v.end(), {x.issue_cycle, x.start_cycle, ~x.end_cycle, x.done ? 0u : 1u});
        else v.insert(v.end(), {kNone, kNone, kNone, 0});
    }
    tr.all_min(v);
    std::vector<uint64_t> undone(t.size());
    for (size_t i = 0; i < t.size(); ++i) undone[i] = v[4 * i + 3];
    tr.all_sum(undone);
    for (size_t i = 0; i < t.size(); ++i) {
        t[i].issue_cycle = v[4 * i];
        t[i].start_cycle = v[4 * i + 1];
        t[i].end_cycle = ~v[4 * i + 2];
        t[i].done = undone[i] == 0;
        t[i].mine = true;
    }
}

}  // namespace

void check_workload(const SystemRun& run, const workload::Workload& w, const std::string& file) {
    const uint32_t chips = run.size();
    const std::string& name = run.system().info().name;
    for (const workload::Task& t : w.tasks) {
        const std::string at = file + ": task " + std::to_string(t.index) + " (" + workload::kind_name(t.kind) + ")";
        if (t.kind != workload::Kind::Collective && t.device >= chips)
            throw InputError(at + ": field 'device': device " + std::to_string(t.device) + " is not a chip of " + name +
                             " (" + std::to_string(chips) + " chips)");
        for (uint32_t d : t.ranks) {
            if (d >= chips)
                throw InputError(at + ": field 'ranks': device " + std::to_string(d) + " is not a chip of " + name + " (" +
                                 std::to_string(chips) + " chips)");
        }
    }
}

SystemReplay replay_system(SystemRun& run, const workload::Workload& w, const comm::CommParams& comm,
                           const SystemReplayOptions& o) {
    check_workload(run, w, o.file);
    const uint32_t chips = run.size();
    SystemReplay out;
    out.devices = w.devices();
    const uint32_t devices = out.devices;
    if (run.sync()) check_split(*run.sync(), o.reuse, devices);
    const bool instr_level = o.level == "instructions";
    const DeviceInfo info = run.system().device(0).info();
    std::map<std::string, std::shared_ptr<const workload::KernelStreams>> streams;
    if (instr_level) streams = replay::load_streams(w, o.file, info, o.chip);
    std::vector<std::unique_ptr<replay::ReplayKernels>> kernels;
    std::vector<std::unique_ptr<rt::Runtime>> rts(devices);
    std::vector<std::unique_ptr<replay::DeviceReplay>> reps(devices);
    std::vector<uint32_t> ids;
    std::vector<rt::Device*> all;
    for (uint32_t d = 0; d < chips; ++d) all.push_back(&run.device(d));
    for (uint32_t d = 0; d < devices; ++d) {
        kernels.push_back(std::make_unique<replay::ReplayKernels>(o.file, instr_level, streams, run.system().device(d).info()));
        if (run.local(d)) ids.push_back(d);  // split over processes: this one's devices
    }
    replay::Collectives colls(run.system().info(), all, comm, w);
    if (run.sync()) colls.distribute(*run.sync());
    const std::string dir = std::filesystem::path(o.file).parent_path().string();
    try {
        run.run(ids, [&](uint32_t i, rt::Context& ctx) {
            const uint32_t d = ids[i];
            rts[d] = std::make_unique<rt::Runtime>(run.device(d), ctx);
            reps[d] = std::make_unique<replay::DeviceReplay>(*rts[d], w, *kernels[d], o.reuse, dir, d, colls.hook());
            reps[d]->run();
        });
    } catch (const SimError& e) {
        if (e.code() != kExitDeadlock) throw;
        std::string msg = std::string(e.what()) + "\nworkload tasks pending:\n";
        for (const auto& r : reps) {
            if (!r) continue;
            for (const auto& l : r->replayer().pending()) msg += "  " + o.file + ": " + l + "\n";
        }
        throw SimError(kExitDeadlock, msg);
    }
    const ClockDomain clk = run.system().clock();
    std::vector<std::vector<workload::TaskTimes>> per_device;
    for (const auto& r : reps)
        if (r) per_device.push_back(r->replayer().times(clk));
    out.times = workload::merge_times(per_device);
    if (run.sync()) merge_over_ranks(out.times, run.sync()->transport());
    for (const auto& r : reps) {
        if (!r) continue;  // a device another process simulated
        if (info.functional)  // (timing mode moves no data: nothing to save)
            for (const auto& f : r->replayer().saved()) out.saved.emplace_back(f.first, f.second);
        out.reuse += r->reuse_counters();
    }
    return out;
}

}  // namespace sfumato::sys
