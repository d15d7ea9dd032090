// The memory plan of a training step (train_memory.h).
#include "runtime/graph/train_memory.h"

#include <algorithm>

#include "runtime/graph/planning.h"
#include <numeric>
#include <set>

#include "sim/error.h"

namespace sfumato::graph {

namespace {

uint64_t arena_align(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

enum class TrainBlockKind : uint8_t { Activation, Input, Workspace, Grad, Const, Target, Recompute };

struct TrainBlock {
    TrainBlockKind kind = TrainBlockKind::Grad;
    std::vector<int> plan_tensors, train_tensors;
    uint64_t bytes = 0, offset = 0;
    int def = 0, last = 0;
    int merged_into = -1;  // in-place: the block whose bytes it takes
    bool two_byte = false;
};

class TrainMemoryPlanner {
public:
    TrainMemoryPlanner(Plan& fwd, TrainPlan& tp)
        : m_p(fwd), m_tp(tp), m_f(static_cast<int>(fwd.steps.size())) {
        if (fwd.num_streams > 1) throw InputError("train-step: the training forward must run on one stream");
    }

    TrainMemory plan(std::vector<ArenaBlock>* out) {
        make_blocks();
        lifetimes();
        for (const TrainBlock& b : m_b) m_mem.no_reuse_bytes += b.bytes;
        in_place();
        place();
        report();
        write_back(out);
        return m_mem;
    }

private:
    Plan& m_p;
    TrainPlan& m_tp;
    const int m_f;  // forward steps: backward item i is at position m_f + i
    std::vector<TrainBlock> m_b;
    std::vector<int> m_plan_blk, m_train_blk;
    TrainMemory m_mem;

    int plan_root(int t) const {
        while (m_p.tensors[static_cast<size_t>(t)].kind == PlanTensor::Kind::View)
            t = m_p.tensors[static_cast<size_t>(t)].base;
        return t;
    }
    uint64_t plan_view_offset(int t) const {
        uint64_t off = 0;
        while (m_p.tensors[static_cast<size_t>(t)].kind == PlanTensor::Kind::View) {
            off += m_p.tensors[static_cast<size_t>(t)].view_offset;
            t = m_p.tensors[static_cast<size_t>(t)].base;
        }
        return off;
    }
    int find(int b) const {
        while (b >= 0 && m_b[static_cast<size_t>(b)].merged_into >= 0)
            b = m_b[static_cast<size_t>(b)].merged_into;
        return b;
    }
    // The block holding a plan / train tensor's bytes (-1: not in the arena).
    int pblock(int t) const { return t < 0 ? -1 : find(m_plan_blk[static_cast<size_t>(plan_root(t))]); }
    int tblock(int t) const {
        if (t < 0) return -1;
        const TrainTensor& tt = m_tp.tensors[static_cast<size_t>(t)];
        switch (tt.kind) {
            case TrainTensor::Kind::Forward:
                return pblock(tt.plan);
            case TrainTensor::Kind::Alias:
                return tblock(tt.alias);
            case TrainTensor::Kind::WeightGrad:
                return -1;
            default:
                return find(m_train_blk[static_cast<size_t>(t)]);
        }
    }
    // Whether train tensor t starts at its block's first byte.
    bool at_block_start(int t) const {
        const TrainTensor& tt = m_tp.tensors[static_cast<size_t>(t)];
        if (tt.kind == TrainTensor::Kind::Alias) return tt.offset == 0 && at_block_start(tt.alias);
        if (tt.kind == TrainTensor::Kind::Forward) return plan_view_offset(tt.plan) == 0;
        return true;
    }

    void make_blocks() {
        m_plan_blk.assign(m_p.tensors.size(), -1);
        for (size_t i = 0; i < m_p.tensors.size(); ++i) {
            const PlanTensor& t = m_p.tensors[i];
            if (t.kind != PlanTensor::Kind::Activation && t.kind != PlanTensor::Kind::Workspace) continue;
            TrainBlock b;
            b.kind = t.kind == PlanTensor::Kind::Workspace ? TrainBlockKind::Workspace
                     : t.graph_input                       ? TrainBlockKind::Input
                                                           : TrainBlockKind::Activation;
            b.plan_tensors = {static_cast<int>(i)};
            b.bytes = arena_align(std::max<uint64_t>(1, t.ref.storage_bytes()), m_p.align);
            b.def = b.last = t.graph_input ? -1 : t.def_step;
            b.two_byte = isa::dtype_size(t.ref.dtype) == 2;
            m_plan_blk[i] = static_cast<int>(m_b.size());
            m_b.push_back(std::move(b));
        }
        m_train_blk.assign(m_tp.tensors.size(), -1);
        for (size_t i = 0; i < m_tp.tensors.size(); ++i) {
            const TrainTensor& t = m_tp.tensors[i];
            TrainBlock b;
            switch (t.kind) {
                case TrainTensor::Kind::Grad:
                    b.kind = TrainBlockKind::Grad;
                    break;
                case TrainTensor::Kind::Recompute:
                    b.kind = TrainBlockKind::Recompute;
                    break;
                case TrainTensor::Kind::Const:
                    b.kind = TrainBlockKind::Const;
                    break;
                case TrainTensor::Kind::Target:
                    b.kind = TrainBlockKind::Target;
                    break;
                default:
                    continue;
            }
            b.train_tensors = {static_cast<int>(i)};
            b.bytes = arena_align(std::max<uint64_t>(1, t.ref.storage_bytes()), m_p.align);
            // Constants and the target are uploaded before the step's first kernel; a gradient
            // is written by its item (set below).
            b.def = b.last = -1;
            m_train_blk[i] = static_cast<int>(m_b.size());
            m_b.push_back(std::move(b));
        }
    }

    void use(int blk, int pos) {
        if (blk < 0) return;
        TrainBlock& b = m_b[static_cast<size_t>(blk)];
        b.last = std::max(b.last, pos);
    }

    void lifetimes() {
        for (int s = 0; s < m_f; ++s) {
            const PlanStep& st = m_p.steps[static_cast<size_t>(s)];
            for (int t : st.in) use(pblock(t), s);
            if (st.workspace >= 0) use(pblock(st.workspace), s);
            for (int t : st.out) use(pblock(t), s);
        }
        for (size_t i = 0; i < m_tp.backward.size(); ++i) {
            const int pos = m_f + static_cast<int>(i);
            const TrainItem& it = m_tp.backward[i];
            for (int t : it.out) {
                const int b = tblock(t);
                if (b < 0) continue;
                TrainBlock& blk = m_b[static_cast<size_t>(b)];
                if (blk.kind == TrainBlockKind::Grad || blk.kind == TrainBlockKind::Recompute) {
                    if (blk.def >= 0 && blk.def != pos)
                        throw InputError("train-step plan: gradient written twice (" + it.name + ")");
                    blk.def = pos;
                }
                use(b, pos);
            }
            for (int t : it.in) use(tblock(t), pos);
        }
        for (const TrainBlock& b : m_b)
            if (b.def > b.last) throw InputError("train-step plan: a tensor is read before it is written");
    }

    // An elementwise item whose output has an input's size writes over that input when it is
    // the input's last reader.
    void in_place() {
        for (size_t i = 0; i < m_tp.backward.size(); ++i) {
            const TrainItem& it = m_tp.backward[i];
            if (it.desc.op_type != "ReluGrad" && it.desc.op_type != "LossGrad" && it.desc.op_type != "Add" &&
                it.desc.op_type != "GeluGrad" && it.desc.op_type != "ActivationGrad")
                continue;
            if (it.out.size() != 1) continue;
            const int ob = tblock(it.out[0]);
            if (ob < 0 || m_b[static_cast<size_t>(ob)].kind != TrainBlockKind::Grad) continue;
            const ops::TensorRef& o = m_tp.tensors[static_cast<size_t>(it.out[0])].ref;
            const int pos = m_f + static_cast<int>(i);
            // Prefer a gradient input (the last operand first: ReluGrad(y, dy), LossGrad(y, t)).
            for (size_t k = it.in.size(); k-- > 0;) {
                const int t = it.in[k];
                const int ib = tblock(t);
                if (ib < 0 || ib == ob) continue;
                TrainBlock& b = m_b[static_cast<size_t>(ib)];
                if (b.kind != TrainBlockKind::Grad && b.kind != TrainBlockKind::Recompute &&
                    b.kind != TrainBlockKind::Activation)
                    continue;
                const ops::TensorRef& r = m_tp.tensors[static_cast<size_t>(t)].ref;
                if (b.last != pos || !at_block_start(t) || r.dtype != o.dtype || r.numel() != o.numel() ||
                    r.shape != o.shape)
                    continue;
                TrainBlock& out = m_b[static_cast<size_t>(ob)];
                out.merged_into = ib;
                b.train_tensors.insert(b.train_tensors.end(), out.train_tensors.begin(),
                                       out.train_tensors.end());
                b.last = std::max(b.last, out.last);
                b.bytes = std::max(b.bytes, out.bytes);
                ++m_mem.in_place;
                m_mem.in_place_bytes += out.bytes;
                break;
            }
        }
    }

    // The shared first-fit placement (planning.h); two blocks conflict when their lifetimes meet.
    void place() {
        std::vector<size_t> idx;
        std::vector<ArenaItem> items;
        for (size_t i = 0; i < m_b.size(); ++i)
            if (m_b[i].merged_into < 0) {
                idx.push_back(i);
                items.push_back({m_b[i].bytes, m_b[i].def});
            }
        std::vector<uint64_t> offsets;
        m_mem.arena_bytes = place_first_fit(
            items,
            [&](size_t a, size_t b) {
                const TrainBlock &x = m_b[idx[a]], &y = m_b[idx[b]];
                return !(y.last < x.def || x.last < y.def);
            },
            offsets);
        for (size_t k = 0; k < idx.size(); ++k) m_b[idx[k]].offset = offsets[k];
    }

    std::string position_name(int pos) const {
        if (pos < 0) return "before the first kernel";
        if (pos < m_f) return "forward " + m_p.steps[static_cast<size_t>(pos)].name;
        return "backward " + m_tp.backward[static_cast<size_t>(pos - m_f)].name;
    }

    void report() {
        const int end = m_f + static_cast<int>(m_tp.backward.size());
        std::vector<int64_t> delta(static_cast<size_t>(end + 2), 0);  // position p at index p + 1
        for (const TrainBlock& b : m_b) {
            if (b.merged_into >= 0) continue;
            delta[static_cast<size_t>(b.def + 1)] += static_cast<int64_t>(b.bytes);
            delta[static_cast<size_t>(b.last + 2)] -= static_cast<int64_t>(b.bytes);
            if ((b.kind == TrainBlockKind::Activation || b.kind == TrainBlockKind::Input) && b.def < m_f &&
                b.last >= m_f) {
                m_mem.kept_bytes += b.bytes;
                if (b.two_byte) m_mem.kept_2byte_bytes += b.bytes;
            }
        }
        int64_t live = 0;
        for (int p = -1; p < end; ++p) {
            live += delta[static_cast<size_t>(p + 1)];
            if (static_cast<uint64_t>(live) > m_mem.live_peak_bytes) {
                m_mem.live_peak_bytes = static_cast<uint64_t>(live);
                m_mem.live_peak_at = position_name(p);
            }
        }
        for (const TrainTensor& t : m_tp.tensors)
            if (t.kind == TrainTensor::Kind::Recompute) {
                ++m_mem.recomputed;
                m_mem.recomputed_bytes +=
                    arena_align(std::max<uint64_t>(1, t.ref.storage_bytes()), m_p.align);
            }
    }

    void write_back(std::vector<ArenaBlock>* out) {
        for (size_t i = 0; i < m_p.tensors.size(); ++i) {
            PlanTensor& t = m_p.tensors[i];
            const int b = pblock(static_cast<int>(i));
            if (b < 0) continue;
            t.offset = m_b[static_cast<size_t>(b)].offset + plan_view_offset(static_cast<int>(i));
            if (t.kind != PlanTensor::Kind::View) t.bytes = m_b[static_cast<size_t>(b)].bytes;
            t.last_step = m_b[static_cast<size_t>(b)].last;
        }
        m_p.memory.peak_bytes = m_mem.arena_bytes;
        for (size_t i = 0; i < m_tp.tensors.size(); ++i) {
            TrainTensor& t = m_tp.tensors[i];
            if (m_train_blk[i] < 0) continue;
            t.offset = m_b[static_cast<size_t>(find(m_train_blk[i]))].offset;
        }
        m_tp.arena_bytes = m_mem.arena_bytes;
        if (!out) return;
        out->clear();
        for (const TrainBlock& b : m_b) {
            if (b.merged_into >= 0) continue;
            ArenaBlock a;
            a.plan_tensors = b.plan_tensors;
            a.train_tensors = b.train_tensors;
            a.offset = b.offset;
            a.bytes = b.bytes;
            a.def = b.def;
            a.last = b.last;
            a.name = !b.plan_tensors.empty() ? m_p.tensors[static_cast<size_t>(b.plan_tensors[0])].name
                                             : "train tensor " + std::to_string(b.train_tensors[0]);
            out->push_back(std::move(a));
        }
    }
};

}  // namespace

TrainMemory plan_train_memory(Plan& fwd, TrainPlan& tp, const DeviceInfo& dev,
                              std::vector<ArenaBlock>* blocks) {
    TrainMemory m = TrainMemoryPlanner(fwd, tp).plan(blocks);
    m.weight_bytes = fwd.memory.weight_bytes;
    m.gradient_bytes = tp.grad_bytes;
    m.state_bytes = tp.state_bytes;
    m.master_bytes = tp.master_bytes;
    m.workspace_bytes = tp.workspace_bytes;
    m.capacity_bytes = dev.gm_bytes > dev.reserved_bytes ? dev.gm_bytes - dev.reserved_bytes : 0;
    return m;
}

namespace {

int view_root(const Plan& p, int t) {
    while (p.tensors[static_cast<size_t>(t)].kind == PlanTensor::Kind::View)
        t = p.tensors[static_cast<size_t>(t)].base;
    return t;
}

}  // namespace

bool recomputable(const Plan& p, const PlanStep& st, int pt, const std::vector<bool>& kept) {
    static const std::set<std::string> cheap = {
        "MaxPool", "AveragePool", "GlobalAveragePool", "Relu", "LeakyRelu", "Sigmoid", "Clip", "Add",
        "Sub",     "Mul"};
    const PlanTensor& t = p.tensors[static_cast<size_t>(pt)];
    if (t.kind != PlanTensor::Kind::Activation || t.graph_output) return false;
    if (st.view || !st.op || !cheap.count(st.op_type) || st.out.size() != 1 || st.fused.size() > 1)
        return false;
    if (!st.desc.attrs.get_string("activation", "").empty()) return false;
    for (int i : st.in) {
        if (i < 0 || p.tensors[static_cast<size_t>(i)].kind == PlanTensor::Kind::Weight) continue;
        const size_t r = static_cast<size_t>(view_root(p, i));
        if (r >= kept.size() || !kept[r]) return false;
    }
    return true;
}

std::vector<bool> read_by_backward(const Plan& p, const TrainPlan& tp) {
    std::vector<bool> read(p.tensors.size(), false);
    for (const TrainTensor& t : tp.tensors)
        if (t.kind == TrainTensor::Kind::Forward) read[static_cast<size_t>(view_root(p, t.plan))] = true;
    return read;
}

nlohmann::json train_memory_json(const TrainMemory& m) {
    const double cap = static_cast<double>(m.capacity_bytes);
    return {
        {"peak_bytes", m.total_bytes()},
        {"capacity_bytes", m.capacity_bytes},
        {"headroom_bytes", static_cast<int64_t>(m.capacity_bytes) - static_cast<int64_t>(m.total_bytes())},
        {"peak_share_of_capacity", cap > 0 ? static_cast<double>(m.total_bytes()) / cap : 0.0},
        {"weight_bytes", m.weight_bytes},
        {"gradient_bytes", m.gradient_bytes},
        {"optimizer_state_bytes", m.state_bytes},
        {"master_weight_bytes", m.master_bytes},
        {"workspace_bytes", m.workspace_bytes},
        {"comm_buffer_bytes", m.comm_bytes},
        {"arena_bytes", m.arena_bytes},
        {"arena_live_peak_bytes", m.live_peak_bytes},
        {"arena_live_peak_at", m.live_peak_at},
        {"arena_no_reuse_bytes", m.no_reuse_bytes},
        {"kept_activation_bytes", m.kept_bytes},
        {"kept_activation_2byte_bytes", m.kept_2byte_bytes},
        {"in_place_gradients", m.in_place},
        {"in_place_bytes", m.in_place_bytes},
        {"recomputed_steps", m.recomputed},
        {"recomputed_bytes", m.recomputed_bytes}};
}

}  // namespace sfumato::graph
