// Expert-parallel LLM run (see expert_parallel.h).
#include "runtime/llm/expert_parallel.h"

#include <algorithm>
#include <random>
#include <systemc>

#include "runtime/llm/host_util.h"
#include "sim/error.h"

namespace sfumato::llm {

namespace {

using util::num;

} // namespace

// The ranks' host programs meet here once per MoE layer (SystemC host threads).
class EpRun::Barrier {
public:
  explicit Barrier(size_t n) : m_n(n) {}
  void wait() {
    const uint64_t gen = m_generation;
    if (++m_arrived == m_n) {
      m_arrived = 0;
      ++m_generation;
      m_event.notify(sc_core::SC_ZERO_TIME);
      return;
    }
    while (m_generation == gen)
      sc_core::wait(m_event);
  }

private:
  size_t m_n, m_arrived = 0;
  uint64_t m_generation = 0;
  sc_core::sc_event m_event;
};

// One MoE layer's exchange: every rank's group sizes over the E experts and the
// address of its permuted rows. Two are used alternately: a rank publishes
// exchange k + 2 only after every rank reached exchange k + 1, so all are done
// reading exchange k.
struct EpRun::Exchange {
  std::vector<std::vector<int64_t>> counts; // [rank][E]
  std::vector<uint64_t> xp;                 // [rank]
};

struct EpRun::Rank {
  std::unique_ptr<ModelWeights> weights;
  std::unique_ptr<LlmRun> run;
  RankCollectives coll;
  rt::Context *ctx = nullptr;
  rt::StreamId stream = 0;
  std::vector<rt::Device *> devs;
  std::vector<uint32_t> data_slot,
      ret_slot; // notifies on this device, per source rank
  reuse::ReuseCounters reuse;
  reuse::LaunchBounds bounds; // its launches' parts of the re-use bound
  double ps_per_cycle = 1;
  uint64_t exchanges = 0; // MoE layers passed
  std::vector<std::vector<int64_t>>
      step_experts; // timing mode: this step's routing per layer
  std::vector<int32_t> sizes_host,
      local_host; // read-back group sizes; local sizes to upload
  Rows rows;
};

ModelConfig ep_shard_config(const ModelConfig &c, int64_t ep) {
  if (ep < 1)
    throw InputError("llm: --ep must be at least 1");
  if (!c.moe())
    throw InputError(
        "llm --ep " + num(ep) + ": " + c.name +
        " is a dense model (no num_local_experts): expert parallelism needs a "
        "mixture-of-experts model");
  if (c.num_experts % ep != 0)
    throw InputError("llm --ep " + num(ep) + ": " + c.name + " has " +
                     num(c.num_experts) +
                     " experts (num_local_experts), which " + num(ep) +
                     " chips do not divide");
  if (ep == 1)
    return c;
  ModelConfig s = c;
  s.name = c.name + " (EP shard: " + num(c.num_experts / ep) + " of " +
           num(c.num_experts) + " experts)";
  s.num_experts = c.num_experts / ep;
  return s;
}

ModelWeights ep_shard_weights(const ModelConfig &c, const ModelWeights &w,
                              int64_t ep, int64_t rank) {
  const ModelConfig s = ep_shard_config(c, ep);
  if (ep == 1)
    return w;
  const size_t El = static_cast<size_t>(s.num_experts),
               e0 = static_cast<size_t>(rank) * El;
  ModelWeights out = w;
  for (LayerWeights &L : out.layers) {
    const size_t gu = L.e_gate_up.size() / static_cast<size_t>(c.num_experts),
                 dn = L.e_down.size() / static_cast<size_t>(c.num_experts);
    L.e_gate_up = {L.e_gate_up.begin() + static_cast<ptrdiff_t>(e0 * gu),
                   L.e_gate_up.begin() +
                       static_cast<ptrdiff_t>((e0 + El) * gu)};
    L.e_down = {L.e_down.begin() + static_cast<ptrdiff_t>(e0 * dn),
                L.e_down.begin() + static_cast<ptrdiff_t>((e0 + El) * dn)};
  }
  return out;
}

EpRun::EpRun(const ModelConfig &c, const RunOptions &o, const EpOptions &e,
             const std::vector<DeviceInfo> &devs)
    : m_c(c), m_shard(ep_shard_config(c, e.ep)), m_o(o), m_e(e) {
  // The ranks' chips share one configuration (a system's chips do): one table
  // of re-use identities.
  if (!m_e.reuse.table)
    m_e.reuse.table = reuse::make_reuse_table();
  const std::string who = "llm --ep " + num(e.ep) + ": ";
  if (static_cast<int64_t>(devs.size()) != e.ep)
    throw InputError(who + "the system has " +
                     num(static_cast<int64_t>(devs.size())) + " chips for it");
  if (o.graph_mode != RunOptions::GraphMode::Eager)
    throw InputError(who + "--graph-mode on|both is not modelled with expert "
                           "parallelism (use off)");
  if (o.batch % e.ep != 0)
    throw InputError(
        who + "attention runs data parallel over the batch, so --batch " +
        num(o.batch) + " must be a multiple of " + num(e.ep));
  std::vector<std::vector<int64_t>> prompts = draw_prompts(c, o);
  for (size_t s = 0; s < prompts.size() && s < o.prompts.size(); ++s)
    if (!o.prompts[s].empty())
      prompts[s] = o.prompts[s];
  const int64_t per = o.batch / e.ep;
  for (int64_t r = 0; r < e.ep; ++r) {
    Rank rk;
    RunOptions ro = o;
    ro.batch = per;
    ro.prompts.assign(prompts.begin() + r * per,
                      prompts.begin() + (r + 1) * per);
    ro.ep_ranks = e.ep;
    ro.ep_rank = r;
    if (e.ep > 1) {
      const uint32_t rank = static_cast<uint32_t>(r);
      ro.route = [this, rank](StepBatch &b, size_t step) {
        fill_route(rank, b, step);
      };
    }
    if (o.weights) {
      rk.weights = std::make_unique<ModelWeights>(
          ep_shard_weights(c, *o.weights, e.ep, r));
      ro.weights = rk.weights.get();
    }
    try {
      rk.run =
          std::make_unique<LlmRun>(m_shard, ro, devs[static_cast<size_t>(r)]);
    } catch (const InputError &err) {
      throw InputError(who + "chip " + num(r) + ": " + err.what());
    }
    m_ranks.push_back(std::move(rk));
  }
  const size_t n = static_cast<size_t>(e.ep);
  m_x.resize(2);
  for (Exchange &x : m_x) {
    x.counts.assign(
        n, std::vector<int64_t>(static_cast<size_t>(c.num_experts), 0));
    x.xp.assign(n, 0);
  }
  m_barrier = std::make_unique<Barrier>(n);
}

EpRun::~EpRun() = default;

const LlmRun &EpRun::rank(uint32_t r) const { return *m_ranks.at(r).run; }

EpRun::Rows EpRun::dispatched_rows(uint32_t r) const {
  return m_ranks.at(r).rows;
}

uint64_t EpRun::row_bytes() const {
  return static_cast<uint64_t>(m_c.hidden_size) * 2;
}

std::vector<std::vector<int64_t>> EpRun::routing(uint32_t r, size_t step,
                                                 int64_t tokens) const {
  // Each token's experts_per_token experts: a uniform draw without replacement
  // (a partial Fisher-Yates shuffle) from a generator keyed on (seed, chip,
  // step), so every chip can compute every chip's routing.
  std::seed_seq seq{m_o.seed, static_cast<uint64_t>(r),
                    static_cast<uint64_t>(step), uint64_t{0x6570}};
  std::mt19937_64 rng(seq);
  const int64_t E = m_c.num_experts, K = m_c.experts_per_token;
  std::vector<std::vector<int64_t>> out(static_cast<size_t>(m_c.num_layers));
  std::vector<int64_t> deck(static_cast<size_t>(E));
  for (auto &layer : out) {
    layer.reserve(static_cast<size_t>(tokens * K));
    for (int64_t t = 0; t < tokens; ++t) {
      for (int64_t x = 0; x < E; ++x)
        deck[static_cast<size_t>(x)] = x;
      for (int64_t j = 0; j < K; ++j) {
        const int64_t pick =
            j + static_cast<int64_t>(rng() % static_cast<uint64_t>(E - j));
        std::swap(deck[static_cast<size_t>(j)],
                  deck[static_cast<size_t>(pick)]);
        layer.push_back(deck[static_cast<size_t>(j)]);
      }
    }
  }
  return out;
}

void EpRun::fill_route(uint32_t r, StepBatch &b, size_t step) {
  // Every chip runs the same steps with the same tokens per step (equal shares
  // of the batch).
  const int64_t El = m_shard.num_experts, T = b.tokens();
  b.experts = routing(r, step, T);
  m_ranks[r].step_experts = b.experts;
  b.local_sizes.assign(static_cast<size_t>(m_c.num_layers),
                       std::vector<int64_t>(static_cast<size_t>(El), 0));
  for (uint32_t s = 0; s < m_ranks.size(); ++s) {
    const auto other = s == r ? b.experts : routing(s, step, T);
    for (size_t l = 0; l < other.size(); ++l)
      for (int64_t x : other[l])
        if (x / El == static_cast<int64_t>(r))
          ++b.local_sizes[l][static_cast<size_t>(x % El)];
  }
}

void EpRun::run_rank(uint32_t r, rt::Device &dev, rt::Context &ctx,
                     const std::vector<rt::Device *> &devs) {
  Rank &rk = m_ranks.at(r);
  rk.ctx = &ctx;
  rk.devs = devs;
  rt::Runtime rt(dev, ctx);
  rk.stream = rt.default_stream().id;
  reuse::TimingReuse service(ctx, rt.device_info(), m_e.reuse);
  const size_t n = m_ranks.size();
  if (n > 1 && devs.size() != n)
    throw InputError("llm --ep: the run needs every chip's device");
  rk.data_slot.assign(n, 0);
  rk.ret_slot.assign(n, 0);
  for (size_t q = 0; q < n && n > 1; ++q) {
    if (q == r)
      continue;
    if (ctx.notify_create(&rk.data_slot[q]) != rt::Status::Ok ||
        ctx.notify_create(&rk.ret_slot[q]) != rt::Status::Ok)
      throw InputError(ctx.last_error());
  }
  LlmRun &run = *rk.run;
  if (n > 1)
    run.after_op(
        [this, r, &ctx](const graph::PlanStep &st, const graph::Executor &ex) {
          const std::string role = node_role(st.name);
          if (role == "moe_permute")
            dispatch(r, ctx, st, ex);
          if (role == "experts_down")
            combine(r, ctx, st, ex);
        });
  run.run(rt);
  rk.reuse = service.counters();
  rk.bounds = service.launch_bounds();
  rk.ps_per_cycle =
      static_cast<double>(rt.device_info().clock.ticks(1000000)) / 1e6;
  if (++m_done == m_ranks.size())
    finish();
}

namespace {

void ep_check(rt::Context &ctx, rt::Status s) {
  if (s != rt::Status::Ok)
    throw InputError(ctx.last_error());
}

// Rows before expert e in a chip's permuted buffer (grouped by expert,
// ascending).
uint64_t rows_before(const std::vector<int64_t> &counts, int64_t e) {
  uint64_t n = 0;
  for (int64_t x = 0; x < e; ++x)
    n += static_cast<uint64_t>(counts[static_cast<size_t>(x)]);
  return n;
}

} // namespace

void EpRun::dispatch(uint32_t r, rt::Context &ctx, const graph::PlanStep &st,
                     const graph::Executor &ex) {
  Rank &rk = m_ranks[r];
  const int64_t l = node_layer(st.name), E = m_c.num_experts,
                El = m_shard.num_experts;
  const uint32_t n = static_cast<uint32_t>(m_ranks.size());
  const uint64_t rb = row_bytes();
  const rt::StreamId s = rk.stream;
  const uint64_t xp = ex.placed(st.out.at(0)).addr;
  std::vector<int64_t> counts(static_cast<size_t>(E), 0);
  // The host reads the permutation's group sizes back (it waits for the
  // permutation) in both modes, so that both take the same cycles: functional
  // mode needs them (the routing is on the device); timing mode, whose data is
  // not real, pays the same round trip and uses the host-known routing.
  rk.sizes_host.assign(static_cast<size_t>(E), 0);
  ep_check(ctx, ctx.memcpy_d2h(rk.sizes_host.data(), ex.placed(st.out.at(2)).addr,
                            rk.sizes_host.size() * 4, s));
  if (rk.step_experts.empty()) {
    for (int64_t e = 0; e < E; ++e)
      counts[static_cast<size_t>(e)] = rk.sizes_host[static_cast<size_t>(e)];
  } else {
    for (int64_t e : rk.step_experts.at(static_cast<size_t>(l)))
      ++counts[static_cast<size_t>(e)];
  }
  Exchange &x = m_x[rk.exchanges % 2];
  x.counts[r] = counts;
  x.xp[r] = xp;
  m_barrier->wait();
  RankCollectives::Call call;
  call.first = ctx.tasks().size();
  call.step = rk.run->steps().size();
  for (uint32_t j = 0; j < n; ++j) {
    uint64_t base = 0; // rows of j's window before local expert i
    for (int64_t i = 0; i < El; ++i) {
      const size_t g = static_cast<size_t>(j * El + i);
      uint64_t before = 0; // rows of expert g from chips before r
      for (uint32_t q = 0; q < r; ++q)
        before += static_cast<uint64_t>(x.counts[q][g]);
      const uint64_t rows = static_cast<uint64_t>(counts[g]);
      const uint64_t dst =
          m_ranks[j].run->address("ep.recv") + (base + before) * rb;
      const uint64_t src =
          xp + rows_before(counts, static_cast<int64_t>(g)) * rb;
      for (uint32_t q = 0; q < n; ++q)
        base += static_cast<uint64_t>(x.counts[q][g]);
      if (rows == 0)
        continue;
      if (j == r) {
        ep_check(ctx, ctx.memcpy_d2d(dst, src, rows * rb, s, true));
        rk.rows.local += rows;
      } else {
        ep_check(ctx, ctx.memcpy_peer(*rk.devs[j], dst, src, rows * rb, s));
        rk.rows.remote += rows;
        call.bytes += rows * rb;
      }
    }
  }
  for (uint32_t j = 0; j < n; ++j)
    if (j != r)
      ep_check(ctx, ctx.notify_record(*rk.devs[j], m_ranks[j].data_slot[r], s));
  for (uint32_t q = 0; q < n; ++q)
    if (q != r)
      ep_check(ctx, ctx.notify_wait(rk.data_slot[q], s));
  // The local experts' row counts (the grouped matmuls read them in functional
  // mode).
  rk.local_host.assign(static_cast<size_t>(El), 0);
  for (int64_t i = 0; i < El; ++i)
    for (uint32_t q = 0; q < n; ++q)
      rk.local_host[static_cast<size_t>(i)] +=
          static_cast<int32_t>(x.counts[q][static_cast<size_t>(r * El + i)]);
  ep_check(ctx, ctx.memcpy_h2d(rk.run->address("ep.sizes"), rk.local_host.data(),
                            rk.local_host.size() * 4, s, true));
  call.last = ctx.tasks().size();
  rk.coll.add(call);
}

void EpRun::combine(uint32_t r, rt::Context &ctx, const graph::PlanStep &st,
                    const graph::Executor &ex) {
  Rank &rk = m_ranks[r];
  const int64_t El = m_shard.num_experts;
  const uint32_t n = static_cast<uint32_t>(m_ranks.size());
  const uint64_t rb = row_bytes();
  const rt::StreamId s = rk.stream;
  const uint64_t dn = ex.placed(st.out.at(0)).addr;
  const Exchange &x = m_x[rk.exchanges % 2];
  RankCollectives::Call call;
  call.first = ctx.tasks().size();
  call.step = rk.run->steps().size();
  // The window's order: local expert, then source chip; each row goes back to
  // the row of the source's permuted buffer it came from.
  uint64_t row = 0;
  for (int64_t i = 0; i < El; ++i) {
    const int64_t g = static_cast<int64_t>(r) * El + i;
    for (uint32_t q = 0; q < n; ++q) {
      const uint64_t rows =
          static_cast<uint64_t>(x.counts[q][static_cast<size_t>(g)]);
      if (rows == 0)
        continue;
      const uint64_t src = dn + row * rb,
                     dst = x.xp[q] + rows_before(x.counts[q], g) * rb;
      row += rows;
      if (q == r) {
        ep_check(ctx, ctx.memcpy_d2d(dst, src, rows * rb, s, true));
      } else {
        ep_check(ctx, ctx.memcpy_peer(*rk.devs[q], dst, src, rows * rb, s));
        call.bytes += rows * rb;
      }
    }
  }
  for (uint32_t q = 0; q < n; ++q)
    if (q != r)
      ep_check(ctx, ctx.notify_record(*rk.devs[q], m_ranks[q].ret_slot[r], s));
  for (uint32_t q = 0; q < n; ++q)
    if (q != r)
      ep_check(ctx, ctx.notify_wait(rk.ret_slot[q], s));
  call.last = ctx.tasks().size();
  rk.coll.add(call);
  ++rk.exchanges;
}

void EpRun::finish() {
  // Every rank ran the same steps: a step ends when its slowest rank's does.
  m_steps = m_ranks[0].run->steps();
  for (const Rank &rk : m_ranks) {
    const auto &st = rk.run->steps();
    if (st.size() != m_steps.size())
      throw SimError(kExitFailure, "llm --ep: the ranks ran different steps");
    for (size_t s = 0; s < st.size(); ++s) {
      const uint64_t end = std::max(m_steps[s].begin_ps + m_steps[s].ps,
                                    st[s].begin_ps + st[s].ps);
      m_steps[s].begin_ps = std::min(m_steps[s].begin_ps, st[s].begin_ps);
      m_steps[s].ps = end - m_steps[s].begin_ps;
    }
  }
  const size_t expect =
      m_ranks.size() > 1
          ? static_cast<size_t>(2 * m_c.num_layers) * m_steps.size()
          : 0;
  for (const Rank &rk : m_ranks)
    if (rk.coll.calls().size() != expect)
      throw SimError(
          kExitFailure,
          "llm --ep: a rank issued " + std::to_string(rk.coll.calls().size()) +
              " dispatches and combines, expected " + std::to_string(expect) +
              " (two per layer and step): the step plan lost an MoE block");
}

std::vector<std::vector<int64_t>> EpRun::tokens() const {
  std::vector<std::vector<int64_t>> out;
  for (const Rank &rk : m_ranks)
    for (const auto &t : rk.run->tokens())
      out.push_back(t);
  return out;
}

EpRun::RankShare EpRun::comm_share(uint32_t r) const {
  const Rank &rk = m_ranks.at(r);
  std::vector<size_t> pre, dec;
  const auto &st = rk.run->steps();
  for (size_t s = 0; s < st.size(); ++s)
    (st[s].prefill ? pre : dec).push_back(s);
  RankShare out;
  if (!rk.ctx)
    return out;
  out.prefill = rk.coll.over(*rk.ctx, pre, st);
  out.decode = rk.coll.over(*rk.ctx, dec, st);
  return out;
}

PathBound EpRun::path_bound() const {
  // The chips meet only at the dispatches and combines (each chip's stream
  // waits for every peer's notify there; the hosts' barrier is at the same
  // points), so a critical path changes chips only there.
  std::vector<ChipLaunches> chips;
  for (const Rank &rk : m_ranks) {
    if (!rk.ctx)
      return {};
    std::vector<std::pair<size_t, size_t>> exchanges;
    for (const RankCollectives::Call &call : rk.coll.calls())
      exchanges.emplace_back(call.first, call.last);
    ChipLaunches c = chip_launches(*rk.ctx, rk.run->steps(), exchanges,
                                   rk.bounds, rk.ps_per_cycle);
    chips.push_back(std::move(c));
  }
  return llm::path_bound(chips);
}

reuse::ReuseCounters EpRun::reuse_counters() const {
  reuse::ReuseCounters c;
  for (const Rank &rk : m_ranks)
    c += rk.reuse;
  return c;
}

} // namespace sfumato::llm
