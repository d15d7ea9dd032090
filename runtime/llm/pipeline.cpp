// Pipeline-parallel LLM run (see pipeline.h).
#include "runtime/llm/pipeline.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <systemc>

#include "isa/dtype.h"
#include "runtime/llm/parallel.h"
#include "runtime/llm/host_util.h"
#include "sim/error.h"

namespace sfumato::llm {

namespace {

using util::gib;
using util::held;
using util::num;

// Device bytes of one decoder layer's weights (the model's with one layer less
// the one without).
uint64_t layer_weight_bytes(const ModelConfig& c, Quant q) {
    ModelConfig one = c, none = c;
    one.num_layers = 1;
    none.num_layers = 0;
    return weight_bytes(one, q) - weight_bytes(none, q);
}

void pp_check(rt::Context& ctx, rt::Status s) {
    if (s != rt::Status::Ok) throw InputError("llm --pp: " + ctx.last_error());
}

// Total length of the union of spans, each clipped to [lo, hi).
uint64_t covered(std::vector<std::pair<uint64_t, uint64_t>> spans, uint64_t lo, uint64_t hi) {
    for (auto& s : spans) {
        s.first = std::clamp(s.first, lo, hi);
        s.second = std::clamp(s.second, lo, hi);
    }
    std::sort(spans.begin(), spans.end());
    uint64_t total = 0, a = 0, b = 0;
    for (const auto& s : spans) {
        if (s.second <= s.first) continue;
        if (s.first > b) {
            total += b - a;
            a = s.first;
            b = s.second;
        } else {
            b = std::max(b, s.second);
        }
    }
    return total + (b - a);
}

// The union of spans as disjoint spans in time order.
std::vector<std::pair<uint64_t, uint64_t>> merged(std::vector<std::pair<uint64_t, uint64_t>> spans) {
    std::sort(spans.begin(), spans.end());
    std::vector<std::pair<uint64_t, uint64_t>> out;
    for (const auto& s : spans) {
        if (s.second <= s.first) continue;
        if (out.empty() || s.first > out.back().second) out.push_back(s);
        else out.back().second = std::max(out.back().second, s.second);
    }
    return out;
}

}  // namespace

// Host programs of all chips meet here once their channel ends exist (SystemC
// host threads), and the last stage hands the sampled tokens to stage 0's host
// program.
struct PpRun::Shared {
    uint32_t chips = 0, arrived = 0;
    bool open = false;
    sc_core::sc_event opened, token;
    std::vector<std::vector<int64_t>> tokens;  // per sequence, as published by the last stage
    void barrier() {
        if (++arrived == chips) {
            open = true;
            opened.notify(sc_core::SC_ZERO_TIME);
        }
        while (!open) sc_core::wait(opened);
    }
};

std::vector<std::pair<int64_t, int64_t>> pp_partition(int64_t layers, int64_t pp) {
    if (pp < 1) throw InputError("llm --pp must be at least 1");
    if (pp > layers)
        throw InputError("llm --pp " + num(pp) + ": the model has " + num(layers) +
                         " layers (num_hidden_layers), fewer than the stages");
    std::vector<int64_t> n(static_cast<size_t>(pp), layers / pp);
    for (int64_t i = 0; i < layers % pp; ++i) ++n[static_cast<size_t>(pp - 2 - i)];
    std::vector<std::pair<int64_t, int64_t>> out;
    int64_t first = 0;
    for (int64_t k : n) {
        out.push_back({first, first + k});
        first += k;
    }
    return out;
}

std::vector<std::vector<size_t>> pp_microbatches(int64_t batch, int64_t count) {
    if (count < 1 || count > batch)
        throw InputError("llm --microbatches " + num(count) + ": must be 1.." + num(batch) + " (the batch)");
    std::vector<std::vector<size_t>> out(static_cast<size_t>(count));
    size_t seq = 0;
    for (int64_t m = 0; m < count; ++m)
        for (int64_t i = 0; i < batch / count + (m < batch % count ? 1 : 0); ++i)
            out[static_cast<size_t>(m)].push_back(seq++);
    return out;
}

PpRun::PpRun(const ModelConfig& c, const RunOptions& o, const PpOptions& p,
             const std::vector<DeviceInfo>& devs)
    : m_c(c), m_o(o), m_p(p), m_shared(std::make_unique<Shared>()) {
    if (!m_p.reuse.table) m_p.reuse.table = reuse::make_reuse_table();  // one chip configuration
    const std::string who = "llm --pp " + num(p.pp) + (p.tp > 1 ? " --tp " + num(p.tp) : "");
    if (p.tp < 1) throw InputError(who + ": --tp must be at least 1");
    m_stages = pp_partition(c.num_layers, p.pp);
    if (static_cast<int64_t>(devs.size()) != p.pp * p.tp)
        throw InputError(who + ": " + num(p.pp * p.tp) + " chips needed (stages x TP), " +
                         num(static_cast<int64_t>(devs.size())) + " given");
    if (o.graph_mode != RunOptions::GraphMode::Eager)
        throw InputError(who +
                         ": --graph-mode on|both is not modelled with "
                         "pipeline stages (use off)");
    if (o.batch < 1) throw InputError("llm: --batch must be 1..4096");
    m_mb = pp_microbatches(o.batch, p.microbatches > 0 ? p.microbatches : std::min(p.pp, o.batch));
    const ModelConfig shard = tp_shard_config(c, p.tp);
    const int64_t widest = std::max(plan_calls(), p.max_step_tokens);
    // The receive buffer: the hidden state and the residual of the widest step,
    // 16-bit each.
    m_residual_offset = (static_cast<uint64_t>(widest * c.hidden_size) * 2 + 511) / 512 * 512;
    m_recv_bytes = 2 * m_residual_offset;
    for (int64_t s = 0; s < p.pp; ++s)
        for (int64_t r = 0; r < p.tp; ++r) {
            const size_t i = static_cast<size_t>(s * p.tp + r);
            Chip ch;
            ch.stage = s;
            ch.rank = r;
            RunOptions ro = o;
            ro.first_layer = m_stages[static_cast<size_t>(s)].first;
            ro.end_layer = m_stages[static_cast<size_t>(s)].second;
            ro.reserved_bytes =
                (s > 0 ? held(m_recv_bytes) : 0) + (p.tp > 1 ? comm_reserved_bytes(p.comm_buffer_bytes) : 0);
            ro.follower = mirrored() && r > 0;
            if (ro.follower && o.weights) throw InputError(who + ": mirrored ranks need timing mode");
            if (o.weights && p.tp > 1) {
                ch.weights = std::make_unique<ModelWeights>(tp_shard_weights(c, *o.weights, p.tp, r));
                ro.weights = ch.weights.get();
            }
            const std::string chip = who + ": chip " + num(static_cast<int64_t>(i)) + " (stage " + num(s) +
                                     ", layers " + num(ro.first_layer) + ".." + num(ro.end_layer - 1) + "): ";
            // Its layers' weights alone past the device: say so before compiling
            // anything.
            const uint64_t cap =
                devs[i].gm_bytes > devs[i].reserved_bytes ? devs[i].gm_bytes - devs[i].reserved_bytes : 0;
            const uint64_t layers_bytes =
                layer_weight_bytes(shard, o.quant) * static_cast<uint64_t>(ro.end_layer - ro.first_layer);
            if (layers_bytes > cap)
                throw InputError(chip + "its " + num(ro.end_layer - ro.first_layer) +
                                 " layers' weights take " + gib(layers_bytes) + ", over the " + gib(cap) +
                                 " a program can allocate by " + gib(layers_bytes - cap));
            try {
                ch.run = std::make_unique<LlmRun>(shard, ro, devs[i]);
            } catch (const InputError& e) {
                throw InputError(chip + e.what());
            }
            ch.tokens.resize(static_cast<size_t>(o.batch));
            m_chips.push_back(std::move(ch));
        }
    m_shared->chips = static_cast<uint32_t>(m_chips.size());
    m_shared->tokens.resize(static_cast<size_t>(o.batch));
}

// Every chip's steps: each micro-batch's prefill (whole prompts grouped up to
// the token budget, a longer prompt in chunks), then each decode step over
// the micro-batches in order.
int64_t PpRun::plan_calls() {
    const RunOptions& o = m_o;
    int64_t widest = 0;
    for (const auto& mb : m_mb) {
        if (o.prefill <= o.max_prefill_tokens) {
            const size_t group = static_cast<size_t>(
                std::max<int64_t>(1, o.max_prefill_tokens / std::max<int64_t>(1, o.prefill)));
            for (size_t s = 0; s < mb.size(); s += group) {
                Call k;
                k.prefill = true;
                k.seqs.assign(mb.begin() + static_cast<long>(s),
                              mb.begin() + static_cast<long>(std::min(mb.size(), s + group)));
                k.tokens = o.prefill;
                widest = std::max(widest, k.tokens * static_cast<int64_t>(k.seqs.size()));
                m_calls.push_back(std::move(k));
            }
        } else {
            for (size_t seq : mb)
                for (int64_t st = 0; st < o.prefill; st += o.max_prefill_tokens) {
                    Call k;
                    k.prefill = true;
                    k.seqs = {seq};
                    k.start = st;
                    k.tokens = std::min(o.max_prefill_tokens, o.prefill - st);
                    widest = std::max(widest, k.tokens);
                    m_calls.push_back(std::move(k));
                }
        }
    }
    for (int64_t d = 0; d < o.decode; ++d)
        for (const auto& mb : m_mb) {
            Call k;
            k.decode_step = d;
            k.seqs = mb;
            widest = std::max(widest, static_cast<int64_t>(mb.size()));
            m_calls.push_back(std::move(k));
        }
    return widest;
}

PpRun::~PpRun() = default;

void PpRun::issue_send(Chip& ch, rt::Runtime& rt, const graph::PlanStep&, const graph::Executor& ex) {
    rt::Context& ctx = *ch.ctx;
    Chip& next = m_chips.at(static_cast<size_t>((ch.stage + 1) * m_p.tp + ch.rank));
    const graph::Plan& p = ex.plan();
    const ops::TensorRef& hidden = ex.placed(p.outputs.at(0));
    const ops::TensorRef& residual = ex.placed(p.outputs.at(1));
    if (hidden.storage_bytes() > m_residual_offset || residual.storage_bytes() > m_residual_offset)
        throw SimError(kExitFailure, "llm --pp: a step's activations outgrow the receive buffer");
    const rt::StreamId s = rt.default_stream().id;
    PpComm call;
    call.send = true;
    call.step = ch.run->steps().size();
    call.first = ctx.tasks().size();
    // The next stage's buffer is free once it consumed the previous micro-batch
    // (its ack).
    pp_check(ctx, ctx.notify_wait(ch.ack_slot, s));
    pp_check(ctx, ctx.memcpy_peer(*next.dev, next.recv, hidden.addr, hidden.storage_bytes(), s));
    pp_check(ctx, ctx.memcpy_peer(*next.dev, next.recv + m_residual_offset, residual.addr,
                               residual.storage_bytes(), s));
    pp_check(ctx, ctx.notify_record(*next.dev, next.data_slot, s));
    call.last = ctx.tasks().size();
    ch.comm.push_back(call);
}

// After each plan step's launches on chip ch: the TP all-reduce after a row-parallel projection,
// the receive buffer's acknowledgement after its last reader, the send after the last kernel.
void PpRun::on_op(Chip& ch, rt::Runtime& rt, comm::Communicator* tp_comm, const graph::PlanStep& st,
                  const graph::Executor& ex) {
    rt::Context& ctx = *ch.ctx;
    const rt::StreamId stream = rt.default_stream().id;
    const isa::DType dt = m_c.torch_dtype == "bfloat16" ? isa::DType::BF16 : isa::DType::FP16;
    Chip* prev =
        ch.stage == 0 ? nullptr : &m_chips.at(static_cast<size_t>((ch.stage - 1) * m_p.tp + ch.rank));
    const bool last = ch.stage == m_p.pp - 1;
    const graph::Plan& p = ex.plan();
    auto mark = ch.marks.find(&p);
    if (mark == ch.marks.end()) {
        // The receive buffer's last reader (views of it included), and the last
        // kernel step.
        std::set<int> recv;
        for (size_t t = 0; t < p.tensors.size(); ++t) {
            size_t r = t;
            while (p.tensors[r].kind == graph::PlanTensor::Kind::View)
                r = static_cast<size_t>(p.tensors[r].base);
            if (p.tensors[r].kind == graph::PlanTensor::Kind::External &&
                (p.tensors[r].name == kPpHidden || p.tensors[r].name == kPpResidual))
                recv.insert(static_cast<int>(t));
        }
        size_t reader = 0, end = 0;
        for (size_t s = 0; s < p.steps.size(); ++s) {
            if (p.steps[s].view) continue;
            end = s;
            for (int t : p.steps[s].in)
                if (recv.count(t)) reader = s;
        }
        mark = ch.marks.emplace(&p, std::make_pair(reader, end)).first;
    }
    const size_t s = static_cast<size_t>(&st - p.steps.data());
    if (m_p.tp > 1) {
        const std::string role = node_role(st.name);
        if (role == "o_proj" || role == "down_proj") {
            // The row-parallel projection's partial sums, reduced in place on the
            // compute stream.
            if (mirrored() && ch.rank == 0)
                for (int64_t q = 1; q < m_p.tp; ++q) {
                    const Chip& f = m_chips.at(static_cast<size_t>(ch.stage * m_p.tp + q));
                    pp_check(ctx, ctx.notify_record(*f.dev, f.follow_slot, stream));
                }
            if (mirrored() && ch.rank > 0) pp_check(ctx, ctx.notify_wait(ch.follow_slot, stream));
            const ops::TensorRef& y = ex.placed(st.out.at(0));
            PpComm call;
            call.step = ch.run->steps().size();
            call.bytes = y.storage_bytes();
            call.first = ctx.tasks().size();
            tp_comm->all_reduce(static_cast<uint32_t>(ch.rank), y.addr, y.addr,
                                y.storage_bytes() / isa::dtype_size(dt), dt, comm::RedOp::Sum, stream);
            call.last = ctx.tasks().size();
            ch.comm.push_back(call);
        }
    }
    if (prev && s == mark->second.first) pp_check(ctx, ctx.notify_record(*prev->dev, prev->ack_slot, stream));
    if (!last && s == mark->second.second) issue_send(ch, rt, st, ex);
}

// Stage 0: the token ids of a step (a prompt's chunk, or the tokens the last stage sampled in
// the previous step, waited for in the host thread until it has published them).
std::vector<int64_t> PpRun::step_ids(const LlmRun& run, const Call& k) {
    std::vector<int64_t> ids;
    for (size_t seq : k.seqs) {
        if (k.prefill) {
            const auto& pr = run.prompts()[seq];
            ids.insert(ids.end(), pr.begin() + k.start, pr.begin() + k.start + k.tokens);
            continue;
        }
        // The token this step feeds back: the last stage's output of the
        // previous step.
        const size_t need = static_cast<size_t>(k.decode_step) + 1;
        while (m_shared->tokens[seq].size() < need) sc_core::wait(m_shared->token);
        ids.push_back(m_shared->tokens[seq][need - 1]);
    }
    return ids;
}

void PpRun::join_chip(uint32_t i, rt::Runtime& rt, comm::Communicator* tp_comm) {
    Chip& ch = m_chips.at(i);
    rt::Context& ctx = rt.context();
    ch.ctx = &ctx;
    ch.dev = &rt.device();
    if (m_p.tp > 1) {
        if (!tp_comm) throw InputError("llm --pp --tp: no communicator for the stage");
        tp_comm->init_rank(static_cast<uint32_t>(ch.rank), ctx);
    }
    const bool first = ch.stage == 0, last = ch.stage == m_p.pp - 1;
    LlmRun& run = *ch.run;
    if (!first) {
        pp_check(ctx, ctx.malloc(&ch.recv, m_recv_bytes));
        pp_check(ctx, ctx.notify_create(&ch.data_slot));
        run.bind(kPpHidden, ch.recv);
        run.bind(kPpResidual, ch.recv + m_residual_offset);
    }
    if (!last) pp_check(ctx, ctx.notify_create(&ch.ack_slot));
    if (mirrored() && ch.rank > 0) pp_check(ctx, ctx.notify_create(&ch.follow_slot));
    m_shared->barrier();  // every chip's buffer and notifies exist
    run.start(rt);
    const rt::StreamId stream = rt.default_stream().id;
    Chip* prev = first ? nullptr : &m_chips.at(static_cast<size_t>((ch.stage - 1) * m_p.tp + ch.rank));
    // The receive buffer is free for the first send.
    if (prev) pp_check(ctx, ctx.notify_record(*prev->dev, prev->ack_slot, stream));
    run.before_step([this, i, stream] {
        Chip& me = m_chips[i];
        if (me.stage > 0) pp_check(*me.ctx, me.ctx->notify_wait(me.data_slot, stream));
    });
    run.after_op([this, i, tp_comm, &rt](const graph::PlanStep& st, const graph::Executor& ex) {
        on_op(m_chips[i], rt, tp_comm, st, ex);
    });
}

void PpRun::run_chip(uint32_t i, rt::Device& dev, rt::Context& ctx, comm::Communicator* tp_comm) {
    Chip& ch = m_chips.at(i);
    rt::Runtime rt(dev, ctx);
    reuse::TimingReuse service(ctx, rt.device_info(), m_p.reuse);
    join_chip(i, rt, tp_comm);
    const bool first = ch.stage == 0, last = ch.stage == m_p.pp - 1;
    LlmRun& run = *ch.run;
    for (const Call& k : m_calls) {
        std::vector<int64_t> ids = first ? step_ids(run, k) : std::vector<int64_t>{};
        const int64_t q = k.prefill ? k.tokens : 1,
                      ctx_len = k.prefill ? k.start : m_o.prefill + k.decode_step;
        const std::vector<int64_t> next = run.step(rt, k.prefill, k.seqs, q, ctx_len, std::move(ids));
        if (!last || (k.prefill && k.start + k.tokens != m_o.prefill)) continue;
        for (size_t j = 0; j < k.seqs.size(); ++j) {
            ch.tokens[k.seqs[j]].push_back(next.at(j));
            if (ch.rank == 0) m_shared->tokens[k.seqs[j]].push_back(next[j]);
        }
        if (ch.rank == 0) m_shared->token.notify(sc_core::SC_ZERO_TIME);
    }
    service.settle();
    ch.reuse = service.counters();
    if (++m_done == m_chips.size()) finish();
}

PpRun::ChipTraffic PpRun::traffic(uint32_t i) const {
    const Chip& ch = m_chips.at(i);
    ChipTraffic out;
    if (!ch.ctx) return out;
    const auto& tasks = ch.ctx->tasks();
    std::vector<bool> in_comm(tasks.size(), false);
    std::vector<std::pair<uint64_t, uint64_t>> copies, kernels;
    for (const PpComm& c : ch.comm) {
        (c.send ? out.sends : out.all_reduces)++;
        for (size_t t = c.first; t < c.last && t < tasks.size(); ++t) {
            in_comm[t] = true;
            const Task& k = *tasks[t].task;
            if (!c.send || k.kind != TaskKind::Memcpy || k.copy.dir != CopyDir::P2P) continue;
            out.sent_bytes += k.copy.bytes;
            copies.push_back({k.start_tick.v, k.end_tick.v});
        }
    }
    for (size_t t = 0; t < tasks.size(); ++t)
        if (!in_comm[t] && tasks[t].task->kind == TaskKind::Kernel)
            kernels.push_back({tasks[t].task->start_tick.v, tasks[t].task->end_tick.v});
    out.send_ps = covered(copies, 0, UINT64_MAX);
    out.kernel_ps = covered(kernels, 0, UINT64_MAX);
    out.kernel_spans = merged(std::move(kernels));
    return out;
}

std::vector<std::pair<uint64_t, uint64_t>> PpRun::send_copies(uint32_t i) const {
    const Chip& ch = m_chips.at(i);
    std::vector<std::pair<uint64_t, uint64_t>> out;
    if (!ch.ctx) return out;
    for (const PpComm& c : ch.comm)
        for (size_t t = c.first; c.send && t < c.last; ++t) {
            const Task& k = *ch.ctx->tasks()[t].task;
            if (k.kind == TaskKind::Memcpy && k.copy.dir == CopyDir::P2P)
                out.push_back({k.copy.bytes, k.end_tick.v - k.start_tick.v});
        }
    return out;
}

std::vector<std::pair<uint64_t, uint64_t>> PpRun::all_reduce_spans(uint32_t i) const {
    const Chip& ch = m_chips.at(i);
    std::vector<std::pair<uint64_t, uint64_t>> out;
    if (!ch.ctx) return out;
    for (const PpComm& c : ch.comm) {
        if (c.send) continue;
        uint64_t lo = UINT64_MAX, hi = 0;
        for (size_t t = c.first; t < c.last; ++t) {
            const Task& k = *ch.ctx->tasks()[t].task;
            lo = std::min(lo, k.start_tick.v);
            hi = std::max(hi, k.end_tick.v);
        }
        if (hi > lo) out.push_back({c.bytes, hi - lo});
    }
    return out;
}

void PpRun::finish() {
    const std::vector<StepRecord>& head = m_chips.at(static_cast<size_t>((m_p.pp - 1) * m_p.tp)).run->steps();
    if (head.size() != m_calls.size())
        throw SimError(kExitFailure, "llm --pp: the last stage ran different steps");
    auto end_of = [&](bool prefill, int64_t d) {
        uint64_t e = 0;
        for (int64_t r = 0; r < m_p.tp; ++r) {
            const auto& st = m_chips[static_cast<size_t>((m_p.pp - 1) * m_p.tp + r)].run->steps();
            for (size_t j = 0; j < m_calls.size(); ++j)
                if (m_calls[j].prefill == prefill && m_calls[j].decode_step == d)
                    e = std::max(e, st[j].begin_ps + st[j].ps);
        }
        return e;
    };
    StepRecord pre;
    pre.prefill = true;
    pre.tokens = m_o.batch * m_o.prefill;
    pre.begin_ps = m_chips[0].run->steps().front().begin_ps;
    pre.ps = end_of(true, -1) - pre.begin_ps;
    m_steps.push_back(pre);
    uint64_t t = pre.begin_ps + pre.ps;
    for (int64_t d = 0; d < m_o.decode; ++d) {
        StepRecord r;
        r.tokens = m_o.batch;
        r.begin_ps = t;
        t = end_of(false, d);
        r.ps = t - r.begin_ps;
        m_steps.push_back(r);
    }
    m_tokens = m_chips.at(static_cast<size_t>((m_p.pp - 1) * m_p.tp)).tokens;
}

bool PpRun::ranks_agree() const {
    for (int64_t r = 1; r < m_p.tp; ++r)
        if (m_chips[static_cast<size_t>((m_p.pp - 1) * m_p.tp + r)].tokens != m_tokens) return false;
    return true;
}

PpRun::ChipShare PpRun::share(uint32_t i) const {
    const Chip& ch = m_chips.at(i);
    ChipShare out;
    if (!ch.ctx || m_steps.empty()) return out;
    const auto& tasks = ch.ctx->tasks();
    std::vector<bool> in_comm(tasks.size(), false);
    std::vector<std::pair<uint64_t, uint64_t>> comm, kernels;
    uint64_t sent_pre = 0, sent_dec = 0;
    size_t sends_pre = 0, sends_dec = 0, ar_pre = 0, ar_dec = 0;
    for (const PpComm& c : ch.comm) {
        const bool pre = m_calls.at(c.step).prefill;
        (c.send ? (pre ? sends_pre : sends_dec) : (pre ? ar_pre : ar_dec))++;
        for (size_t t = c.first; t < c.last; ++t) {
            in_comm[t] = true;
            const Task& k = *tasks[t].task;
            // A send's time is its copies' (its wait for the receiver's buffer is a
            // bubble).
            if (c.send && !(k.kind == TaskKind::Memcpy && k.copy.dir == CopyDir::P2P)) continue;
            if (c.send) (pre ? sent_pre : sent_dec) += k.copy.bytes;
            comm.push_back({k.start_tick.v, k.end_tick.v});
        }
    }
    for (size_t t = 0; t < tasks.size(); ++t)
        if (!in_comm[t] && tasks[t].task->kind == TaskKind::Kernel)
            kernels.push_back({tasks[t].task->start_tick.v, tasks[t].task->end_tick.v});
    auto fill = [&](Share& s, uint64_t lo, uint64_t hi) {
        s.window_ps = hi - lo;
        s.busy_ps = covered(kernels, lo, hi);
        s.comm_ps = covered(comm, lo, hi);
        std::vector<std::pair<uint64_t, uint64_t>> all = kernels;
        all.insert(all.end(), comm.begin(), comm.end());
        s.idle_ps = s.window_ps - covered(all, lo, hi);
    };
    const StepRecord& pre = m_steps.front();
    fill(out.prefill, pre.begin_ps, pre.begin_ps + pre.ps);
    out.prefill.sent_bytes = sent_pre;
    out.prefill.sends = sends_pre;
    out.prefill.all_reduces = ar_pre;
    if (m_steps.size() > 1)
        fill(out.decode, m_steps[1].begin_ps, m_steps.back().begin_ps + m_steps.back().ps);
    out.decode.sent_bytes = sent_dec;
    out.decode.sends = sends_dec;
    out.decode.all_reduces = ar_dec;
    // Per decode step: its kernels on this chip, over its micro-batches' steps.
    out.busy_per_decode_step.assign(static_cast<size_t>(m_o.decode), 0);
    const auto& st = ch.run->steps();
    for (size_t j = 0; j < st.size() && j < m_calls.size(); ++j) {
        if (m_calls[j].prefill) continue;
        std::vector<std::pair<uint64_t, uint64_t>> spans;
        for (const StepOp& op : st[j].ops)
            for (const auto& k : op.tasks) spans.push_back({k->start_tick.v, k->end_tick.v});
        out.busy_per_decode_step[static_cast<size_t>(m_calls[j].decode_step)] +=
            covered(spans, 0, UINT64_MAX);
    }
    return out;
}

reuse::ReuseCounters PpRun::reuse_counters() const {
    reuse::ReuseCounters c;
    for (const Chip& ch : m_chips) c += ch.reuse;
    return c;
}

}  // namespace sfumato::llm
