// The serving scheduler (issue 25): requests arrive (runtime/serve/requests.h), a policy picks
// each step's batch, a step timer says how long the step takes, and the loop advances simulated
// time step by step, recording each request's queueing, first token and finish.
// Policies:
//  - continuous: iteration-level batching as vLLM's V1 scheduler does it: each step has one
//    token budget (max_num_batched_tokens) shared by prefill and decode and a cap on sequences
//    (max_num_seqs); running sequences are served first, in order, each taking what it still
//    needs (a decode: one token; an unfinished prompt: the rest, cut to
//    long_prefill_token_threshold when set: chunked prefill); when the KV pool cannot grow a
//    sequence the tail of the running list is preempted (blocks freed, recomputed later from
//    the front of the queue); waiting requests are admitted only in a step that preempted none,
//    in arrival order, with their prefix-cache hit counted as computed (at least the prompt's
//    last token is recomputed, to produce its logits);
//  - static: a batch of up to max_batch requests, formed once max_batch wait or the first has
//    waited `timeout`; it runs to completion (prefill of every prompt, then decode steps until
//    the longest output is done) before the next batch forms; max_batch 1 is one request at a
//    time;
//  - dynamic: the same batch-to-completion with the task scheduler's trigger: a batch closes
//    `window` after the first request of it arrived, or when max_batch have arrived.
// Every request either finishes or is rejected with its reason (more KV blocks than the pool
// has, a context beyond max_model_len); none is lost. The timer is an interface: the chip's
// (step kernels on the simulated chip through runtime/llm) plugs in there.
// Several instances (runtime/serve/cluster.h) each run a Scheduler whose requests come from a
// router (IArrivals) instead of the whole trace.
// Priority scheduling (SchedulerOptions::priority) over any policy: the waiting queue in
// (priority, arrival) order, so a batch or an admission takes the most urgent first; under the
// continuous policy preemption takes the least urgent running request (the latest of equals;
// one already in the step's batch is taken out of it), and before a step a waiting request that
// cannot be admitted (no sequence slot, or too few free KV blocks for its first piece, prefix
// hits not counted) preempts running requests of a lower priority until it can (vLLM V0's
// priority preemption); such preemptions do not stop admission.
// Preemption recomputes (vLLM V1) or, with `swap`, copies the computed tokens' KV to host memory
// and back on resumption (the timer's swap_seconds: the chip's host link).
// Simplified: static/dynamic batches reserve each request's whole context up front; a swapped
// sequence's host copy is not bounded by a host memory size.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/serve/kv_blocks.h"
#include "runtime/serve/requests.h"

namespace sfumato::serve {

enum class Policy : uint8_t { Continuous, Static, Dynamic };
Policy parse_policy(const std::string& s);  // InputError naming the known ones
const char* policy_name(Policy p);

struct SchedulerOptions {
    Policy policy = Policy::Continuous;
    // continuous
    int64_t max_num_batched_tokens = 8192;
    int64_t max_num_seqs = 256;
    int64_t long_prefill_token_threshold = 0;  // 0: whole prompts (still cut to the budget)
    bool chunked_prefill = true;  // off: a prompt that does not fit the step's budget waits
    // static / dynamic
    int64_t max_batch = 8;
    double timeout_s = 1.0;  // static: the first request's longest wait for a full batch
    double window_s = 0.05;  // dynamic: the batching window from the first request
    // KV cache
    int64_t kv_blocks = 1024, block_size = 128;
    bool prefix_caching = true;
    double watermark = 0.01;
    // Preemption: recompute (vLLM V1: the blocks freed, the tokens computed again) or swap (the
    // computed tokens' KV copied to host memory over the host link and back on resumption).
    bool swap = false;
    int64_t max_model_len = 0;  // 0: no limit beyond the KV pool
    // Priority scheduling (vLLM's --scheduling-policy priority; off: fcfs, priorities ignored):
    // waiting requests in (priority, arrival) order, preemption of the lowest priority first,
    // and a waiting request that cannot be admitted for want of KV blocks or a sequence slot
    // preempts running requests of a lower priority (a larger value) to make room.
    bool priority = false;
};

// One sequence's part of a step: `tokens` new tokens after `context` computed ones.
struct StepItem {
    size_t request = 0;  // index in the trace
    int64_t tokens = 0, context = 0;
    bool prefill = false;  // part of its prompt (else one decode token)
    // The KV blocks the sequence holds in the pool (kv_blocks.h), in order: the step's block
    // table row (the chip's timer addresses the paged cache by them).
    std::vector<int64_t> blocks;
};

// How long a step takes. The chip's timer runs the step's kernels; tests use simple models.
class IStepTimer {
public:
    virtual ~IStepTimer() = default;
    virtual double step_seconds(const std::vector<StepItem>& batch) = 0;
    // Preemption by swap: the KV of `out_tokens` tokens goes to host memory and that of
    // `in_tokens` comes back before the step (the chip's timer copies over the host link).
    virtual double swap_seconds(int64_t out_tokens, int64_t in_tokens) {
        (void)out_tokens, (void)in_tokens;
        return 0;
    }
    // Called before each step with the loop's time (seconds from the first arrival): a timer
    // that keeps a clock of its own (the simulated chip's) waits there through idle gaps.
    virtual void begin_step(double now_s) { (void)now_s; }
    // Several batches in flight (a pipeline of stages, serve.pp_batches_in_flight): how many
    // steps may be outstanding at once. 1: step_seconds (each step ends before the next starts);
    // more: submit and retire below.
    virtual int64_t batches_in_flight() const { return 1; }
    // Starts a step at the loop's time (after begin_step) and returns once the first stage can
    // take the next one: that time, seconds on the loop's clock.
    virtual double submit(const std::vector<StepItem>& batch);
    // Waits for the oldest submitted step to leave the last stage, at most until `until_s` (on
    // the loop's clock; infinity: no limit). True with its exit time in `exit_s`; false when
    // `until_s` came first (the timer's clock is there).
    virtual bool retire(double until_s, double& exit_s);
};

struct RequestResult {
    std::string id;
    double arrival_s = 0, scheduled_s = -1, first_token_s = -1, finish_s = -1;
    int64_t prompt_tokens = 0, output_tokens = 0, prefix_hit_tokens = 0;
    int64_t preemptions = 0;
    int64_t priority = 0;  // the request's (lower: more urgent)
    double last_token_s = -1, max_itl_s = 0;  // the latest token; the longest gap between two
    std::string rejected;  // the reason; empty when served
    double ttft() const { return first_token_s - arrival_s; }
    double e2e() const { return finish_s - arrival_s; }
    // Mean time between output tokens (0 for a one-token output).
    double tpot() const {
        return output_tokens > 1 ? (finish_s - first_token_s) / static_cast<double>(output_tokens - 1) : 0.0;
    }
};

struct StepLog {
    double begin_s = 0, seconds = 0;
    int64_t sequences = 0, prefill_tokens = 0, decode_tokens = 0;
    int64_t waiting = 0, kv_used_blocks = 0, preempted = 0;  // preempted: for KV blocks or by priority
    int64_t priority_preempted = 0;                           // of `preempted`: for a more urgent request
    int64_t tokens_out = 0;  // sequences that produced a token at the step's end
    int64_t swapped_out = 0, swapped_in = 0;  // tokens whose KV went to / came from host memory
    double swap_s = 0;                        // of `seconds`: the swap copies
};

struct ServeResult {
    std::vector<RequestResult> requests;  // trace order
    std::vector<StepLog> steps;
    std::vector<double> itl_s;  // every gap between two consecutive tokens of a request
    double end_s = 0;
    int64_t preemptions = 0, priority_preemptions = 0;  // all; of them, for a more urgent request
    int64_t swapped_out = 0, swapped_in = 0;  // tokens, over the run
    double swap_s = 0;
};

// Where an instance's requests come from when several instances share a trace (a router,
// runtime/serve/cluster.h). Contract: take() gives each trace index at most once, only requests
// that arrived by `now`; next() is the earliest time after `now` at which take() may give more
// (infinity: never), so an idle scheduler can wait until then.
// Disaggregated prefill/decode: a request whose prompt another instance computed arrives with
// its result so far (`carried`: scheduling, first token, preemptions, prefix hits) and its KV
// cache moved here, so its first step here is a decode. wait(): when next() is infinity but
// requests may still come at a time not known in advance (KV transfers under way), blocks until
// one may be taken and sets `now_s` to the clock then; false when none will come.
class IArrivals {
public:
    virtual ~IArrivals() = default;
    virtual void take(double now_s, std::vector<size_t>& out) = 0;
    virtual double next(double now_s) = 0;
    virtual bool wait(double& now_s) {
        (void)now_s;
        return false;
    }
    virtual const RequestResult* carried(size_t id) const {
        (void)id;
        return nullptr;
    }
};

// A prefill instance hands each request off once its prompt is computed (its first token out,
// more to come): the scheduler calls prefilled() with the request's result so far and the KV
// blocks it holds, at the step's end, then frees them and forgets the request.
// step_starting() sees each step's batch before it runs (the KV of its prompt pieces can be sent
// layer by layer while the step computes them).
class IHandoff {
public:
    virtual ~IHandoff() = default;
    virtual void step_starting(const std::vector<StepItem>& items) { (void)items; }
    virtual void prefilled(size_t id, double now_s, const RequestResult& so_far, const std::vector<int64_t>& blocks) = 0;
};

class SchedulerLoop;

// Several batches in flight (IStepTimer::batches_in_flight() K > 1, a pipeline-parallel
// instance): the loop submits a step as soon as the first stage is free, while up to K steps are
// outstanding; a request is in at most one outstanding step (a request whose step has not left
// the last stage is not scheduled again), the KV blocks of a step are allocated when it is
// scheduled, and its tokens (first token, finish, the blocks freed) take effect when it leaves
// the last stage. Preemption takes only requests in no outstanding step; when the only one left
// to preempt would be the request itself while steps are outstanding, it waits for them instead
// (and nothing is admitted in that step). A step's StepLog spans its submission to its exit.
// K 1 is the step-synchronous loop above.

// One instance's scheduler: run() serves the requests (the whole trace, or what `arrivals`
// gives) step by step with the timer; deterministic for the same inputs. With `arrivals` the
// timer's begin_step(now) is also called before each take(), so a timer with a clock of its own
// (the chip's) has reached the time the router decides at.
class Scheduler {
public:
    Scheduler(const RequestTrace& trace, const SchedulerOptions& o, IStepTimer& timer, IArrivals* arrivals = nullptr,
              IHandoff* handoff = nullptr);
    ~Scheduler();
    ServeResult run();
    // Tokens still to compute for the requests it holds (waiting or running): the rest of each
    // prompt and output (a preempted request's recompute included). The router's load measure.
    int64_t outstanding_tokens() const;

private:
    std::unique_ptr<SchedulerLoop> m_loop;
};

// Runs the trace under the options with the timer; deterministic for the same inputs.
ServeResult simulate(const RequestTrace& trace, const SchedulerOptions& o, IStepTimer& timer);

}  // namespace sfumato::serve
