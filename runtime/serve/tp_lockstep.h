// A serving instance's chips in lockstep (serve.tp, serve.pp; runtime/serve/cluster.h): the
// instance's scheduler runs in rank 0's host program (stage 0, TP rank 0); each step's batch (or a
// KV swap) is posted to the other chips' host programs, which run the same step on their shards
// (runtime/llm's TpRun ranks: the all-reduces after o_proj and down_proj join them over the
// links; PpRun's stages: a later stage's step waits for the activations the previous one sends),
// and rank 0 waits for them, so a step ends when its slowest chip's does (as llm::TpRun counts a
// step; with stages, when the last stage's does). The
// posts are SystemC events between host threads of one simulation: they take no simulated time
// (a serving engine's workers receive the scheduler's output over shared memory or a pipe, not
// modelled).
#pragma once
#include <algorithm>
#include <cstdint>
#include <systemc>
#include <utility>
#include <vector>

#include "runtime/llm/engine.h"

namespace sfumato::serve {

class TpLockstep {
public:
    enum class Kind : uint8_t { Step, Swap, Stop };
    struct Work {
        Kind kind = Kind::Stop;
        llm::StepBatch batch;  // Step
        bool prefill = false;
        int64_t swap_out = 0, swap_in = 0;  // Swap: tokens
    };
    explicit TpLockstep(size_t followers) : m_done(followers, 0), m_span(followers) {}
    size_t followers() const { return m_done.size(); }

    // Rank 0: posts the next piece of work to every follower.
    void post(Work w) {
        m_work = std::move(w);
        ++m_posted;
        m_post_ev.notify(sc_core::SC_ZERO_TIME);
    }
    // Rank 0: waits until every follower finished the posted work; their earliest begin and
    // latest end (ps).
    std::pair<uint64_t, uint64_t> wait_followers() {
        for (;;) {
            bool all = true;
            for (size_t d : m_done) all = all && d == m_posted;
            if (all) break;
            sc_core::wait(m_done_ev);
        }
        std::pair<uint64_t, uint64_t> s{UINT64_MAX, 0};
        for (const auto& [b, e] : m_span) s = {std::min(s.first, b), std::max(s.second, e)};
        return s;
    }
    // Follower f (0-based: rank f + 1): the next work, waiting for rank 0 to post it.
    const Work& next(size_t f) {
        while (m_done.at(f) == m_posted) sc_core::wait(m_post_ev);
        return m_work;
    }
    // Follower f finished the work it took, running over [begin, end) ps; `swap_bytes`: the KV
    // it copied for a swap.
    void finished(size_t f, uint64_t begin_ps, uint64_t end_ps, uint64_t swap_bytes = 0) {
        m_span.at(f) = {begin_ps, end_ps};
        m_swap_bytes += swap_bytes;
        ++m_done.at(f);
        m_done_ev.notify(sc_core::SC_ZERO_TIME);
    }

    // The followers' swap bytes since the last call.
    uint64_t take_swap_bytes() { return std::exchange(m_swap_bytes, 0); }

private:
    Work m_work;
    uint64_t m_swap_bytes = 0;
    size_t m_posted = 0;
    std::vector<size_t> m_done;
    std::vector<std::pair<uint64_t, uint64_t>> m_span;
    sc_core::sc_event m_post_ev, m_done_ev;
};

}  // namespace sfumato::serve
