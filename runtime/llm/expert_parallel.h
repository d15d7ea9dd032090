// Expert-parallel LLM inference of a mixture-of-experts model on several chips
// of a system, as vLLM's expert parallelism with data-parallel attention and
// the vendor's MoE dispatch / combine do it: E experts sharded E / N per chip
// (chip r holds experts [r E / N, (r + 1) E / N)); the attention, the norms,
// the router, the embedding and the LM head are replicated, and the attention
// runs data parallel over the batch (chip r serves sequences [r B / N, (r + 1)
// B / N), with its own paged KV cache), so no chip holds a shard of a KV head
// and no all-reduce is needed (with attention TP over the same chips every chip
// would hold the whole batch's tokens, and the MoE step would be an all-gather
// / reduce-scatter rather than an all-to-all). In each MoE layer a chip routes
// its own tokens over all E experts and permutes the (token, slot) entries
// grouped by expert (the ordinary MoePermute); the dispatch then copies each
// expert's rows to the chip holding it, straight into that chip's receive
// window ("ep.recv", sized for the most rows a step can bring: the vendor's
// windows are sized the same way), grouped by local expert and, inside an
// expert, by source chip; only the routed rows move (a variable count per pair,
// an all-to-all-v: the bytes follow the routing, no padding). The chip runs its
// local experts' grouped matmuls on the received rows, and the combine copies
// each result row back into the source chip's permuted buffer at the row it
// came from, where the ordinary MoeCombine weighs and sums them. Copies are
// peer copies over the system's links (a local expert's rows a device copy),
// each on the chip's compute stream behind the kernel that made its data,
// followed by a notify per peer; a chip's stream waits for every peer's notify
// before its experts (dispatch) and before its combine. A rank's dispatches and
// combines are its communication (RankCollectives: task spans, bytes sent to
// other chips). Counts: timing mode routes from the host-known seeded draw
// (keyed on chip, step and layer, so every chip knows every chip's routing, as
// the counts the vendor's dispatch sends ahead of the rows); functional mode
// routes on the device, so each chip's host synchronises its stream after the
// permutation and reads the group sizes back; timing mode pays the same read-
// back (one host round trip per MoE layer in both modes, so both take the same
// cycles for the same routing) and uses its host-known counts. The hosts meet at a barrier per MoE
// layer to share the counts and the permuted buffers' addresses (a modelling
// shortcut: zero simulated cost of its own). Simplified: eager launches only;
// no attention TP together with EP; every chip serves the same number of
// sequences; no capacity factor or token dropping; the receive window is a
// fixed device buffer per chip, its grouped matmuls tiled for its worst-case
// rows.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/llm/engine.h"
#include "runtime/llm/parallel.h"
#include "runtime/llm/path_bound.h"
#include "runtime/reuse/timing_reuse.h"

namespace sfumato::llm {

// Chip `rank`'s shard of an MoE model under EP over `ep` chips: num_experts its
// local experts. InputError for a dense model or an expert count ep does not
// divide.
ModelConfig ep_shard_config(const ModelConfig &c, int64_t ep);
// Chip `rank`'s host weights: every weight but the experts' replicated, its
// experts' slices.
ModelWeights ep_shard_weights(const ModelConfig &c, const ModelWeights &w,
                              int64_t ep, int64_t rank);

struct EpOptions {
  int64_t ep = 1;
  reuse::ReuseOptions reuse; // per rank's service; one table (made when null)
};

class EpRun {
public:
  // Validates the plan (InputError: a dense model, experts or batch ep does not
  // divide, graph mode, a chip whose memory plan does not fit, naming the chip
  // and the shortfall). `devs`: the DeviceInfo of chips 0..ep-1; functional
  // runs give the full model's host weights.
  EpRun(const ModelConfig &c, const RunOptions &o, const EpOptions &e,
        const std::vector<DeviceInfo> &devs);
  ~EpRun();
  int64_t ep() const { return m_e.ep; }
  const ModelConfig &model() const { return m_c; }
  const ModelConfig &shard() const { return m_shard; }
  const LlmRun &rank(uint32_t r) const;
  // Rank r's host program (in its host thread); `devs`: every rank's device, in
  // rank order.
  void run_rank(uint32_t r, rt::Device &dev, rt::Context &ctx,
                const std::vector<rt::Device *> &devs);

  // After the run. Step s's time: the slowest rank's. Tokens: every sequence's,
  // in batch order.
  const std::vector<StepRecord> &steps() const { return m_steps; }
  std::vector<std::vector<int64_t>> tokens() const;
  struct RankShare {
    RankCollectives::Share prefill, decode; // calls: dispatches and combines
  };
  RankShare comm_share(uint32_t r) const;
  // Rows rank r's dispatches sent: to other chips and to its own experts (over
  // the run).
  struct Rows {
    uint64_t remote = 0, local = 0;
  };
  Rows dispatched_rows(uint32_t r) const;
  uint64_t row_bytes() const;
  reuse::ReuseCounters reuse_counters() const;
  // Timing re-use's bound on TTFT and TPOT, propagated along the critical path
  // across the chips (path_bound.h); empty before the run.
  PathBound path_bound() const;

private:
  struct Rank;
  struct Exchange;
  class Barrier;
  ModelConfig m_c, m_shard;
  RunOptions m_o;
  EpOptions m_e;
  std::vector<Rank> m_ranks;
  std::vector<Exchange> m_x; // two, used alternately
  std::unique_ptr<Barrier> m_barrier;
  std::vector<StepRecord> m_steps;
  size_t m_done = 0;
  // Timing mode: the experts of rank r's tokens in each layer of step `step`.
  std::vector<std::vector<int64_t>> routing(uint32_t r, size_t step,
                                            int64_t tokens) const;
  void fill_route(uint32_t r, StepBatch &b, size_t step);
  void dispatch(uint32_t r, rt::Context &ctx, const graph::PlanStep &st,
                const graph::Executor &ex);
  void combine(uint32_t r, rt::Context &ctx, const graph::PlanStep &st,
               const graph::Executor &ex);
  void finish();
};

} // namespace sfumato::llm
