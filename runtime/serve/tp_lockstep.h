// A serving instance's chips in lockstep (serve.tp, serve.pp; runtime/serve/cluster.h): the
// instance's scheduler runs in rank 0's host program (stage 0, TP rank 0); each step's batch (or a
// KV swap) is posted to the other chips' host programs, which run the same step on their shards
// (runtime/llm's TpRun ranks: the all-reduces after o_proj and down_proj join them over the
// links; PpRun's stages: a later stage's step waits for the activations the previous one sends),
// and rank 0 waits for them, so a step ends when its slowest chip's does (as llm::TpRun counts a
// step; with stages, when the last stage's does). Works are numbered and queued: with pipeline
// stages rank 0 may post the next step before the chips finished the previous one
// (serve.pp_batches_in_flight), each follower taking them in order. The
// posts are SystemC events between host threads of one simulation: they take no simulated time
// (a serving engine's workers receive the scheduler's output over shared memory or a pipe, not
// modelled).
#pragma once
#include <algorithm>
#include <cstdint>
#include <deque>
#include <systemc>
#include <utility>
#include <vector>

#include "runtime/llm/engine.h"
#include "sim/sc_time_util.h"

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
    explicit TpLockstep(size_t followers) : m_done(followers, 0) {}
    size_t followers() const { return m_done.size(); }

    // Rank 0: posts the next piece of work to every follower; its number (0, 1, ...). The
    // followers take the works in order, each when it finished the previous one, so several may
    // be outstanding (a pipeline's batches in flight).
    size_t post(Work w) {
        m_q.push_back(Entry{std::move(w)});
        m_post_ev.notify(sc_core::SC_ZERO_TIME);
        return m_posted++;
    }
    // Rank 0: waits until every follower finished the last posted work; their earliest begin and
    // latest end (ps).
    std::pair<uint64_t, uint64_t> wait_followers() {
        wait_work(m_posted - 1, UINT64_MAX);
        return take(m_posted - 1);
    }
    // Rank 0: waits until every follower finished work `n`, or until the simulated time reaches
    // `until_ps` (UINT64_MAX: no limit); whether they did.
    bool wait_work(size_t n, uint64_t until_ps) {
        while (!all_done(n)) {
            const uint64_t now = now_tick().v;
            if (until_ps == UINT64_MAX) {
                sc_core::wait(m_done_ev);
            } else {
                if (now >= until_ps) return false;
                sc_core::wait(to_sc_time(Tick(until_ps - now)), m_done_ev);
            }
        }
        return true;
    }
    // Rank 0, after wait_work(n): the followers' earliest begin and latest end of work n (ps); it
    // is forgotten once the works before it are.
    std::pair<uint64_t, uint64_t> take(size_t n) {
        Entry& e = m_q.at(n - m_base);
        e.taken = true;
        const std::pair<uint64_t, uint64_t> s{e.begin, e.end};
        while (!m_q.empty() && m_q.front().taken && m_q.front().done == m_done.size()) {
            m_q.pop_front();
            ++m_base;
        }
        return s;
    }
    // Follower f (0-based: rank f + 1): the next work, waiting for rank 0 to post it.
    const Work& next(size_t f) {
        while (m_done.at(f) == m_posted) sc_core::wait(m_post_ev);
        return m_q.at(m_done[f] - m_base).w;
    }
    // Follower f finished the work it took, running over [begin, end) ps; `swap_bytes`: the KV
    // it copied for a swap.
    void finished(size_t f, uint64_t begin_ps, uint64_t end_ps, uint64_t swap_bytes = 0) {
        Entry& e = m_q.at(m_done.at(f) - m_base);
        e.begin = std::min(e.begin, begin_ps);
        e.end = std::max(e.end, end_ps);
        ++e.done;
        m_swap_bytes += swap_bytes;
        ++m_done[f];
        m_done_ev.notify(sc_core::SC_ZERO_TIME);
    }

    // The followers' swap bytes since the last call.
    uint64_t take_swap_bytes() { return std::exchange(m_swap_bytes, 0); }

private:
    struct Entry {
        Work w;
        uint64_t begin = UINT64_MAX, end = 0;
        size_t done = 0;  // followers that finished it
        bool taken = false;
    };
    bool all_done(size_t n) const {
        for (size_t d : m_done)
            if (d <= n) return false;
        return true;
    }
    std::deque<Entry> m_q;  // works m_base .. m_posted - 1 (deque: a follower's reference stays valid)
    size_t m_base = 0, m_posted = 0;
    uint64_t m_swap_bytes = 0;
    std::vector<size_t> m_done;  // per follower: works finished
    sc_core::sc_event m_post_ev, m_done_ev;
};

}  // namespace sfumato::serve
