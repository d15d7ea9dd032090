// Replay's planning (runtime/replay/replay_kernels.h).
#include "runtime/replay/replay_kernels.h"

#include <filesystem>

#include "runtime/ops/node_launch.h"
#include "runtime/ops/node_op.h"
#include "sim/error.h"
#include "traces/node_json.h"

namespace sfumato::replay {

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

namespace {

bool takes_arg(const std::string& op, const char* name) {
    for (const auto& a : ops::find_op(op)->args) {
        if (a.name == name) return true;
    }
    return false;
}


}  // namespace

// Operands a task does not place: device buffers taken at no simulated cost, reused by later
// tasks (by size and operand position), so an imported trace of thousands of operators does not
// need thousands of buffers. Their contents are whatever is there (imported workloads carry no
// data).
uint64_t ReplayKernels::Scratch::get(rt::Context& ctx, uint64_t bytes, int slot, const std::string& where) {
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

namespace {
using Scratch = ReplayKernels::Scratch;

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

}  // namespace

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


workload::KernelFactory ReplayKernels::factory(rt::Runtime& rt) {
    return [this, &rt](rt::Context& ctx, const workload::Task& t, const workload::Placer& p) { return kernels(rt, ctx, t, p); };
}

std::vector<KernelDesc> ReplayKernels::kernels(rt::Runtime& rt, rt::Context& ctx, const workload::Task& t,
                                               const workload::Placer& p) {
    const std::string where = m_file + ": task " + std::to_string(t.index) + " (kernel)";
    if (m_instr) {
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
            k.body = workload::replay_body(m_streams.at(l.instr), p.relocation());
            k.op = t.op;
            k.op_args = t.args;
            ks.push_back(std::move(k));
        }
        if (!t.node.is_null()) stamp_recorded_node(ks, t, p, where);
        return ks;
    }
    if (!t.node.is_null()) {
        if (t.measured_us < 0) return node_kernels(ctx, t, p, m_scratch, m_info, where);
        // An imported operator the chip cannot plan is skipped and reported, not fatal.
        try {
            return node_kernels(ctx, t, p, m_scratch, m_info, where);
        } catch (const InputError& e) {
            m_import_skips[t.index] = e.what();
            return {};
        }
    }
    if (t.op.empty())
        throw InputError(where + ": names neither an operator nor a graph node; replay it with --level instructions");
    ops::OpArgs a = t.args;
    if (t.block_dim && takes_arg(t.op, "block_dim")) a["block_dim"] = std::to_string(t.block_dim);
    try {
        m_live_ops.push_back(ops::make_op(t.op, a, m_info));
    } catch (const InputError& e) {
        throw InputError(where + ": " + e.what());
    }
    // Its operands are placed (and filled) at no simulated cost: no hidden host work.
    ctx.set_untimed(true);
    m_live_ops.back()->prepare(rt);
    ctx.set_untimed(false);
    std::vector<KernelDesc> ks = m_live_ops.back()->kernels();
    for (KernelDesc& k : ks) {
        // An op without a block_dim argument still runs with the file's block_dim.
        if (t.block_dim && !takes_arg(t.op, "block_dim")) k.block_dim = t.block_dim;
        if (!t.name.empty()) k.name = ks.size() == 1 ? t.name : t.name + "#" + std::to_string(&k - ks.data());
    }
    return ks;
}

}  // namespace sfumato::replay
