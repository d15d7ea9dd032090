// The chip's step timer for the serving scheduler (runtime/serve/scheduler.h): each step's exact
// batch, ragged per sequence (chunked prefill pieces and decodes mixed, each with its cached
// context), runs as the model's real kernels on the simulated chip through runtime/llm's
// LlmRun::step_batch, in the paged KV cache blocks the scheduler's pool gave each sequence; the
// step's time is the simulated time from its first input copy to its token read-back. It runs in
// the simulation's host thread: before a step it idles the host until the simulated clock reaches
// the scheduler's time, so the chip's timeline and the requests' share one clock.
// Shape buckets, as vLLM pads a step to one of its CUDA-graph batch sizes: a step's plan is
// compiled once per shape (new tokens, sequences, sequences with more than one new token), so the
// timer pads the step to a bucket: the prefill tokens to shape_bucket(tokens) with one padding
// sequence (no cached context, its cache rows in a scratch block no request holds), the decode
// sequences to shape_bucket(count) with padding decodes (the same scratch block). The padding
// computes like real tokens (it is charged, as a padded graph's is). `pad` off runs the exact
// batch (one plan per distinct shape). Timing re-use (runtime/reuse) applies to the kernels as in
// any run; it is the caller's to install.
// Simplified: the padding's attention reads no context; the sampled tokens are not used (the
// trace carries token counts).
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "runtime/llm/engine.h"
#include "runtime/serve/scheduler.h"
#include "runtime/serve/step_reuse.h"
#include "runtime/serve/tp_lockstep.h"

namespace sfumato::serve {

// The bucket a count is padded to: 1, 2, 4, 8, then multiples of max(8, 2^(floor(log2 n) - 3)),
// so at most 8 buckets per doubling and at most 12.5 % padding past 8.
int64_t shape_bucket(int64_t n);

// The step's batch for the engine: the items in order (block table rows from their blocks), then
// with `pad` the padding sequences; `scratch`: the block the padding writes into.
llm::StepBatch step_shape(const std::vector<StepItem>& items, int64_t block_size, int64_t scratch, bool pad);

// Copies the K and V of `out_tokens` tokens (every layer `run` holds) to host memory and of
// `in_tokens` back over the host link, pinned, one copy per layer and kind each way, and waits for
// them; returns the bytes copied.
uint64_t swap_kv(llm::LlmRun& run, rt::Runtime& rt, int64_t out_tokens, int64_t in_tokens);

struct ChipTimerCounters {
    size_t steps = 0;
    int64_t tokens = 0, padded_tokens = 0;          // real new tokens; padding tokens added
    int64_t sequences = 0, padded_sequences = 0;    // real sequences; padding sequences added
    double idle_s = 0;                              // host idle waiting for arrivals
    uint64_t swap_bytes = 0;                        // KV copied to and from host memory (swap)
};

class ChipStepTimer : public IStepTimer {
public:
    // `run` started (LlmRun::start) on `rt`; `scratch`: a cache block the scheduler's pool never
    // hands out.
    ChipStepTimer(llm::LlmRun& run, rt::Runtime& rt, int64_t scratch, bool pad);
    void begin_step(double now_s) override;
    double step_seconds(const std::vector<StepItem>& batch) override;
    // Copies the tokens' K and V (every layer) to host memory and back over the host link,
    // pinned, one copy per layer and kind each way, and waits for them.
    double swap_seconds(int64_t out_tokens, int64_t in_tokens) override;
    const ChipTimerCounters& counters() const { return m_n; }
    // Sees each step as it ran (the padded batch, how many of its sequences are requests, and its
    // record with the ops' tasks), e.g. to export a profile (vidur_profile.h).
    void observe(std::function<void(const llm::StepBatch&, size_t real, const llm::StepRecord&)> f);
    // The simulated time (ps) at the scheduler's time 0.
    uint64_t origin_ps() const { return m_t0; }
    // An instance of several chips (tp_lockstep.h: tensor-parallel ranks, pipeline stages): `run`
    // is rank 0's (stage 0's); each step and swap is posted to the other chips and ends when the
    // slowest chip's does (with stages: the last stage's).
    void lockstep(TpLockstep* l) { m_lock = l; }
    // Pipeline stages with lockstep: up to `k` steps in flight (scheduler.h). submit() posts a
    // step to the other chips and runs stage 0's part of it on this chip (its kernels and its send
    // to stage 1), returning when this chip is free; retire() waits for the oldest step's end on
    // every chip (the last stage's read-back) and gives that time. Each chip runs the steps in
    // order, so stage s works on a step while stage s + 1 works on the one before.
    void pipelined(int64_t k) { m_in_flight = k; }
    int64_t batches_in_flight() const override { return m_lock ? m_in_flight : 1; }
    double submit(const std::vector<StepItem>& batch) override;
    bool retire(double until_s, double& exit_s) override;
    // Step-time re-use (step_reuse.h): a step whose shape was simulated takes its time from those
    // steps (the host idles for it, no kernel runs). Not with lockstep (the followers run every
    // step).
    void step_reuse(const StepReuseOptions& o) { m_times = StepTimes(o); }
    StepReuseCounters step_reuse_counters() const { return m_times.counters(); }

private:
    llm::LlmRun& m_run;
    rt::Runtime& m_rt;
    int64_t m_scratch;
    bool m_pad;
    uint64_t m_t0;
    ChipTimerCounters m_n;
    std::function<void(const llm::StepBatch&, size_t, const llm::StepRecord&)> m_observe;
    llm::StepBatch m_batch;  // the step under way (for the observer)
    size_t m_real = 0;
    TpLockstep* m_lock = nullptr;
    StepTimes m_times{StepReuseOptions{}};
    std::string m_last_shape;
    int64_t m_in_flight = 1;
    struct Posted {
        size_t work = 0;      // its TpLockstep number
        uint64_t end_ps = 0;  // this chip's part's end
    };
    std::deque<Posted> m_posted;  // submitted, not retired
    llm::StepBatch shaped(const std::vector<StepItem>& batch, bool& prefill);
};

}  // namespace sfumato::serve
