// Pipeline-parallel LLM inference on several chips of a system: the decoder
// layers split into M contiguous stages (pp_partition), stage s on chip s (or,
// with T-way tensor parallelism inside a stage, on chips s*T .. s*T+T-1, each a
// TP rank as in runtime/llm/parallel.h). Stage 0 also holds the embedding, the
// last stage the final norm, the LM head and sampling. Each chip runs its own
// LlmRun (runtime/llm/engine.h) on its share of the model in its own host
// thread, with its own weights, paged KV cache (its layers only), activation
// arena and receive buffer. Between stages the hidden state and the residual
// ([tokens, hidden] each, as vLLM's pipeline sends both) move by a
// point-to-point transfer over the links (P2pChannel: the receiver waits on it;
// rank r of a stage sends to rank r of the next). The batch splits into
// micro-batches (default: as many as stages, as vLLM's pipeline keeps one batch
// in flight per stage), run in order on every stage, so stage s works on
// micro-batch m while stage s+1 works on m-1: the overlap and the bubbles are
// the simulated timeline's, not a formula's. The sampled tokens go back to
// stage 0 through the host, as a serving runtime's scheduler receives the last
// stage's output and prepares the next step on the first stage: stage 0's host
// program starts a micro-batch's next decode step only once the last stage has
// read its tokens back. Simplified: eager launches only; a send copies from the
// sender's activation arena directly (no staging buffer, the stream waits for
// the copy); no interleaved (virtual) stages; the host-side token hand-off
// takes no simulated time beyond the last stage's read-back.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "runtime/comm/communicator.h"
#include "runtime/llm/engine.h"
#include "runtime/reuse/timing_reuse.h"

namespace sfumato::llm {

// Layers [first, end) of each of `pp` stages: L / pp each, the remainder spread
// one layer each over the stages before the last, from the second-to-last
// backwards (the last stage already carries the LM head), as vLLM partitions.
// InputError when pp < 1 or pp > layers.
std::vector<std::pair<int64_t, int64_t>> pp_partition(int64_t layers, int64_t pp);

// The sequences of each micro-batch: `batch` split into `count` contiguous
// near-equal parts (the first batch % count one larger).
std::vector<std::vector<size_t>> pp_microbatches(int64_t batch, int64_t count);

struct PpOptions {
    int64_t pp = 1, tp = 1;
    int64_t microbatches = 0;   // 0: min(pp, batch)
    reuse::ReuseOptions reuse;  // per chip's service; the chips share one table (made when null)
    // Timing mode with TP: the ranks of a stage run one shard shape on chips of one
    // configuration, so only rank 0 of each stage launches kernels; the others' streams wait for
    // its notify before each all-reduce (standing for their own kernels up to there), and every
    // rank runs its part of every all-reduce and its own send (TpOptions::mirror's scheme).
    bool mirror = false;
    uint64_t comm_buffer_bytes = 0;  // comm.buffer_bytes: reserved on every chip of a TP group
    // The widest step's new tokens, which sizes every receive buffer (0: the run's own steps'; a
    // host program that drives the steps itself, join_chip, gives its own).
    int64_t max_step_tokens = 0;
};

// A transfer or collective a chip issued: tasks [first, last) of its context.
struct PpComm {
    size_t first = 0, last = 0;
    size_t step = 0;    // the chip's step index
    bool send = false;  // a stage-to-stage send (else a TP all-reduce)
    uint64_t bytes = 0;  // an all-reduce's bytes reduced
};

class PpRun {
public:
    // Validates the plan (InputError: stages past the layers, micro-batches past
    // the batch, a head count the TP degree does not divide, a chip whose memory
    // plan does not fit, naming the chip and the shortfall) and compiles every
    // chip's first plans. `devs`: the DeviceInfo of chips 0..pp*tp-1; functional
    // runs give the full model's host weights in o.weights.
    PpRun(const ModelConfig& c, const RunOptions& o, const PpOptions& p, const std::vector<DeviceInfo>& devs);
    ~PpRun();
    int64_t pp() const { return m_p.pp; }
    int64_t tp() const { return m_p.tp; }
    size_t chips() const { return m_chips.size(); }
    bool mirrored() const { return m_p.mirror && m_p.tp > 1; }
    const ModelConfig& model() const { return m_c; }
    const std::vector<std::pair<int64_t, int64_t>>& stages() const { return m_stages; }
    const std::vector<std::vector<size_t>>& microbatches() const { return m_mb; }
    const LlmRun& chip(uint32_t i) const { return *m_chips.at(i).run; }
    LlmRun& chip(uint32_t i) { return *m_chips.at(i).run; }
    // Bytes of the receive buffer of a stage after the first (hidden state and
    // residual of the largest step).
    uint64_t recv_bytes() const { return m_recv_bytes; }
    // Chip i's host program (in its host thread). `tp_comm`: its stage's
    // communicator (ranks in chip order; null when tp is 1).
    void run_chip(uint32_t i, rt::Device& dev, rt::Context& ctx, comm::Communicator* tp_comm);
    // Chip i joins the pipeline on its context (in its host thread; every chip must join before
    // any starts): its receive buffer and notifies, the meeting of all chips, start() of its run,
    // and the hooks of its steps (wait for the received activations before a step; after its ops
    // the TP all-reduces, the receive buffer's acknowledgement and the send to the next stage).
    // For host programs that drive chip(i).step_batch themselves (a serving instance of several
    // stages, runtime/serve), every chip running the same steps in the same order; `rt` must
    // outlive the steps. run_chip does this, then the run's own steps.
    void join_chip(uint32_t i, rt::Runtime& rt, comm::Communicator* tp_comm);
    // Chip i's stage-to-stage sends over the steps it ran: how many, their bytes and the time
    // their peer copies ran (the union of their spans); and its kernels' time (communication
    // kernels excluded), with the union of their spans (disjoint, in time order). After the run;
    // for host programs that drive the steps (join_chip).
    struct ChipTraffic {
        size_t sends = 0, all_reduces = 0;
        uint64_t sent_bytes = 0, send_ps = 0, kernel_ps = 0;
        std::vector<std::pair<uint64_t, uint64_t>> kernel_spans;
    };
    ChipTraffic traffic(uint32_t chip) const;
    // Chip i's stage-to-stage peer copies (bytes and ps of each), and its TP all-reduces (bytes
    // reduced and the span of their tasks, ps), in issue order. After the run.
    std::vector<std::pair<uint64_t, uint64_t>> send_copies(uint32_t chip) const;
    std::vector<std::pair<uint64_t, uint64_t>> all_reduce_spans(uint32_t chip) const;
    // After the run. Steps: one record per prefill (from stage 0's first prefill
    // step to the last stage's last one: TTFT) and one per decode step (from the
    // previous step's end, the last stage's read-back of its last micro-batch, to
    // this one's).
    const std::vector<StepRecord>& steps() const { return m_steps; }
    // Tokens as the last stage (rank 0) sampled them, per sequence.
    const std::vector<std::vector<int64_t>>& tokens() const { return m_tokens; }
    bool ranks_agree() const;
    // Per chip and phase (prefill, decode): time its kernels ran (busy), its
    // sends and all-reduces ran (comm) and it did neither (bubble) within the
    // phase's window, and the bytes it sent to the next stage.
    // busy_per_decode_step: its kernels' time per decode step (all micro-batches;
    // union of their spans, communication kernels excluded).
    struct Share {
        uint64_t window_ps = 0, busy_ps = 0, comm_ps = 0, idle_ps = 0, sent_bytes = 0;
        size_t sends = 0, all_reduces = 0;
    };
    struct ChipShare {
        Share prefill, decode;
        std::vector<uint64_t> busy_per_decode_step;
    };
    ChipShare share(uint32_t chip) const;
    reuse::ReuseCounters reuse_counters() const;

private:
    struct Chip {
        int64_t stage = 0, rank = 0;
        std::unique_ptr<ModelWeights> weights;  // a TP shard's (functional runs)
        std::unique_ptr<LlmRun> run;
        rt::Context* ctx = nullptr;
        rt::Device* dev = nullptr;
        uint64_t recv = 0;  // receive buffer (a stage after the first)
        uint32_t data_slot = 0, ack_slot = 0;
        uint32_t follow_slot = 0;  // mirror: the notify a follower waits on before each all-reduce  //
                                   // notifies: data arrived (here) / buffer free (here, a sender)
        std::vector<PpComm> comm;
        std::vector<std::vector<int64_t>> tokens;  // last stage: what it sampled
        reuse::ReuseCounters reuse;
        // Per plan: the last step that reads the receive buffer, and the last step
        // with kernels.
        std::map<const graph::Plan*, std::pair<size_t, size_t>> marks;
    };
    struct Shared;
    struct Call {
        bool prefill = false;
        int64_t decode_step = -1;  // -1: prefill
        std::vector<size_t> seqs;
        int64_t start = 0,
                tokens = 0;  // prefill: chunk start and tokens per sequence
    };
    int64_t plan_calls();
    std::vector<int64_t> step_ids(const LlmRun& run, const Call& k);
    void on_op(Chip& ch, rt::Runtime& rt, comm::Communicator* tp_comm, const graph::PlanStep& st,
               const graph::Executor& ex);
    void issue_send(Chip& ch, rt::Runtime& rt, const graph::PlanStep& st, const graph::Executor& ex);
    void finish();

    ModelConfig m_c;
    RunOptions m_o;
    PpOptions m_p;
    std::vector<std::pair<int64_t, int64_t>> m_stages;
    std::vector<std::vector<size_t>> m_mb;
    std::vector<Call> m_calls;  // every chip's steps, in order
    uint64_t m_recv_bytes = 0, m_residual_offset = 0;
    std::vector<Chip> m_chips;
    std::unique_ptr<Shared> m_shared;
    std::vector<StepRecord> m_steps;
    std::vector<std::vector<int64_t>> m_tokens;
    size_t m_done = 0;
};

}  // namespace sfumato::llm
