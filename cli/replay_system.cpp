// `sfumato replay FILE.json --system F`: a multi-device workload on a system of chips. One host
// program per device (each in its own host thread, as each rank of a job runs its own process;
// runtime/replay/replay_host.h, DeviceReplay) replays the tasks of its device in file order, and
// its part of every collective it is a rank of, through a communicator per rank set
// (replay::Collectives). Kernels are planned as in the single-chip replay
// (runtime/replay/replay_kernels.h), each device with its own scratch operands. summary.json lists
// every task once, with its device (a collective from its first rank's issue to its last rank's
// end); d2h copies that `save` write the bytes they read into the output directory (functional
// mode).
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "cli/command.h"
#include "cli/distributed.h"
#include "cli/replay_kernels.h"
#include "cli/reuse_option.h"
#include "cli/system_session.h"
#include "runtime/replay/replay_host.h"
#include "sim/error.h"
#include "traces/atomic_file.h"
#include "traces/workload_replay.h"

namespace sfumato::cli {

namespace {

// Split over processes, every process runs host programs of its own: each rank must simulate at
// least one of the workload's devices (checked alike on every process).
void check_split(const WindowSync& sync, const std::string& reuse_arg, uint32_t devices) {
    if (reuse_arg != "off")
        throw InputError("--reuse-timing " + reuse_arg + ": a replay split over processes runs without timing re-use (off)");
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

int replay_on_system(const std::string& file, const workload::Workload& w, const std::string& level,
                     const CommonOptions& common, const std::string& system_file, const std::string& cmdline,
                     const std::string& reuse_arg, const std::string& split_mode) {
    if (!common.record.empty()) throw InputError("--record: recording a multi-device replay is not supported");
    const std::unique_ptr<IRankTransport> transport = open_transport(split_mode);
    SystemSession s(common, system_file, cmdline);
    s.elaborate();
    if (transport) s.distribute(*transport);
    const reuse::ReuseOptions ropt = reuse_options(reuse_arg, s.functional(), false, s.chip_params());
    const uint32_t chips = s.system().size();
    for (const workload::Task& t : w.tasks) {
        const std::string at = file + ": task " + std::to_string(t.index) + " (" + workload::kind_name(t.kind) + ")";
        if (t.kind != workload::Kind::Collective && t.device >= chips)
            throw InputError(at + ": field 'device': device " + std::to_string(t.device) + " is not a chip of " +
                             s.system_params().name.get() + " (" + std::to_string(chips) + " chips)");
        for (uint32_t d : t.ranks) {
            if (d >= chips)
                throw InputError(at + ": field 'ranks': device " + std::to_string(d) + " is not a chip of " +
                                 s.system_params().name.get() + " (" + std::to_string(chips) + " chips)");
        }
    }
    const uint32_t devices = w.devices();
    if (s.sync()) check_split(*s.sync(), reuse_arg, devices);
    const bool instr_level = level == "instructions";
    const DeviceInfo info = s.system().chip(0).info();
    std::map<std::string, std::shared_ptr<const workload::KernelStreams>> streams;
    if (instr_level) streams = load_streams(w, file, info, s.chip_params().name.get());
    std::vector<std::unique_ptr<ReplayKernels>> kernels;
    std::vector<std::unique_ptr<rt::Runtime>> rts(devices);
    std::vector<std::unique_ptr<replay::DeviceReplay>> reps(devices);
    std::vector<uint32_t> ids;
    std::vector<rt::Device*> all;
    for (uint32_t d = 0; d < chips; ++d) all.push_back(&s.device(d));
    for (uint32_t d = 0; d < devices; ++d) {
        kernels.push_back(std::make_unique<ReplayKernels>(file, instr_level, streams, s.system().chip(d).info()));
        if (s.local(d)) ids.push_back(d);  // split over processes: this one's devices
    }
    replay::Collectives colls(s.system().info(), all, s.comm_params(), w);
    if (s.sync()) colls.distribute(*s.sync());
    const std::string dir = std::filesystem::path(file).parent_path().string();
    try {
        s.run(ids, [&](uint32_t i, rt::Context& ctx) {
            const uint32_t d = ids[i];
            rts[d] = std::make_unique<rt::Runtime>(s.device(d), ctx);
            reps[d] = std::make_unique<replay::DeviceReplay>(*rts[d], w, *kernels[d], ropt, dir, d, colls.hook());
            reps[d]->run();
        });
    } catch (const SimError& e) {
        if (e.code() != kExitDeadlock) throw;
        std::string msg = std::string(e.what()) + "\nworkload tasks pending:\n";
        for (const auto& r : reps) {
            if (!r) continue;
            for (const auto& l : r->replayer().pending()) msg += "  " + file + ": " + l + "\n";
        }
        throw SimError(kExitDeadlock, msg);
    }
    const ClockDomain clk = s.chip_params().clock();
    std::vector<std::vector<workload::TaskTimes>> per_device;
    for (const auto& r : reps)
        if (r) per_device.push_back(r->replayer().times(clk));
    std::vector<workload::TaskTimes> times = workload::merge_times(per_device);
    if (s.sync()) merge_over_ranks(times, s.sync()->transport());
    nlohmann::json summary = s.base_summary();
    summary["workload"] = file;
    summary["level"] = level;
    summary["devices"] = devices;
    summary["tasks"] = workload::tasks_json(times, true);
    nlohmann::json saved = nlohmann::json::array();
    if (s.functional() && !common.out.empty()) {
        std::error_code ec;
        std::filesystem::create_directories(common.out, ec);
        for (const auto& r : reps) {
            if (!r) continue;  // a device another process simulated
            for (const auto& saved_file : r->replayer().saved()) {
                const std::string& name = saved_file.first;
                const std::vector<uint8_t>& bytes = saved_file.second;
                write_atomically(common.out + "/" + name, [&](const std::string& tmp) {
                    std::ofstream o(tmp, std::ios::binary);
                    o.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
                    if (!o) throw OutputError("cannot write '" + tmp + "'");
                });
                saved.push_back(name);
            }
        }
    }
    // Split, each process writes its own devices' files: the list is every saving task's.
    if (s.sync()) {
        saved = nlohmann::json::array();
        if (s.functional() && !common.out.empty())
            for (const workload::Task& t : w.tasks)
                if (!t.save.empty()) saved.push_back(t.save);
    }
    summary["saved"] = saved;
    reuse::ReuseCounters rc;
    for (const auto& r : reps)
        if (r) rc += r->reuse_counters();
    summary["reuse_timing"] = reuse_json(ropt, rc);
    if (s.sync()) summary["split"] = s.split_json();
    s.write_outputs(summary);
    if (!s.leader()) return kExitOk;  // rank 0 prints

    std::printf("replay %s on %s (%u chips of %s, %s mode, %s level): %zu tasks on %u devices\n", file.c_str(),
                s.system_params().name.get().c_str(), chips, s.chip_params().name.get().c_str(), common.mode.c_str(),
                level.c_str(), w.tasks.size(), devices);
    constexpr size_t kMaxLines = 40;
    size_t line = 0;
    for (const auto& t : summary["tasks"]) {
        if (line++ == kMaxLines) {
            std::printf("  ... %zu more tasks (summary.json lists all)\n", summary["tasks"].size() - kMaxLines);
            break;
        }
        const std::string dev = t["device"].is_null() ? "all" : std::to_string(t["device"].get<uint32_t>());
        std::printf("  task %3llu dev %-3s %-10s %-16s issue %10llu  start %10llu  end %10llu\n",
                    static_cast<unsigned long long>(t["index"].get<uint64_t>()), dev.c_str(),
                    t["kind"].get<std::string>().c_str(), t["name"].get<std::string>().c_str(),
                    static_cast<unsigned long long>(t["issue_cycle"].get<uint64_t>()),
                    static_cast<unsigned long long>(t["start_cycle"].get<uint64_t>()),
                    static_cast<unsigned long long>(t["end_cycle"].get<uint64_t>()));
    }
    std::printf("  total: %llu cycles, %.3f us\n", static_cast<unsigned long long>(s.total_cycles()),
                summary["total_time_us"].get<double>());
    print_reuse(ropt, rc);
    if (s.sync()) std::fputs(s.split_line(summary["split"]).c_str(), stdout);
    if (!common.out.empty()) std::printf("  wrote %s/{trace.json,stats.h5,summary.json}\n", common.out.c_str());
    return kExitOk;
}

}  // namespace sfumato::cli
