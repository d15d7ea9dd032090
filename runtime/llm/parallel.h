// Tensor-parallel LLM inference on several chips of a system, Megatron-style:
// each of N ranks holds a shard of every layer (the fused QKV and gate/up
// projections split by columns: its attention heads, its KV heads and its slice
// of the MLP's intermediate size; o_proj and down_proj split by rows), so each
// rank's step graph is the ordinary step graph of a smaller model
// (tp_shard_config) and the two row-parallel projections leave partial sums
// that an all-reduce over the system's links adds (the collective library,
// runtime/comm: peer copies and reduction kernels on the ranks' own cores,
// issued on the compute stream right behind the projection's kernels, so the
// next layer waits for it as on hardware). The embedding, the norms, the final
// norm and the LM head are replicated: every rank computes the same logits and
// samples the same token, so no gather is needed (the vendor's and vLLM's
// sharded vocabulary would save memory and LM-head time, not modelled). KV
// heads fewer than N are replicated (each rank keeps the one KV head its query
// heads use, as vLLM does); a head count N does not divide is an InputError
// naming it. Each rank runs its own LlmRun (runtime/llm/engine.h) in its own
// host thread on its own chip, with its own paged KV cache and memory plan
// (weights shard, KV, activations, the collective library's buffers, free).
//
// The per-rank run and the collective plumbing are separate pieces:
// RankCollectives records the collectives a rank issues (task ranges, bytes)
// and turns them into the communication share of its steps, for any host
// program that issues collectives between its steps' kernels. With
// TpOptions::mirror only rank 0's kernels are simulated (see there); the
// collectives are always every rank's. Simplified: eager launches only (no
// captured graph mode with collectives); pipeline and expert parallelism are
// not modelled here.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/comm/communicator.h"
#include "runtime/llm/engine.h"
#include "runtime/llm/path_bound.h"
#include "runtime/reuse/timing_reuse.h"

namespace sfumato::llm {

// The model one TP rank runs: num_heads / tp heads, max(1, num_kv_heads / tp)
// KV heads, intermediate_size / tp. Throws InputError naming the field when tp
// does not divide it (KV heads: tp must divide them or be a multiple of them)
// or for an MoE model.
ModelConfig tp_shard_config(const ModelConfig& c, int64_t tp);
// Rank `rank`'s shard of host weights (functional runs), in the layouts of
// tp_shard_config's step graph.
ModelWeights tp_shard_weights(const ModelConfig& c, const ModelWeights& w, int64_t tp, int64_t rank);
// The KV head (of the full model) the first KV head of `rank` is.
int64_t tp_first_kv_head(const ModelConfig& c, int64_t tp, int64_t rank);

// Device memory the collective library holds per rank (In, Out and Scratch
// buffers as the device allocator rounds them).
uint64_t comm_reserved_bytes(uint64_t buffer_bytes);

// The collectives one rank issued (task index ranges of its context) and what
// they took.
class RankCollectives {
public:
    struct Call {
        size_t first = 0, last = 0;  // tasks [first, last) of the rank's context
        uint64_t bytes = 0;          // the vector reduced
        size_t step = 0;             // the host program's step it belongs to
    };
    void add(const Call& c) { m_calls.push_back(c); }
    const std::vector<Call>& calls() const { return m_calls; }
    // Time covered by collectives (union of their tasks' spans) inside [begin,
    // end) ps, and their number and bytes.
    struct Share {
        uint64_t step_ps = 0, comm_ps = 0, bytes = 0;
        size_t calls = 0;
        double share() const {
            return step_ps ? static_cast<double>(comm_ps) / static_cast<double>(step_ps) : 0.0;
        }
    };
    Share over(const rt::Context& ctx, const std::vector<size_t>& steps,
               const std::vector<StepRecord>& records) const;

private:
    std::vector<Call> m_calls;
};

struct TpOptions {
    int64_t tp = 1;
    reuse::ReuseOptions reuse;       // per rank's service; the ranks share one table (made when null)
    uint64_t comm_buffer_bytes = 0;  // comm.buffer_bytes: reserved on every rank
    // Timing mode: the ranks run one shard shape on chips of one configuration,
    // so their kernels are identical; only rank 0 launches them. Before each
    // all-reduce rank 0 notifies every other rank on its stream (behind its
    // projection's kernels); the others' streams wait for that notify, which
    // stands for their own kernels up to there, and every rank runs its part of
    // every all-reduce over the links. Functional mode runs every rank's kernels.
    bool mirror = false;
};

class TpRun {
public:
    // Validates the plan (InputError: heads or intermediate size tp does not
    // divide, a chip whose memory plan does not fit, naming the chip and the
    // shortfall) and compiles every rank's first plans. `devs`: the DeviceInfo of
    // ranks 0..tp-1's chips; functional runs give the full model's host weights
    // in o.weights.
    TpRun(const ModelConfig& c, const RunOptions& o, const TpOptions& t, const std::vector<DeviceInfo>& devs);
    ~TpRun();
    int64_t tp() const { return m_t.tp; }
    const ModelConfig& model() const { return m_c; }
    const ModelConfig& shard() const { return m_shard; }
    bool kv_replicated() const { return m_c.num_kv_heads < m_t.tp; }
    bool mirrored() const { return m_t.mirror && m_t.tp > 1; }
    const LlmRun& rank(uint32_t r) const { return *m_ranks.at(r).run; }
    LlmRun& rank(uint32_t r) { return *m_ranks.at(r).run; }
    // Rank r's host program (in its host thread; `comm` has ranks 0..tp-1 in this
    // order; null when tp is 1): join_rank, then the run's request.
    void run_rank(uint32_t r, rt::Device& dev, rt::Context& ctx, comm::Communicator* comm);
    // Rank r joins the group on its context (in its host thread, before its first
    // step): mirror's notify slot, the communicator's rendezvous, and the all-reduce
    // behind every row-parallel projection of rank(r)'s steps (LlmRun::after_op).
    // For host programs that drive the rank's steps themselves (a serving instance
    // spanning several chips, runtime/serve); `rt` must outlive the steps.
    void join_rank(uint32_t r, rt::Runtime& rt, comm::Communicator* comm);

    // After the run. Step s's time: the slowest rank's. Tokens: rank 0's (every
    // rank samples the same logits; ranks_agree() says whether they did).
    const std::vector<StepRecord>& steps() const { return m_steps; }
    const std::vector<std::vector<int64_t>>& tokens() const { return rank(0).tokens(); }
    bool ranks_agree() const;
    struct RankShare {
        RankCollectives::Share prefill, decode;
    };
    RankShare comm_share(uint32_t r) const;
    // Rank r's all-reduces over every step it ran.
    RankCollectives::Share comm_total(uint32_t r) const;
    // Each all-reduce rank r issued: its bytes and its tasks' span (first start to last end, ps).
    std::vector<std::pair<uint64_t, uint64_t>> all_reduce_spans(uint32_t r) const;
    reuse::ReuseCounters reuse_counters() const;
    // Timing re-use's bound on TTFT and TPOT, propagated along the critical path across the chips
    // (path_bound.h; the all-reduces are the exchanges); empty before run_rank's runs.
    PathBound path_bound() const;

private:
    struct Rank {
        std::unique_ptr<ModelWeights> weights;
        std::unique_ptr<LlmRun> run;
        RankCollectives coll;
        rt::Context* ctx = nullptr;
        rt::Device* dev = nullptr;
        uint32_t slot = 0;  // mirror: the notify a follower waits on before each all-reduce
        reuse::ReuseCounters reuse;
        reuse::LaunchBounds bounds;  // its launches' parts of the re-use bound
        double ps_per_cycle = 1;
    };
    ModelConfig m_c, m_shard;
    TpOptions m_t;
    std::vector<Rank> m_ranks;
    std::vector<StepRecord> m_steps;
    size_t m_done = 0;
    void finish();
};

}  // namespace sfumato::llm
