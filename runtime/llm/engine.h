// The LLM host program as a library: one request shape (batch sequences of `prefill` prompt
// tokens, then `decode` greedy steps each) run on one chip through runtime/rt, the way a
// serving runtime would. Before the simulation (the constructor) it compiles the first step
// graphs and plans device memory: the weights once (shared by every step graph), the
// activation arena of the largest plan, and the paged KV cache (--kv-blocks, or a fraction of
// what is left); a request that does not fit is an InputError with the shortfall. run() (the
// host thread) places the weights, the RoPE table and the KV cache before time zero (untimed: a
// server loads its model once), then runs the prefill step and each decode step: build or
// reuse the plan of the step's bucket (same per-sequence query lengths, same block-table
// width), refresh the paged-attention lengths and block tables on the cached plan, upload
// token ids and positions, launch, synchronise and read the next tokens back. Each step's
// time runs from its first input copy to its token read-back (no queueing).
// Prefill takes at most max_prefill_tokens new tokens per step: whole prompts grouped, a longer
// prompt in chunks; TTFT is the batch's, the end of its last prefill step.
// MoE routing: functional mode routes by the router's real output (the kernels read it from
// device memory); timing mode has none, so each token's experts are a seeded uniform draw per
// layer and step, given to the kernels as the host-known `host_experts` (docs/llm.md).
// Simplified: every sequence of a batch has the same prompt length; greedy sampling only.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "runtime/graph/executor.h"
#include "runtime/graph/plan.h"
#include "runtime/llm/kv_cache.h"
#include "runtime/llm/model_config.h"
#include "runtime/llm/step_graph.h"
#include "runtime/llm/weights.h"
#include "runtime/rt/runtime.h"

namespace sfumato::llm {

struct RunOptions {
    int64_t prefill = 128;  // prompt tokens per sequence
    int64_t decode = 16;    // decode steps (each generates one token per sequence)
    int64_t batch = 1;
    int64_t block_size = 128;
    int64_t kv_blocks = 0;  // 0: kv_mem_fraction of the memory left after weights and activations
    // New tokens one prefill step takes at most (a serving runtime's token budget per batch, as
    // vLLM's max_num_batched_tokens or the vendor's max_prefill_tokens): the batch's prompts
    // prefill in groups of whole prompts, a prompt longer than it in chunks (chunked prefill).
    // 4096: the step plan's activation arena grows with it, and on a 64 GiB part at 8192 the
    // KV cache left for Llama-2-7B at batch 32 (prefill 1024 + 128) is short by 64 blocks.
    int64_t max_prefill_tokens = 4096;
    double kv_mem_fraction = 0.9;
    uint64_t seed = 1;
    Quant quant = Quant::None;  // --quant: W8A8 projections (runtime/llm/quant.h)
    // Functional runs: the host weights (null in timing mode) and optional prompts per sequence
    // (else tokens drawn from the seed).
    const ModelWeights* weights = nullptr;
    std::vector<std::vector<int64_t>> prompts;
    graph::CompileOptions compile;
    // Functional runs: called with each plan step's outputs once its kernels completed
    // (graph::Executor::watch_steps; changes no cycle), e.g. to check an operator in place.
    std::function<void(const graph::Plan&, size_t step, const std::vector<ref::HostTensor>& outs)> watch;
    // Eager: every kernel launch pays the runtime's host launch cost. Captured: each step's
    // launches are captured on the stream and launched as one model (one host launch cost; the
    // task scheduler walks the kernels). Both: the whole request runs eagerly, then again
    // captured (the KV cache refilled), and each step is reported both ways.
    enum class GraphMode : uint8_t { Eager, Captured, Both } graph_mode = GraphMode::Eager;
    // Device memory other users of the chip hold (a parallel run's collective buffers): taken
    // from the capacity before the KV cache is sized.
    uint64_t reserved_bytes = 0;
    // A follower of identical ranks (timing mode, runtime/llm/parallel.h): each step uploads its
    // inputs, runs the after_op hook at every plan step and reads its outputs back, but launches
    // no kernel.
    bool follower = false;
    // Expert parallel (runtime/llm/expert_parallel.h): this chip's rank of ep_ranks; its step
    // graphs run the local experts on dispatched rows (StepGraphOptions). The external buffers
    // "ep.*" are allocated here (not uploaded) and counted with the collective buffers.
    int64_t ep_ranks = 1, ep_rank = 0;
    // Timing mode, MoE: fills a step's routing (StepBatch::experts, local_sizes) instead of the
    // engine's own draw; called with the step's index before its plan is refreshed.
    std::function<void(StepBatch& b, size_t step)> route;
    // A pipeline stage (runtime/llm/pipeline.h): this chip holds layers [first_layer, end_layer)
    // (end_layer -1: to the last), their KV cache, and the embedding (first stage) or the final
    // norm, LM head and sampling (last stage); see StepGraphOptions.
    int64_t first_layer = 0, end_layer = -1;
    // Keep each step's per-op tasks in steps() (the per-op tables need them); a long serving run
    // turns it off, keeping each step's time and counts only.
    bool keep_step_ops = true;
    // Serving instances on one chip (runtime/serve/cluster.h): the weights are another context's
    // block, exported through the runtime's shared-memory handles (runtime/rt/share_table.h). The
    // memory plan holds none of them, and start() maps the handle this returns (called in the
    // host thread; it may wait for the owner's export) instead of placing a copy. Timing mode.
    std::function<uint64_t()> import_weights;
};

// The prompts a run draws from its seed when RunOptions::prompts gives none (batch x prefill
// token ids, vocabulary-uniform).
std::vector<std::vector<int64_t>> draw_prompts(const ModelConfig& c, const RunOptions& o);

struct MemoryPlan {
    uint64_t capacity = 0;     // device memory a program can allocate
    uint64_t weights = 0;      // weights and the RoPE table, placed once
    bool weights_imported = false;  // RunOptions::import_weights: mapped, not held (not in `free`'s sum)
    uint64_t activations = 0;  // the largest step plan's arena
    uint64_t kv = 0;           // the paged KV cache
    uint64_t reserved = 0;     // RunOptions::reserved_bytes
    uint64_t free = 0;  // includes what the allocator's power-of-two rounding holds
    int64_t kv_blocks = 0, kv_blocks_needed = 0;
    uint64_t kv_block_bytes = 0;  // one block: K and V of block_size tokens in every layer
};

// One plan step as run in one model step: its kernels' tasks.
struct StepOp {
    std::string name, op_type;
    std::vector<int64_t> shape;  // first output
    std::vector<std::shared_ptr<Task>> tasks;
};

struct StepRecord {
    bool prefill = false;
    bool captured = false;  // launched as one captured model
    int64_t tokens = 0;  // new tokens in the step (all sequences)
    uint64_t begin_ps = 0, ps = 0;
    std::vector<StepOp> ops;
};

// The kernels' compulsory bytes of one step (their descriptors' `bytes`, summed).
uint64_t kernel_bytes(const StepRecord& st);

// A run's phases from its step records: the prefill steps' time (TTFT without queueing), each
// decode step's time and the kernels' compulsory bytes over the decode steps. With
// `split_captured` (GraphMode::Both) the captured pass goes to `captured` and the eager pass to
// `eager`; otherwise every step counts in `eager`.
struct PhaseTotals {
    uint64_t prefill_ps = 0;
    size_t prefill_steps = 0;
    std::vector<uint64_t> decode_ps;  // one per decode step, in order
    uint64_t decode_bytes = 0;
};
struct RunTotals {
    PhaseTotals eager, captured;
};
RunTotals run_totals(const std::vector<StepRecord>& steps, bool split_captured);

class LlmRun {
public:
    // Validates the request against the model and the device, compiles the first plans and
    // plans memory (InputError: what does not fit, by how much).
    LlmRun(const ModelConfig& c, RunOptions o, const DeviceInfo& dev);
    ~LlmRun();
    const MemoryPlan& memory() const { return m_mem; }
    // The host program (call from the simulation's host thread).
    void run(rt::Runtime& rt);
    // Called after each model step.
    void on_step(std::function<void(const StepRecord&)> f) { m_on_step = std::move(f); }
    // Called in the host thread after each plan step's launches are issued, before the next
    // step's (a parallel run issues its collectives on the same stream there): the step and the
    // executor that placed its tensors.
    using AfterOp = std::function<void(const graph::PlanStep& step, const graph::Executor& ex)>;
    void after_op(AfterOp f) { m_after_op = std::move(f); }
    // Adds a hook behind the one installed (a TP rank's all-reduces and a serving instance's KV
    // transfer, say): both run, in the order added.
    void add_after_op(AfterOp f) {
        if (!m_after_op) return after_op(std::move(f));
        m_after_op = [first = std::move(m_after_op), then = std::move(f)](const graph::PlanStep& st,
                                                                          const graph::Executor& ex) {
            first(st, ex);
            then(st, ex);
        };
    }

    // A pipeline stage drives the steps itself instead of run(): start() places the weights and
    // the KV cache, then each step() runs one step of `seqs` (q new tokens each after ctx cached
    // ones; ids: their token ids, first stage) and returns their next tokens (last stage; else
    // empty). before_step runs in the host thread before a step's first copy or launch (a stage
    // waits there for its received activations); bind() gives the address of an external input
    // the caller allocates (the stage's receive buffer, kPpHidden / kPpResidual), before start().
    void start(rt::Runtime& rt);
    std::vector<int64_t> step(rt::Runtime& rt, bool prefill, const std::vector<size_t>& seqs, int64_t q, int64_t ctx,
                              std::vector<int64_t> ids);
    void before_step(std::function<void()> f) { m_before_step = std::move(f); }
    // A serving host program (runtime/serve/chip_timer.h) runs steps of arbitrary ragged batches
    // after start(): per sequence b.query_lens new tokens after b.context_lens cached ones, in the
    // blocks of the caller's own KV block manager (b.block_table, b.max_blocks wide, ids below
    // memory().kv_blocks, -1 unused); b.ids optional (zeros). In timing mode a step's plan is
    // keyed by its shape only (new tokens, sequences, sequences with more than one new token):
    // the lengths, positions and block tables are host attributes refreshed on the cached plan
    // per step, and the head's last-token rows (a constant of the plan) are not read in timing
    // mode; should a step's attention need more workspace than its plan placed, the plan is
    // compiled again from that step (plans_recompiled()). Functional mode keys by the exact
    // lengths, as step() does. Returns the step's record (its time). InputError for a batch
    // that is malformed, reaches past the RoPE table or names a block the cache does not have.
    const StepRecord& step_batch(rt::Runtime& rt, StepBatch b, bool prefill);
    size_t plans_recompiled() const { return m_recompiled; }
    // RoPE table rows: the longest sequence a step may reach.
    int64_t max_positions() const { return m_positions; }
    void bind(const std::string& name, uint64_t addr) { m_addr[name] = addr; }
    // After start(): exports the weights' block for other contexts on this chip to import
    // (RunOptions::import_weights); returns the handle.
    uint64_t export_weights(rt::Runtime& rt);
    int64_t first_layer() const { return m_o.first_layer; }
    int64_t end_layer() const { return m_o.end_layer < 0 ? m_c.num_layers : m_o.end_layer; }
    bool has_head() const { return end_layer() == m_c.num_layers; }

    const std::vector<StepRecord>& steps() const { return m_steps; }
    // Generated tokens per sequence (prefill's, then one per decode step).
    const std::vector<std::vector<int64_t>>& tokens() const { return m_tokens; }
    const std::vector<std::vector<int64_t>>& prompts() const { return m_prompts; }
    size_t plans_compiled() const { return m_compilations; }
    double compile_seconds() const { return m_compile_s; }
    // Kernel launches of the whole run (from the first plans; for progress).
    size_t kernels_expected() const;
    const ModelConfig& config() const { return m_c; }
    const RunOptions& options() const { return m_o; }
    bool device_sampling() const { return m_sample; }
    // Device address of an external input ("ep.recv", ...) once run() placed it.
    uint64_t address(const std::string& name) const { return m_addr.at(name); }

private:
    struct Bucket {
        std::unique_ptr<graph::Plan> plan;
        std::unique_ptr<graph::Executor> ex;
        std::vector<size_t> host_attr_steps;  // steps whose attributes follow the step
    };
    // A step of `count` sequences: q new tokens each after ctx cached ones.
    StepBatch batch_for(size_t count, int64_t q, int64_t ctx) const;
    // Prefill steps: (first sequence, sequences, chunk start, chunk tokens).
    struct PrefillStep {
        size_t first, count;
        int64_t start, tokens;
    };
    std::vector<PrefillStep> prefill_steps() const;
    std::string bucket_key(const StepBatch& b) const;
    Bucket& bucket(const StepBatch& b);
    std::unique_ptr<graph::Plan> compile(const StepBatch& b, int64_t num_blocks);
    void place(rt::Runtime& rt);
    void emit_trace(rt::Runtime& rt, const StepRecord& r, size_t index);
    // Runs one step; returns the next token of each of its sequences.
    std::vector<int64_t> run_step(rt::Runtime& rt, bool prefill, StepBatch b, const std::vector<size_t>& seqs);
    // The step itself, its block table filled in.
    std::vector<int64_t> execute(rt::Runtime& rt, bool prefill, StepBatch b);
    // Refreshes the host attributes of the bucket's plan for batch b; false (nothing refreshed)
    // when an op would need more workspace than the plan placed.
    bool refresh(Bucket& bk, const StepBatch& b);
    bool m_shape_keys = false;  // step_batch in timing mode: plans keyed by shape only
    size_t m_recompiled = 0;
    void run_request(rt::Runtime& rt, bool captured);
    // MoE in timing mode: the experts of each layer's entries for a step of `tokens` tokens.
    std::vector<std::vector<int64_t>> draw_routing(int64_t tokens);
    bool m_captured = false;

    ModelConfig m_c;
    RunOptions m_o;
    DeviceInfo m_dev;
    MemoryPlan m_mem;
    bool m_sample = true;
    int64_t m_positions = 0;  // RoPE table rows: the longest sequence
    std::unique_ptr<KvCache> m_kv;
    std::map<std::string, Bucket> m_buckets;
    std::string m_live;  // the bucket whose executor is loaded
    std::map<std::string, uint64_t> m_addr;  // external inputs
    uint64_t m_weights_base = 0;
    struct WeightShape {
        std::string name;
        std::vector<int64_t> shape;
        ref::ElemType elem;
    };
    std::vector<WeightShape> m_weight_shapes;
    std::vector<std::pair<std::string, uint64_t>> m_buffers;  // "ep.*": name, bytes
    size_t m_compilations = 0, m_kernels_prefill = 0, m_kernels_decode = 0, m_prefill_steps = 0;
    double m_compile_s = 0;
    std::vector<StepRecord> m_steps;
    std::vector<std::vector<int64_t>> m_prompts, m_tokens;
    std::function<void(const StepRecord&)> m_on_step;
    AfterOp m_after_op;
    std::function<void()> m_before_step;
    rt::Runtime* m_rt = nullptr;
    std::mt19937_64 m_rng, m_route_rng;
};

}  // namespace sfumato::llm
