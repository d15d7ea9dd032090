// `sfumato replay FILE.json [--config F] [--set k=v] [--out DIR] [--mode M] [--trace L]`: runs a
// workload file's task stream (traces/workload.h) through the runtime on the simulated chip and
// writes summary.json with a "tasks" list (issue/start/end cycle of every task), trace.json and
// stats.h5. Kernel tasks name operators of the library with the same argument names as
// `sfumato kernel`. A malformed file exits 2 naming the task; a run that cannot finish exits 4
// naming the tasks still pending.
#include <cstdio>
#include <iostream>

#include "isa/text.h"
#include "runtime/ops/i_op.h"
#include "cli/command.h"
#include "cli/session.h"
#include "sim/error.h"
#include "traces/workload.h"
#include "traces/workload_replay.h"

namespace sfumato::cli {

namespace {

std::string validate_op(const std::string& op, const std::map<std::string, std::string>& args) {
    const ops::OpSpec* spec = ops::find_op(op);
    if (!spec) {
        std::string known;
        for (const auto& n : ops::op_names()) known += " " + n;
        return "unknown op '" + op + "' (known:" + known + ")";
    }
    for (const auto& [k, v] : args) {
        bool ok = false;
        for (const auto& a : spec->args) ok = ok || a.name == k;
        if (!ok) return "op '" + op + "' has no argument '" + k + "'";
    }
    return {};
}

bool takes_arg(const std::string& op, const char* name) {
    for (const auto& a : ops::find_op(op)->args) {
        if (a.name == name) return true;
    }
    return false;
}


int cmd_replay(const std::vector<std::string>& args) {
    CommonOptions common;
    common.trace = "task";
    std::string file;
    po::options_description d("sfumato replay");
    d.add_options()("workload", po::value<std::string>(&file), "workload file (sfumato-workload JSON)");
    add_run_options(d, common);
    po::positional_options_description pos;
    pos.add("workload", 1);
    po::variables_map vm;
    if (!parse_command(args, "sfumato replay FILE.json [options]", d, vm, &pos)) return kExitOk;
    if (file.empty()) throw InputError("replay needs a workload file (sfumato replay FILE.json)");
    const workload::Workload w = workload::load(file, validate_op);

    Session s(common, text::join("sfumato replay", args));
    s.elaborate();
    const DeviceInfo info = s.chip().info();
    std::vector<std::unique_ptr<ops::IOp>> live_ops;
    std::unique_ptr<workload::Replayer> rep;
    auto factory = [&](rt::Runtime& rt) {
        return [&](rt::Context&, const workload::Task& t) {
            ops::OpArgs a = t.args;
            if (t.block_dim && takes_arg(t.op, "block_dim")) a["block_dim"] = std::to_string(t.block_dim);
            try {
                live_ops.push_back(ops::make_op(t.op, a, info));
            } catch (const InputError& e) {
                throw InputError(file + ": task " + std::to_string(t.index) + " (kernel): " + e.what());
            }
            live_ops.back()->prepare(rt);
            std::vector<KernelDesc> ks = live_ops.back()->kernels();
            if (ks.size() != 1)
                throw InputError(file + ": task " + std::to_string(t.index) + " (kernel): operator '" + t.op + "' launches " +
                                 std::to_string(ks.size()) + " kernels; a workload kernel task takes one");
            KernelDesc k = std::move(ks.front());
            // An op without a block_dim argument still runs with the file's block_dim.
            if (t.block_dim && !takes_arg(t.op, "block_dim")) k.block_dim = t.block_dim;
            return k;
        };
    };
    try {
        s.run([&](rt::Runtime& rt) {
            rep = std::make_unique<workload::Replayer>(rt.context(), w, factory(rt));
            rep->run();
        });
    } catch (const SimError& e) {
        if (e.code() != kExitDeadlock || !rep) throw;
        std::string msg = std::string(e.what()) + "\nworkload tasks pending:\n";
        for (const auto& l : rep->pending()) msg += "  " + file + ": " + l + "\n";
        throw SimError(kExitDeadlock, msg);
    }
    const ClockDomain clk = s.chip_params().clock();
    nlohmann::json summary = s.base_summary();
    summary["workload"] = file;
    summary["tasks"] = workload::tasks_json(rep->times(clk));  // by workload task index
    s.write_outputs(summary);

    std::printf("replay %s on %s (%s mode): %zu tasks on %zu streams\n", file.c_str(),
                s.chip_params().name.get().c_str(), common.mode.c_str(), w.tasks.size(), w.streams.size());
    for (const auto& t : summary["tasks"]) {
        std::printf("  task %3llu %-10s %-16s issue %10llu  start %10llu  end %10llu\n",
                    static_cast<unsigned long long>(t["index"].get<uint64_t>()), t["kind"].get<std::string>().c_str(),
                    t["name"].get<std::string>().c_str(), static_cast<unsigned long long>(t["issue_cycle"].get<uint64_t>()),
                    static_cast<unsigned long long>(t["start_cycle"].get<uint64_t>()),
                    static_cast<unsigned long long>(t["end_cycle"].get<uint64_t>()));
    }
    std::printf("  total: %llu cycles, %.3f us\n", static_cast<unsigned long long>(s.total_cycles()),
                summary["total_time_us"].get<double>());
    if (!common.out.empty()) std::printf("  wrote %s/{trace.json,stats.h5,summary.json}\n", common.out.c_str());
    return kExitOk;
}

}  // namespace

SFUMATO_COMMAND("replay", "run a workload file (task stream) through the runtime on the simulated chip", cmd_replay);

}  // namespace sfumato::cli
