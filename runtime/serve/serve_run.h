// The serving host program as a library (`sfumato serve`, issue 25): a request trace served by
// the scheduler (runtime/serve/scheduler.h) with every step's batch run as the model's kernels on
// the simulated chip (the chip's step timer, chip_timer.h, over runtime/llm's LlmRun). Before the
// simulation (the constructor) it plans device memory as an LLM run does: the weights, the
// activation arena of the largest step (max_num_batched_tokens new tokens) and the paged KV
// cache (serve.kv_blocks, or kv_mem_fraction of what is left); the scheduler's KV pool is that
// cache less one scratch block for the shape padding. run() (the host thread) places the model
// and serves the trace; the results, the metrics and the outputs (summary section, per-request
// CSV, trace tracks per request and for the scheduler's steps) come from here too.
// The scheduler's knobs are parameters under `serve.` (ServeParams), listed by `sfumato params`.
// Several instances on a system: runtime/serve/cluster.h.
// Simplified: the scheduler's time overhead per step is not charged
// (the step's host costs are the runtime's launches and copies).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runtime/comm/communicator.h"
#include "runtime/llm/engine.h"
#include "runtime/llm/parallel.h"
#include "runtime/llm/pipeline.h"
#include "runtime/serve/chip_timer.h"
#include "runtime/serve/metrics.h"
#include "runtime/serve/requests.h"
#include "runtime/serve/scheduler.h"
#include "runtime/serve/step_reuse.h"
#include "runtime/serve/vidur_profile.h"
#include "sim/config.h"

namespace sfumato::serve {

struct ServeSetup {
    SchedulerOptions sched;  // kv_blocks 0: the memory plan's; max_model_len 0: the model's reach
    bool pad_shapes = true;
    double kv_mem_fraction = 0.9;
    uint64_t seed = 1;
    // Several instances on a system (runtime/serve/cluster.h): how many, the router in front of
    // them, and each instance's chip (empty: instance i on chip i mod chips).
    int64_t instances = 1;
    std::string router = "round_robin";
    std::vector<uint32_t> placement;
    // Disaggregated prefill/decode: instances 0..prefill_instances-1 compute prompts, the others
    // decode (0: every instance does both).
    int64_t prefill_instances = 0;
    // The prefill instances' TP size (0: serve.tp, as the decode instances').
    int64_t prefill_tp = 0;
    // Tensor parallelism per instance (serve.tp): each instance spans tp chips of the system, its
    // model sharded over them as llm::TpRun shards it (runtime/llm/parallel.h), the all-reduces
    // over the links. tp_mirror: only rank 0 simulates kernels (timing mode, --simulate one: an
    // approximation, runtime/system/simulate.h).
    int64_t tp = 1;
    bool tp_mirror = false;
    // Pipeline parallelism per instance (serve.pp): each instance's layers in pp stages on pp
    // groups of tp chips, as llm::PpRun splits them (runtime/llm/pipeline.h); each step runs
    // through the stages in turn, the activations over the links. pp_in_flight: steps the
    // instance's scheduler keeps outstanding at once (0: pp; 1: each step ends before the next
    // starts), so stage s runs one step while stage s + 1 runs the one before (scheduler.h).
    int64_t pp = 1, pp_in_flight = 0;
    int64_t batches_in_flight() const { return pp > 1 ? (pp_in_flight > 0 ? pp_in_flight : pp) : 1; }
    uint64_t comm_buffer_bytes = 0;  // comm.buffer_bytes: the collective library's, per chip
    bool export_profile = false;  // collect the per-op times for profile() (vidur_profile.h)
    // Step-time re-use (step_reuse.h; serve.step_reuse*): a single-chip instance's steps of a
    // simulated shape take their time from the simulated steps.
    StepReuseOptions step_reuse;
};

// One instance's share of its chip (runtime/serve/cluster.h): device memory the chip's other
// instances hold (taken from the capacity before the KV cache is sized) and, for an instance
// that is not the first on its chip, the handle of the first one's weights to map instead of a
// copy (llm::RunOptions::import_weights).
struct InstanceShare {
    uint64_t reserved_bytes = 0;
    std::function<uint64_t()> import_weights;
    std::string label;  // trace process suffix ("" for a lone instance)
};

// The `serve.*` parameters (policy and knobs); setup() turns them into a ServeSetup.
struct ServeParams {
    explicit ServeParams(const ParamScope& s);
    ChoiceParam policy;
    Param<int64_t> max_num_batched_tokens, max_num_seqs, long_prefill_token_threshold;
    Param<bool> chunked_prefill;
    Param<int64_t> max_batch;
    Param<double> timeout_s, window_s;
    Param<int64_t> kv_blocks, block_size;
    Param<bool> prefix_caching;
    ChoiceParam preemption, scheduling;
    Param<double> watermark;
    Param<int64_t> max_model_len;
    Param<double> kv_mem_fraction;
    Param<bool> pad_shapes;
    Param<int64_t> instances;
    ChoiceParam router, placement;
    Param<int64_t> prefill_instances, prefill_tp;
    Param<int64_t> tp, pp, pp_batches_in_flight;
    Param<bool> step_reuse;
    Param<int64_t> step_reuse_span, step_reuse_check;
    // InputError naming serve.placement for a malformed list.
    ServeSetup setup() const;
};

// summary.json's metrics of a result: percentiles in ms, throughput, goodput, steps; with more
// than one priority class among the requests, the latencies of each (`by_priority`).
nlohmann::json metrics_json(const ServeResult& r, double slo_ttft_s, double slo_tpot_s);
// KV utilisation over the steps: peak and step-time weighted mean of the pool's blocks in use.
nlohmann::json kv_json(const ServeResult& r, int64_t pool_blocks);
// One row per request (trace order), as ServeRun::requests_csv; `instance`: each request's
// instance (empty: no column).
std::string requests_csv(const ServeResult& r, const std::vector<size_t>& instance = {});
// One row per scheduler step of each instance (instance i: results[i], its KV pool pools[i]
// blocks), in instance then step order: instance, step, begin_s, seconds, sequences, prefill and
// decode tokens, waiting requests after the step's admissions, KV blocks in use and the pool,
// preemptions, swapped-out and swapped-in tokens. `sfumato report` draws its time series.
std::string steps_csv(const std::vector<const ServeResult*>& results, const std::vector<int64_t>& pools);

class ServeRun {
public:
    // Plans memory and validates the setup against the model and the device (InputError naming
    // what does not fit or which knob is out of range).
    ServeRun(const llm::ModelConfig& c, RequestTrace trace, ServeSetup s, const DeviceInfo& dev,
             InstanceShare share = {});
    // A tensor-parallel instance over s.tp chips (`devs`: its chips' DeviceInfo, rank order; one
    // chip: as above). The memory plan is each chip's (weights shard, its KV heads' cache,
    // activations, the collective buffers); the KV pool is rank 0's blocks, each holding its
    // shard of every token (every rank has as many). With s.pp stages, `devs` holds s.pp x s.tp
    // chips, stage-major (stage s's ranks at s tp ..); each chip plans its stage's layers (and
    // receive buffer), and the KV pool is the fewest blocks any chip holds.
    ServeRun(const llm::ModelConfig& c, RequestTrace trace, ServeSetup s, const std::vector<DeviceInfo>& devs,
             InstanceShare share = {});
    ~ServeRun();
    // Several chips: chip r's host program (r: its index in the instance, stage-major) joins the
    // instance on its context (`comm`: its TP group's communicator, ranks in order; null for TP
    // 1), before run() (r 0) or run_follower() (the others).
    void join(uint32_t rank, rt::Runtime& rt, comm::Communicator* comm);
    // Chip r > 0's host program: places its shard, then (after `after_start`) runs every step
    // chip 0 posts.
    void run_follower(uint32_t rank, rt::Runtime& rt, const std::function<void()>& after_start = {});
    int64_t tp() const { return m_tp ? m_tp->tp() : m_pp ? m_pp->tp() : 1; }
    int64_t pp() const { return m_pp ? m_pp->pp() : 1; }
    const llm::TpRun* tp_run() const { return m_tp.get(); }
    const llm::PpRun* pp_run() const { return m_pp.get(); }
    // The host program (call from the simulation's host thread). Several instances: `arrivals`
    // gives this instance's requests (a router), `ready` sees its scheduler before the first
    // step (the router's load measure), `after_start` runs once the model is placed (a chip's
    // first instance exports its weights there; the instances meet there to start together).
    // `handoff`: a prefill instance's (disaggregation) hand-off of each prefilled request.
    void run(rt::Runtime& rt, IArrivals* arrivals = nullptr, const std::function<void(const Scheduler&)>& ready = {},
             const std::function<void()>& after_start = {}, IHandoff* handoff = nullptr);
    // After join(), before run() / run_follower(): a hook after each plan step's launches on chip
    // r (llm::LlmRun::add_after_op: behind the TP all-reduces' hook).
    void after_op(uint32_t rank, llm::LlmRun::AfterOp f) { chip_run(rank).add_after_op(std::move(f)); }
    // Chip r's engine (0: engine()).
    const llm::LlmRun& chip_engine(uint32_t rank) const;
    // After start(): exports the weights for the chip's other instances.
    uint64_t export_weights(rt::Runtime& rt) { return m_run->export_weights(rt); }

    const RequestTrace& trace() const { return m_trace; }
    const llm::ModelConfig& model() const { return m_c; }  // the whole model (engine(): rank 0's shard)
    const ServeSetup& setup() const { return m_s; }  // effective: kv_blocks and max_model_len resolved
    const llm::LlmRun& engine() const { return *m_run; }
    const ServeResult& result() const { return m_res; }
    const ChipTimerCounters& timer() const { return m_counters; }
    const StepReuseCounters& step_reuse() const { return m_step_reuse; }
    // The per-op times measured (ServeSetup::export_profile; else null).
    const VidurProfile* profile() const { return m_profile.get(); }
    double wall_seconds() const { return m_wall_s; }

    // summary.json's "serve" section: setup, metrics (percentiles in ms, throughput, goodput
    // under the SLOs, KV utilisation), the timer's counters and the plans compiled.
    nlohmann::json summary(double slo_ttft_s, double slo_tpot_s) const;
    // One row per request (trace order): id, arrival, scheduled, first token, finish (s), TTFT,
    // TPOT, E2E, longest inter-token gap (ms), tokens, preemptions, prefix-hit tokens, rejected.
    std::string requests_csv() const;
    std::string steps_csv() const;  // serve::steps_csv of this instance

private:
    void emit_trace(rt::Runtime& rt, uint64_t origin_ps) const;
    InstanceShare m_share;
    llm::ModelConfig m_c;
    RequestTrace m_trace;
    ServeSetup m_s;
    std::unique_ptr<llm::LlmRun> m_own;  // one chip
    std::unique_ptr<llm::TpRun> m_tp;    // several: rank 0's run is m_run
    std::unique_ptr<llm::PpRun> m_pp;    // stages: stage 0 rank 0's run is m_run
    llm::LlmRun& chip_run(uint32_t r);
    void make_parallel(const llm::ModelConfig& c, const llm::RunOptions& ro,
                       const std::vector<DeviceInfo>& devs);
    nlohmann::json pipeline_json() const;
    int64_t m_scratch = 0;  // the KV block the shape padding writes (no request holds it)
    std::unique_ptr<TpLockstep> m_lock;
    llm::LlmRun* m_run = nullptr;
    ServeResult m_res;
    ChipTimerCounters m_counters;
    StepReuseCounters m_step_reuse;
    std::unique_ptr<VidurProfile> m_profile;
    double m_wall_s = 0;
};

}  // namespace sfumato::serve
