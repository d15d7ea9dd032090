// `sfumato replay FILE.json --system F`: a multi-device workload on a system of chips. The run is
// a library (runtime/system/system_replay.h: one host program per device, collectives through a
// communicator per rank set, the split over ranks); this parses, calls and prints. summary.json
// lists every task once, with its device (a collective from its first rank's issue to its last
// rank's end); d2h copies that `save` write the bytes they read into the output directory
// (functional mode).
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "cli/command.h"
#include "cli/distributed.h"
#include "cli/replay_kernels.h"
#include "cli/reuse_option.h"
#include "cli/system_session.h"
#include "runtime/system/system_replay.h"
#include "sim/error.h"
#include "traces/atomic_file.h"
#include "traces/workload_replay.h"

namespace sfumato::cli {

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
    sys::check_workload(s.host(), w, file);
    // Split over processes, the replay runs without timing re-use.
    if (s.sync() && reuse_arg != "off")
        throw InputError("--reuse-timing " + reuse_arg + ": a replay split over processes runs without timing re-use (off)");
    const sys::SystemReplay r = sys::replay_system(s.host(), w, s.comm_params(), {file, level, ropt, s.chip_params().name.get()});
    const uint32_t devices = r.devices;
    nlohmann::json summary = s.base_summary();
    summary["workload"] = file;
    summary["level"] = level;
    summary["devices"] = devices;
    summary["tasks"] = workload::tasks_json(r.times, true);
    nlohmann::json saved = nlohmann::json::array();
    if (s.functional() && !common.out.empty()) {
        std::error_code ec;
        std::filesystem::create_directories(common.out, ec);
        for (const auto& saved_file : r.saved) {
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
    // Split, each process writes its own devices' files: the list is every saving task's.
    if (s.sync()) {
        saved = nlohmann::json::array();
        if (s.functional() && !common.out.empty())
            for (const workload::Task& t : w.tasks)
                if (!t.save.empty()) saved.push_back(t.save);
    }
    summary["saved"] = saved;
    const reuse::ReuseCounters& rc = r.reuse;
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
