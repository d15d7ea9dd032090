// Tensor-parallel LLM run (see parallel.h).
#include "runtime/llm/parallel.h"

#include <algorithm>

#include "isa/dtype.h"
#include "runtime/llm/host_util.h"
#include "sim/error.h"

namespace sfumato::llm {

namespace {

using util::num;

// Columns [from, from + n) of each row of a row-major [rows, cols] matrix.
void take_cols(const std::vector<float>& m, int64_t cols, int64_t from, int64_t n, std::vector<float>& out,
               int64_t out_cols, int64_t out_from) {
    const int64_t rows = static_cast<int64_t>(m.size()) / cols;
    for (int64_t r = 0; r < rows; ++r)
        std::copy_n(m.begin() + r * cols + from, n, out.begin() + r * out_cols + out_from);
}

std::vector<float> rows_of(const std::vector<float>& m, int64_t cols, int64_t from, int64_t n) {
    return {m.begin() + from * cols, m.begin() + (from + n) * cols};
}

}  // namespace

ModelConfig tp_shard_config(const ModelConfig& c, int64_t tp) {
    if (tp < 1) throw InputError("llm: --tp must be at least 1");
    if (tp == 1) return c;
    const std::string who = "llm --tp " + num(tp) + ": " + c.name + " has ";
    if (c.moe())
        throw InputError("llm --tp " + num(tp) + ": " + c.name +
                         " is a mixture-of-experts model; tensor parallelism of "
                         "its experts is not modelled");
    if (c.num_heads % tp != 0)
        throw InputError(who + num(c.num_heads) + " attention heads (num_attention_heads), which " + num(tp) +
                         " chips do not divide");
    if (c.num_kv_heads >= tp ? c.num_kv_heads % tp != 0 : tp % c.num_kv_heads != 0)
        throw InputError(who + num(c.num_kv_heads) + " KV heads (num_key_value_heads): " + num(tp) +
                         " chips must divide them, or be a multiple of them (each "
                         "KV head then replicated)");
    if (c.intermediate_size % tp != 0)
        throw InputError(who + "an MLP of " + num(c.intermediate_size) + " (intermediate_size), which " +
                         num(tp) + " chips do not divide");
    ModelConfig s = c;
    s.name = c.name + " (TP shard 1/" + num(tp) + ")";
    s.num_heads = c.num_heads / tp;
    s.num_kv_heads = std::max<int64_t>(1, c.num_kv_heads / tp);
    s.intermediate_size = c.intermediate_size / tp;
    return s;
}

int64_t tp_first_kv_head(const ModelConfig& c, int64_t tp, int64_t rank) {
    // Replicated: the query heads of a rank all use one KV head (tp is a multiple
    // of the KV heads, so a rank's heads lie inside one group of num_heads /
    // num_kv_heads).
    return c.num_kv_heads >= tp ? rank * (c.num_kv_heads / tp) : rank / (tp / c.num_kv_heads);
}

ModelWeights tp_shard_weights(const ModelConfig& c, const ModelWeights& w, int64_t tp, int64_t rank) {
    const ModelConfig s = tp_shard_config(c, tp);
    if (tp == 1) return w;
    const int64_t H = c.hidden_size, D = c.head_dim, Q = c.q_size(), KV = c.kv_size(),
                  I = c.intermediate_size;
    const int64_t q = s.q_size(), kv = s.kv_size(), i = s.intermediate_size;
    const int64_t q0 = rank * q, kv0 = tp_first_kv_head(c, tp, rank) * D, i0 = rank * i;
    const int64_t cols = Q + 2 * KV, scols = q + 2 * kv;
    ModelWeights out;
    out.embed = w.embed;
    out.final_norm = w.final_norm;
    out.lm_head = w.lm_head;
    for (const LayerWeights& L : w.layers) {
        LayerWeights R;
        R.ln1 = L.ln1;
        R.ln2 = L.ln2;
        R.wqkv.assign(static_cast<size_t>(H * scols), 0.f);
        take_cols(L.wqkv, cols, q0, q, R.wqkv, scols, 0);
        take_cols(L.wqkv, cols, Q + kv0, kv, R.wqkv, scols, q);
        take_cols(L.wqkv, cols, Q + KV + kv0, kv, R.wqkv, scols, q + kv);
        if (!L.bqkv.empty()) {
            R.bqkv.assign(static_cast<size_t>(scols), 0.f);
            take_cols(L.bqkv, cols, q0, q, R.bqkv, scols, 0);
            take_cols(L.bqkv, cols, Q + kv0, kv, R.bqkv, scols, q);
            take_cols(L.bqkv, cols, Q + KV + kv0, kv, R.bqkv, scols, q + kv);
        }
        R.wo = rows_of(L.wo, H, q0, q);
        R.w_gate_up.assign(static_cast<size_t>(H * 2 * i), 0.f);
        take_cols(L.w_gate_up, 2 * I, i0, i, R.w_gate_up, 2 * i, 0);
        take_cols(L.w_gate_up, 2 * I, I + i0, i, R.w_gate_up, 2 * i, i);
        R.w_down = rows_of(L.w_down, H, i0, i);
        out.layers.push_back(std::move(R));
    }
    return out;
}

uint64_t comm_reserved_bytes(uint64_t buffer_bytes) {
    // The device allocator hands out power-of-two blocks of at least 2 MiB
    // (runtime/rt/buddy_arena.h).
    auto held = [](uint64_t b) {
        uint64_t p = 2ull << 20;
        while (p < b) p <<= 1;
        return p;
    };
    return 2 * held(buffer_bytes) + held(2 * buffer_bytes);
}

RankCollectives::Share RankCollectives::over(const rt::Context& ctx, const std::vector<size_t>& steps,
                                             const std::vector<StepRecord>& records) const {
    Share sh;
    std::vector<std::pair<uint64_t, uint64_t>> spans;
    // Which steps count (a serving run has thousands: no search per call).
    std::vector<char> in(records.size(), 0);
    for (size_t s : steps) {
        sh.step_ps += records.at(s).ps;
        in[s] = 1;
    }
    for (const Call& c : m_calls) {
        if (c.step >= in.size() || !in[c.step]) continue;
        ++sh.calls;
        sh.bytes += c.bytes;
        for (size_t i = c.first; i < c.last; ++i) {
            const Task& t = *ctx.tasks()[i].task;
            if (t.end_tick.v > t.start_tick.v) spans.push_back({t.start_tick.v, t.end_tick.v});
        }
    }
    std::sort(spans.begin(), spans.end());
    uint64_t lo = 0, hi = 0;
    for (const auto& sp : spans) {
        if (sp.first > hi) {
            sh.comm_ps += hi - lo;
            lo = sp.first;
            hi = sp.second;
        } else {
            hi = std::max(hi, sp.second);
        }
    }
    sh.comm_ps += hi - lo;
    return sh;
}

TpRun::TpRun(const ModelConfig& c, const RunOptions& o, const TpOptions& t,
             const std::vector<DeviceInfo>& devs)
    : m_c(c), m_shard(tp_shard_config(c, t.tp)), m_t(t) {
    // The ranks' chips share one configuration (a system's chips do): one table of re-use identities.
    if (!m_t.reuse.table) m_t.reuse.table = reuse::make_reuse_table();
    if (static_cast<int64_t>(devs.size()) != t.tp)
        throw InputError("llm --tp " + num(t.tp) + ": the system has " +
                         num(static_cast<int64_t>(devs.size())) + " chips for it");
    if (o.graph_mode != RunOptions::GraphMode::Eager)
        throw InputError("llm --tp " + num(t.tp) +
                         ": --graph-mode on|both is not modelled with collectives (use off)");
    for (int64_t r = 0; r < t.tp; ++r) {
        Rank rk;
        RunOptions ro = o;
        ro.reserved_bytes = o.reserved_bytes + (t.tp > 1 ? comm_reserved_bytes(t.comm_buffer_bytes) : 0);
        ro.follower = mirrored() && r > 0;
        if (ro.follower && o.weights) throw InputError("llm --tp: mirrored ranks need timing mode");
        if (o.weights) {
            rk.weights = std::make_unique<ModelWeights>(tp_shard_weights(c, *o.weights, t.tp, r));
            ro.weights = rk.weights.get();
        }
        try {
            rk.run = std::make_unique<LlmRun>(m_shard, ro, devs[static_cast<size_t>(r)]);
        } catch (const InputError& e) {
            throw InputError("llm --tp " + num(t.tp) + ": chip " + num(r) + ": " + e.what());
        }
        m_ranks.push_back(std::move(rk));
    }
}

TpRun::~TpRun() = default;

void TpRun::run_rank(uint32_t r, rt::Device& dev, rt::Context& ctx, comm::Communicator* comm) {
    rt::Runtime rt(dev, ctx);
    reuse::TimingReuse service(ctx, rt.device_info(), m_t.reuse);
    join_rank(r, rt, comm);
    Rank& rk = m_ranks.at(r);
    rk.run->run(rt);
    rk.reuse = service.counters();
    rk.bounds = service.launch_bounds();
    rk.ps_per_cycle = static_cast<double>(rt.device_info().clock.ticks(1000000)) / 1e6;
    if (++m_done == m_ranks.size()) finish();
}

void TpRun::join_rank(uint32_t r, rt::Runtime& rt, comm::Communicator* comm) {
    Rank& rk = m_ranks.at(r);
    rt::Context& ctx = rt.context();
    rk.ctx = &ctx;
    rk.dev = &rt.device();
    const bool leader = mirrored() && r == 0, follower = mirrored() && r > 0;
    if (follower && ctx.notify_create(&rk.slot) != rt::Status::Ok) throw InputError(ctx.last_error());
    if (m_t.tp > 1 && !comm) throw InputError("llm --tp: no communicator");
    if (m_t.tp > 1) comm->init_rank(r, ctx);  // a rendezvous: every rank's slot and device are set
    const isa::DType dt = m_c.torch_dtype == "bfloat16" ? isa::DType::BF16 : isa::DType::FP16;
    LlmRun& run = *rk.run;
    run.after_op(
        [this, r, leader, follower, dt, comm, &rt](const graph::PlanStep& st, const graph::Executor& ex) {
            if (m_t.tp == 1) return;
            const std::string role = node_role(st.name);
            if (role != "o_proj" && role != "down_proj") return;
            Rank& me = m_ranks[r];
            rt::Context& c = *me.ctx;
            // The row-parallel projection's partial sums, reduced in place on the
            // compute stream.
            const rt::StreamId stream = rt.default_stream().id;
            auto check = [&](rt::Status status) {
                if (status != rt::Status::Ok) throw InputError(c.last_error());
            };
            if (leader)
                for (size_t q = 1; q < m_ranks.size(); ++q)
                    check(c.notify_record(*m_ranks[q].dev, m_ranks[q].slot, stream));
            if (follower) check(c.notify_wait(me.slot, stream));
            const ops::TensorRef& y = ex.placed(st.out.at(0));
            const uint64_t count = y.storage_bytes() / isa::dtype_size(dt);
            RankCollectives::Call call;
            call.first = c.tasks().size();
            call.step = me.run->steps().size();
            call.bytes = y.storage_bytes();
            comm->all_reduce(r, y.addr, y.addr, count, dt, comm::RedOp::Sum, stream);
            call.last = c.tasks().size();
            me.coll.add(call);
        });
}

void TpRun::finish() {
    // Every rank ran the same steps: a step ends when its slowest rank's does.
    m_steps = m_ranks[0].run->steps();
    for (const Rank& rk : m_ranks) {
        const auto& st = rk.run->steps();
        if (st.size() != m_steps.size())
            throw SimError(kExitFailure, "llm --tp: the ranks ran different steps");
        for (size_t s = 0; s < st.size(); ++s) {
            const uint64_t end = std::max(m_steps[s].begin_ps + m_steps[s].ps, st[s].begin_ps + st[s].ps);
            m_steps[s].begin_ps = std::min(m_steps[s].begin_ps, st[s].begin_ps);
            m_steps[s].ps = end - m_steps[s].begin_ps;
        }
    }
    for (const Rank& rk : m_ranks) {
        const size_t expect = m_t.tp > 1 ? static_cast<size_t>(2 * m_c.num_layers) * m_steps.size() : 0;
        if (rk.coll.calls().size() != expect)
            throw SimError(kExitFailure, "llm --tp: a rank issued " + std::to_string(rk.coll.calls().size()) +
                                             " all-reduces, expected " + std::to_string(expect) +
                                             " (two per layer and step): the step plan lost a projection");
    }
}

bool TpRun::ranks_agree() const {
    for (const Rank& rk : m_ranks)
        if (rk.run->tokens() != m_ranks[0].run->tokens()) return false;
    return true;
}

TpRun::RankShare TpRun::comm_share(uint32_t r) const {
    const Rank& rk = m_ranks.at(r);
    std::vector<size_t> pre, dec;
    const auto& st = rk.run->steps();
    for (size_t s = 0; s < st.size(); ++s) (st[s].prefill ? pre : dec).push_back(s);
    RankShare out;
    if (!rk.ctx) return out;
    out.prefill = rk.coll.over(*rk.ctx, pre, st);
    out.decode = rk.coll.over(*rk.ctx, dec, st);
    return out;
}

RankCollectives::Share TpRun::comm_total(uint32_t r) const {
    const Rank& rk = m_ranks.at(r);
    if (!rk.ctx) return {};
    std::vector<size_t> all(rk.run->steps().size());
    for (size_t s = 0; s < all.size(); ++s) all[s] = s;
    return rk.coll.over(*rk.ctx, all, rk.run->steps());
}

std::vector<std::pair<uint64_t, uint64_t>> TpRun::all_reduce_spans(uint32_t r) const {
    const Rank& rk = m_ranks.at(r);
    std::vector<std::pair<uint64_t, uint64_t>> out;
    if (!rk.ctx) return out;
    for (const RankCollectives::Call& c : rk.coll.calls()) {
        uint64_t lo = UINT64_MAX, hi = 0;
        for (size_t i = c.first; i < c.last; ++i) {
            const Task& t = *rk.ctx->tasks()[i].task;
            lo = std::min(lo, t.start_tick.v);
            hi = std::max(hi, t.end_tick.v);
        }
        if (hi > lo) out.push_back({c.bytes, hi - lo});
    }
    return out;
}

PathBound TpRun::path_bound() const {
    // The chips meet at the all-reduces (a mirrored follower's stream waits for the leader's
    // notify before each), so a critical path changes chips there and inside them.
    std::vector<ChipLaunches> chips;
    for (const Rank& rk : m_ranks) {
        if (!rk.ctx) return {};
        std::vector<std::pair<size_t, size_t>> exchanges;
        for (const RankCollectives::Call& call : rk.coll.calls()) exchanges.emplace_back(call.first, call.last);
        chips.push_back(chip_launches(*rk.ctx, rk.run->steps(), exchanges, rk.bounds, rk.ps_per_cycle));
    }
    return llm::path_bound(chips);
}

reuse::ReuseCounters TpRun::reuse_counters() const {
    reuse::ReuseCounters c;
    for (const Rank& rk : m_ranks) c += rk.reuse;
    return c;
}

}  // namespace sfumato::llm
