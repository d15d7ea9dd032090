// `sfumato replay FILE.json [--level ops|instructions] [--config F] [--set k=v] [--out DIR]
// [--mode M] [--trace L] [--record F]`: runs a workload file's task stream (traces/workload.h)
// through the runtime on the simulated chip and writes summary.json with a "tasks" list
// (issue/start/end cycle of every task), trace.json and stats.h5. At the `ops` level (default)
// every kernel is planned again for the target chip: a graph-node task through the operator's
// graph-node face on the buffers it names, an operator-library task (`op` + `args`, the names of
// `sfumato kernel`) with its operands placed before it at no simulated cost. At the
// `instructions` level the recorded instruction streams run unchanged, after a check that the
// target chip can hold them (the reason is printed otherwise, exit 2). A malformed file exits 2
// naming the task; a run that cannot finish exits 4 naming the tasks still pending.
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "isa/text.h"
#include "runtime/ops/i_op.h"
#include "runtime/ops/node_launch.h"
#include "runtime/ops/node_op.h"
#include "cli/command.h"
#include "cli/replay_report.h"
#include "cli/session.h"
#include "sim/error.h"
#include "traces/workload.h"
#include "traces/node_json.h"
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


// Operands a task does not place: device buffers taken at no simulated cost, reused by later
// tasks (by size and operand position), so an imported trace of thousands of operators does not
// need thousands of buffers. Their contents are whatever is there (imported workloads carry no
// data).
struct Scratch {
    std::map<std::pair<uint64_t, int>, uint64_t> bufs;
    uint64_t get(rt::Context& ctx, uint64_t bytes, int slot, const std::string& where) {
        bytes = std::max<uint64_t>(bytes, 1);
        auto [it, fresh] = bufs.try_emplace({bytes, slot}, 0);
        if (!fresh) return it->second;
        rt::DevPtr p = 0;
        ctx.set_untimed(true);
        const rt::Status st = ctx.malloc(&p, bytes);
        ctx.set_untimed(false);
        if (st != rt::Status::Ok) {
            bufs.erase(it);
            throw InputError(where + ": cannot place an operand of " + std::to_string(bytes) + " bytes: " + ctx.last_error());
        }
        it->second = p;
        return p;
    }
};

// A graph-node task planned again for this chip, on the buffers it names.
std::vector<KernelDesc> node_kernels(rt::Context& ctx, const workload::Task& t, const workload::Placer& p, Scratch& scratch,
                                     const DeviceInfo& info, const std::string& where) {
    workload::NodeJson nj = workload::node_from_json(t.node, where);
    for (size_t i = 0; i < nj.node.inputs.size(); ++i) {
        ops::TensorRef& r = nj.node.inputs[i];
        if (!r.present) continue;
        r.addr = nj.in_at[i].buffer.empty() ? scratch.get(ctx, r.storage_bytes(), static_cast<int>(i), where)
                                             : p.addr(nj.in_at[i].buffer, nj.in_at[i].offset);
    }
    std::unique_ptr<ops::INodeOp> op;
    try {
        op = ops::make_node_op(nj.node, info);
    } catch (const InputError& e) {
        throw InputError(where + ": " + e.what());
    }
    std::vector<ops::TensorRef> out = nj.out.empty() ? op->outputs() : nj.out;
    for (size_t o = 0; o < out.size(); ++o) {
        if (!out[o].present) continue;
        const int v = op->view_of(o);
        if (v >= 0) out[o].addr = nj.node.inputs.at(static_cast<size_t>(v)).addr;
        else if (o < nj.out_at.size() && !nj.out_at[o].buffer.empty()) out[o].addr = p.addr(nj.out_at[o].buffer, nj.out_at[o].offset);
        else out[o].addr = scratch.get(ctx, out[o].storage_bytes(), 100 + static_cast<int>(o), where);
    }
    uint64_t ws = 0;
    if (const uint64_t need = op->workspace_bytes()) {
        ws = !nj.workspace_at.buffer.empty() && nj.workspace_bytes >= need ? p.addr(nj.workspace_at.buffer, nj.workspace_at.offset)
                                                                          : scratch.get(ctx, need, 200, where);
    }
    std::vector<KernelDesc> ks = op->launches(nj.node.inputs, out, ws);
    ops::stamp_node_launch(ks, nj.node, nj.node.inputs, out, ws, op->workspace_bytes());  // a replay records as a node too
    const std::string base = !t.name.empty() ? t.name : nj.node.name;
    for (size_t k = 0; k < ks.size(); ++k) {
        if (ks.size() == t.launches.size()) ks[k].name = t.launches[k].name;
        else ks[k].name = ks.size() == 1 ? base : base + "#" + std::to_string(k);
        if (ks[k].type.empty()) ks[k].type = nj.node.op_type;
    }
    return ks;
}

// An instruction replay of a node task keeps the node (on the replay's buffers), so recording
// the replay gives a file that still replays at the ops level.
void stamp_recorded_node(std::vector<KernelDesc>& ks, const workload::Task& t, const workload::Placer& p, const std::string& where) {
    workload::NodeJson nj = workload::node_from_json(t.node, where);
    auto place = [&](ops::TensorRef& r, const workload::Placement& at) {
        if (!at.buffer.empty()) r.addr = p.addr(at.buffer, at.offset);
    };
    for (size_t i = 0; i < nj.node.inputs.size(); ++i) place(nj.node.inputs[i], nj.in_at[i]);
    for (size_t o = 0; o < nj.out.size(); ++o) place(nj.out[o], nj.out_at[o]);
    const uint64_t ws = nj.workspace_at.buffer.empty() ? 0 : p.addr(nj.workspace_at.buffer, nj.workspace_at.offset);
    ops::stamp_node_launch(ks, nj.node, nj.node.inputs, nj.out, ws, nj.workspace_bytes);
}

// Refuses, before the run, a recording whose instruction streams this chip cannot hold.
std::map<std::string, std::shared_ptr<const workload::KernelStreams>> load_streams(const workload::Workload& w,
                                                                                   const std::string& file,
                                                                                   const DeviceInfo& info,
                                                                                   const std::string& chip) {
    if (w.instr_file.empty())
        throw InputError(file + ": --level instructions needs a recording made with --record-level instructions "
                                "(the file names no instr_file)");
    std::filesystem::path h5(w.instr_file);
    if (h5.is_relative()) h5 = std::filesystem::path(file).parent_path() / h5;
    auto streams = workload::read_instr_h5(h5.string());
    for (const workload::Task& t : w.tasks) {
        if (t.kind != workload::Kind::Kernel) continue;
        const std::string where = file + ": task " + std::to_string(t.index) + " (kernel " + t.name + ")";
        if (t.launches.empty()) throw InputError(where + ": no recorded launches to replay at the instructions level");
        for (const workload::Launch& l : t.launches) {
            auto it = streams.find(l.instr);
            if (l.instr.empty() || it == streams.end())
                throw InputError(where + ": launch '" + l.name + "' has no instruction stream in " + h5.string());
            const std::string why = workload::check_streams_fit(*it->second, l.kind, l.block_dim, info);
            if (!why.empty())
                throw InputError("cannot replay the recorded instructions on " + chip + ": " + where + ", launch '" + l.name +
                                 "': " + why);
        }
    }
    return streams;
}

int cmd_replay(const std::vector<std::string>& args) {
    CommonOptions common;
    common.trace = "task";
    std::string file, level = "ops";
    po::options_description d("sfumato replay");
    d.add_options()("workload", po::value<std::string>(&file), "workload file (sfumato-workload JSON)")(
        "level", po::value<std::string>(&level)->default_value("ops"),
        "ops: plan every operator again for the target chip | instructions: replay the recorded instruction streams");
    add_run_options(d, common);
    po::positional_options_description pos;
    pos.add("workload", 1);
    po::variables_map vm;
    if (!parse_command(args, "sfumato replay FILE.json [options]", d, vm, &pos)) return kExitOk;
    if (file.empty()) throw InputError("replay needs a workload file (sfumato replay FILE.json)");
    if (level != "ops" && level != "instructions") throw InputError("--level must be ops or instructions, not '" + level + "'");
    const bool instr_level = level == "instructions";
    const workload::Workload w = workload::load(file, validate_op);

    Session s(common, text::join("sfumato replay", args));
    s.add_input("workload", file);
    s.elaborate();
    const DeviceInfo info = s.chip().info();
    std::map<std::string, std::shared_ptr<const workload::KernelStreams>> streams;
    if (instr_level) streams = load_streams(w, file, info, s.chip_params().name.get());
    std::vector<std::unique_ptr<ops::IOp>> live_ops;
    Scratch scratch;
    std::map<size_t, std::string> import_skips;
    std::unique_ptr<workload::Replayer> rep;
    auto factory = [&](rt::Runtime& rt) {
        return [&](rt::Context& ctx, const workload::Task& t, const workload::Placer& p) -> std::vector<KernelDesc> {
            const std::string where = file + ": task " + std::to_string(t.index) + " (kernel)";
            if (instr_level) {
                std::vector<KernelDesc> ks;
                for (const workload::Launch& l : t.launches) {
                    KernelDesc k;
                    k.name = l.name;
                    k.type = l.type;
                    k.kind = l.kind;
                    k.block_dim = l.block_dim;
                    k.flops = l.flops;
                    k.bytes = l.bytes;
                    k.min_compute_cycles = l.min_compute_cycles;
                    k.args_bytes = l.args_bytes;
                    k.code_bytes = l.code_bytes;
                    k.body = workload::replay_body(streams.at(l.instr), p.relocation());
                    k.op = t.op;
                    k.op_args = t.args;
                    ks.push_back(std::move(k));
                }
                if (!t.node.is_null()) stamp_recorded_node(ks, t, p, where);
                return ks;
            }
            if (!t.node.is_null()) {
                if (t.measured_us < 0) return node_kernels(ctx, t, p, scratch, info, where);
                // An imported operator the chip cannot plan is skipped and reported, not fatal.
                try {
                    return node_kernels(ctx, t, p, scratch, info, where);
                } catch (const InputError& e) {
                    import_skips[t.index] = e.what();
                    return {};
                }
            }
            if (t.op.empty())
                throw InputError(where + ": names neither an operator nor a graph node; replay it with --level instructions");
            ops::OpArgs a = t.args;
            if (t.block_dim && takes_arg(t.op, "block_dim")) a["block_dim"] = std::to_string(t.block_dim);
            try {
                live_ops.push_back(ops::make_op(t.op, a, info));
            } catch (const InputError& e) {
                throw InputError(where + ": " + e.what());
            }
            // Its operands are placed (and filled) at no simulated cost: no hidden host work.
            ctx.set_untimed(true);
            live_ops.back()->prepare(rt);
            ctx.set_untimed(false);
            std::vector<KernelDesc> ks = live_ops.back()->kernels();
            for (KernelDesc& k : ks) {
                // An op without a block_dim argument still runs with the file's block_dim.
                if (t.block_dim && !takes_arg(t.op, "block_dim")) k.block_dim = t.block_dim;
                if (!t.name.empty()) k.name = ks.size() == 1 ? t.name : t.name + "#" + std::to_string(&k - ks.data());
            }
            return ks;
        };
    };
    try {
        s.run([&](rt::Runtime& rt) {
            rep = std::make_unique<workload::Replayer>(rt.context(), w, factory(rt),
                                                       std::filesystem::path(file).parent_path().string());
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
    summary["level"] = level;
    summary["tasks"] = workload::tasks_json(rep->times(clk));  // by workload task index
    const nlohmann::json imported = imported_report(w, *rep, import_skips);
    if (!imported.is_null()) summary["imported"] = imported;
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
    if (!common.out.empty()) std::printf("  wrote %s/{trace.json,stats.h5,summary.json}\n", common.out.c_str());
    return kExitOk;
}

}  // namespace

SFUMATO_COMMAND("replay", "run a workload file (task stream) through the runtime on the simulated chip", cmd_replay);

}  // namespace sfumato::cli
