// `sfumato replay FILE.json [--level ops|instructions] [--config F] [--set k=v] [--out DIR]
// [--mode M] [--trace L] [--record F]`: runs a workload file's task stream (traces/workload.h)
// through the runtime on the simulated chip and writes summary.json with a "tasks" list
// (issue/start/end cycle of every task), trace.json and stats.h5. At the `ops` level (default)
// every kernel is planned again for the target chip: a graph-node task through the operator's
// graph-node face on the buffers it names, an operator-library task (`op` + `args`, the names of
// `sfumato kernel`) with its operands placed before it at no simulated cost. At the
// `instructions` level the recorded instruction streams run unchanged, after a check that the
// target chip can hold them (the reason is printed otherwise, exit 2). A malformed file exits 2
// naming the task; a run that cannot finish exits 4 naming the tasks still pending. With
// --system F the workload runs on a system of chips (tasks name their `device`, `collective`
// tasks run on the communicator of their ranks; cli/replay_system.cpp); a workload that names
// another device or a collective needs it.
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "isa/text.h"
#include "runtime/ops/i_op.h"
#include "runtime/ops/node_launch.h"
#include "runtime/ops/node_op.h"
#include "runtime/replay/replay_host.h"
#include "cli/command.h"
#include "cli/distributed.h"
#include "cli/replay_kernels.h"
#include "cli/replay_report.h"
#include "cli/reuse_option.h"
#include "cli/system_session.h"
#include "cli/session.h"
#include "sim/error.h"
#include "traces/workload.h"
#include "traces/node_json.h"
#include "traces/workload_replay.h"

namespace sfumato::cli {

namespace {

int cmd_replay(const std::vector<std::string>& args) {
    CommonOptions common;
    common.trace = "task";
    std::string file, level = "ops", system_file, reuse_arg = "off", split_mode = "auto", reuse_log;
    po::options_description d("sfumato replay");
    d.add_options()("workload", po::value<std::string>(&file), "workload file (sfumato-workload JSON)")(
        "level", po::value<std::string>(&level)->default_value("ops"),
        "ops: plan every operator again for the target chip | instructions: replay the recorded instruction streams");
    add_system_option(d, system_file);
    add_distributed_option(d, split_mode);
    add_run_options(d, common);
    add_reuse_option(d, reuse_arg, &reuse_log);
    po::positional_options_description pos;
    pos.add("workload", 1);
    po::variables_map vm;
    if (!parse_command(args, "sfumato replay FILE.json [options]", d, vm, &pos)) return kExitOk;
    if (file.empty()) throw InputError("replay needs a workload file (sfumato replay FILE.json)");
    if (level != "ops" && level != "instructions") throw InputError("--level must be ops or instructions, not '" + level + "'");
    const bool instr_level = level == "instructions";
    const workload::Workload w = workload::load(file, validate_op);
    if (!system_file.empty())
        return replay_on_system(file, w, level, common, system_file, text::join("sfumato replay", args), reuse_arg,
                                split_mode);
    if (split_mode == "on" || launcher_ranks() > 1)
        throw InputError("a replay split over processes (--distributed on, mpirun/srun) needs a system of chips (--system F)");
    for (const workload::Task& t : w.tasks) {
        if (t.device != 0 || t.kind == workload::Kind::Collective)
            throw InputError(file + ": task " + std::to_string(t.index) + " (" + workload::kind_name(t.kind) + "): " +
                             (t.kind == workload::Kind::Collective ? std::string("a collective")
                                                                   : "device " + std::to_string(t.device)) +
                             " needs a system of chips (replay --system F)");
    }

    Session s(common, text::join("sfumato replay", args));
    s.add_input("workload", file);
    s.elaborate();
    const reuse::ReuseOptions ropt = reuse_options(reuse_arg, s.functional(),
                                                   !common.record.empty() && common.record_level == "instructions",
                                                   s.chip_params(), reuse_log);
    const DeviceInfo info = s.chip().info();
    std::map<std::string, std::shared_ptr<const workload::KernelStreams>> streams;
    if (instr_level) streams = load_streams(w, file, info, s.chip_params().name.get());
    ReplayKernels kernels(file, instr_level, std::move(streams), info);
    std::unique_ptr<replay::DeviceReplay> rep;
    try {
        s.run([&](rt::Runtime& rt) {
            rep = std::make_unique<replay::DeviceReplay>(rt, w, kernels, ropt,
                                                         std::filesystem::path(file).parent_path().string());
            rep->run();
        });
    } catch (const SimError& e) {
        if (e.code() != kExitDeadlock || !rep) throw;
        std::string msg = std::string(e.what()) + "\nworkload tasks pending:\n";
        for (const auto& l : rep->replayer().pending()) msg += "  " + file + ": " + l + "\n";
        throw SimError(kExitDeadlock, msg);
    }
    const ClockDomain clk = s.chip_params().clock();
    nlohmann::json summary = s.base_summary();
    summary["workload"] = file;
    summary["level"] = level;
    summary["tasks"] = workload::tasks_json(rep->replayer().times(clk));  // by workload task index
    const nlohmann::json imported = imported_report(w, rep->replayer(), kernels.import_skips());
    if (!imported.is_null()) summary["imported"] = imported;
    const reuse::ReuseCounters rc = rep->reuse_counters();
    summary["reuse_timing"] = reuse_json(ropt, rc);
    s.write_outputs(summary);

    std::printf("replay %s on %s (%s mode, %s level): %zu tasks on %zu streams\n", file.c_str(),
                s.chip_params().name.get().c_str(), common.mode.c_str(), level.c_str(), w.tasks.size(), w.streams.size());
    constexpr size_t kMaxLines = 40;
    size_t line = 0;
    for (const auto& t : summary["tasks"]) {
        if (line++ == kMaxLines) {
            std::printf("  ... %zu more tasks (summary.json lists all)\n", summary["tasks"].size() - kMaxLines);
            break;
        }
        std::printf("  task %3llu %-10s %-16s issue %10llu  start %10llu  end %10llu\n",
                    static_cast<unsigned long long>(t["index"].get<uint64_t>()), t["kind"].get<std::string>().c_str(),
                    t["name"].get<std::string>().c_str(), static_cast<unsigned long long>(t["issue_cycle"].get<uint64_t>()),
                    static_cast<unsigned long long>(t["start_cycle"].get<uint64_t>()),
                    static_cast<unsigned long long>(t["end_cycle"].get<uint64_t>()));
    }
    std::printf("  total: %llu cycles, %.3f us\n", static_cast<unsigned long long>(s.total_cycles()),
                summary["total_time_us"].get<double>());
    print_imported_report(imported);
    print_reuse(ropt, rc);
    if (!common.out.empty()) std::printf("  wrote %s/{trace.json,stats.h5,summary.json}\n", common.out.c_str());
    return kExitOk;
}

}  // namespace

SFUMATO_COMMAND("replay", "run a workload file (task stream) through the runtime on the simulated chip", cmd_replay);

}  // namespace sfumato::cli
