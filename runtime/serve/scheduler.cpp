// The serving scheduler's policies and its time loop (runtime/serve/scheduler.h).
#include "runtime/serve/scheduler.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>

#include "sim/error.h"

namespace sfumato::serve {

Policy parse_policy(const std::string& s) {
    if (s == "continuous") return Policy::Continuous;
    if (s == "static") return Policy::Static;
    if (s == "dynamic") return Policy::Dynamic;
    throw InputError("unknown scheduling policy '" + s + "' (known: continuous, static, dynamic)");
}

const char* policy_name(Policy p) {
    switch (p) {
        case Policy::Continuous: return "continuous";
        case Policy::Static: return "static";
        case Policy::Dynamic: return "dynamic";
    }
    return "?";
}

namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();
constexpr size_t kNone = std::numeric_limits<size_t>::max();

}  // namespace

double IStepTimer::submit(const std::vector<StepItem>&) {
    throw SimError(kExitFailure, "serve: this step timer keeps one batch in flight (no submit)");
}

bool IStepTimer::retire(double, double&) {
    throw SimError(kExitFailure, "serve: this step timer keeps one batch in flight (no retire)");
}

// A request's progress in one scheduler (named: SchedulerLoop, outside this file's anonymous
// namespace, holds them).
struct SchedSeq {
    const Request* r = nullptr;
    int64_t computed = 0, generated = 0;
    int64_t moved = 0;  // tokens whose KV another instance computed and moved here (disaggregation)
    int64_t swapped = 0;  // tokens whose KV is in host memory (preemption by swap)
    int64_t num_tokens() const { return r->prompt_tokens + generated; }
};

class SchedulerLoop {
public:
    SchedulerLoop(const RequestTrace& t, const SchedulerOptions& o, IStepTimer& timer, IArrivals* src,
                  IHandoff* handoff)
        : m_t(t), m_o(o), m_timer(timer), m_src(src), m_handoff(handoff), m_pool(o.kv_blocks, o.block_size, o.prefix_caching, o.watermark) {
        if (o.max_num_batched_tokens < 1 || o.max_num_seqs < 1 || o.max_batch < 1 ||
            o.long_prefill_token_threshold < 0 || !(o.timeout_s >= 0) || !(o.window_s >= 0))
            throw InputError("scheduler: token budget, sequence cap and batch size must be at least 1, "
                             "threshold, timeout and window at least 0");
        m_seq.resize(t.requests.size());
        m_busy.assign(t.requests.size(), 0);
        m_res.requests.resize(t.requests.size());
        for (size_t i = 0; i < t.requests.size(); ++i) {
            const Request& r = t.requests[i];
            m_seq[i].r = &r;
            RequestResult& x = m_res.requests[i];
            x.id = r.id, x.arrival_s = r.arrival_s, x.prompt_tokens = r.prompt_tokens, x.output_tokens = r.output_tokens;
            x.priority = r.priority;
        }
    }

    ServeResult run() { return m_timer.batches_in_flight() > 1 ? run_pipelined() : run_sync(); }

    // One batch in flight: each step ends (its tokens out) before the next is scheduled.
    ServeResult run_sync() {
        size_t next = 0;
        double now = 0;
        std::vector<size_t> got;
        for (;;) {
            Round r = schedule_round(now, next, got);
            std::vector<StepItem>& items = r.items;
            const int64_t preempted = r.preempted, urgent = r.urgent;
            if (items.empty()) {
                const double at = r.at;
                if (at == kNever && m_src && m_src->wait(now)) continue;
                if (at == kNever) break;
                now = std::max(now, at);
                continue;
            }
            m_timer.begin_step(now);
            const double sw = m_swap_out || m_swap_in ? m_timer.swap_seconds(m_swap_out, m_swap_in) : 0.0;
            if (m_handoff) m_handoff->step_starting(items);
            const double dt = sw + m_timer.step_seconds(items);
            if (!(dt > 0) || !std::isfinite(dt) || !(sw >= 0))
                throw SimError(kExitFailure, "serve: the step timer returned " + std::to_string(dt) + " s");
            log_step(now, dt, items, preempted + urgent);
            note_step(urgent, sw);
            now += dt;
            complete(items, now, m_res.steps.back());
        }
        return finish(now);
    }

    int64_t outstanding_tokens() const {
        int64_t n = 0;
        auto add = [&](size_t id) {
            const SchedSeq& s = m_seq[id];
            n += std::max<int64_t>(0, s.r->prompt_tokens + s.r->output_tokens - 1 - s.computed);
        };
        for (size_t id : m_waiting) add(id);
        for (size_t id : m_running) add(id);
        return n;
    }

private:
    const RequestTrace& m_t;
    const SchedulerOptions& m_o;
    IStepTimer& m_timer;
    IArrivals* m_src;
    IHandoff* m_handoff;
    int64_t m_swap_out = 0, m_swap_in = 0;  // this step's swap copies (tokens)
    KvBlockPool m_pool;
    std::vector<SchedSeq> m_seq;
    std::vector<size_t> m_waiting, m_running;
    ServeResult m_res;
    // Several batches in flight: the outstanding steps, oldest first, and which requests are in
    // one of them.
    struct Outstanding {
        std::vector<StepItem> items;
        size_t log = 0;  // its StepLog
    };
    std::deque<Outstanding> m_flight;
    std::vector<char> m_busy;

    // Several batches in flight (scheduler.h): a step is submitted as soon as the first stage is
    // free, up to the timer's limit outstanding; each takes effect when it leaves the last stage.
    ServeResult run_pipelined() {
        const size_t limit = static_cast<size_t>(m_timer.batches_in_flight());
        size_t next = 0;
        double now = 0;
        std::vector<size_t> got;
        for (;;) {
            Round r = schedule_round(now, next, got);
            std::vector<StepItem>& items = r.items;
            const int64_t preempted = r.preempted, urgent = r.urgent;
            if (items.empty()) {
                const double at = r.at;
                if (!m_flight.empty()) {
                    // The oldest step's exit, or the next arrival (or batch trigger) if sooner.
                    double exit_s = 0;
                    if (m_timer.retire(at > now ? at : kNever, exit_s)) retire_front(exit_s, now);
                    else now = std::max(now, at);
                    continue;
                }
                if (at == kNever && m_src && m_src->wait(now)) continue;
                if (at == kNever) break;
                now = std::max(now, at);
                continue;
            }
            m_timer.begin_step(now);
            const double sw = m_swap_out || m_swap_in ? m_timer.swap_seconds(m_swap_out, m_swap_in) : 0.0;
            if (!(sw >= 0) || !std::isfinite(sw))
                throw SimError(kExitFailure, "serve: the step timer's swap took " + std::to_string(sw) + " s");
            if (m_handoff) m_handoff->step_starting(items);
            for (const StepItem& it : items) {
                if (m_busy[it.request])
                    throw SimError(kExitFailure, "serve: request " + m_t.requests[it.request].id +
                                                     " scheduled while a step of it is in flight");
                m_busy[it.request] = 1;
            }
            log_step(now, sw, items, preempted + urgent);
            note_step(urgent, sw);
            const double free_s = m_timer.submit(items);
            if (!std::isfinite(free_s) || free_s < now)
                throw SimError(kExitFailure, "serve: the step timer's stage was free at " + std::to_string(free_s) + " s");
            m_flight.push_back({std::move(items), m_res.steps.size() - 1});
            now = free_s;
            if (m_flight.size() >= limit) {
                double exit_s = 0;
                m_timer.retire(kNever, exit_s);
                retire_front(exit_s, now);
            }
        }
        return finish(now);
    }

    // One scheduling round at `now`: the arrivals taken, priority preemption, then the policy's
    // step. When nothing can run, `at` is when something may change (an arrival, a batch trigger).
    struct Round {
        std::vector<StepItem> items;
        int64_t preempted = 0, urgent = 0;
        double at = kNever;
    };
    Round schedule_round(double now, size_t& next, std::vector<size_t>& got) {
        take_arrivals(now, next, got);
        Round r;
        double wake = kNever;
        if (m_o.policy == Policy::Continuous && m_o.priority) r.urgent = preempt_for_priority();
        r.items = m_o.policy == Policy::Continuous ? schedule_continuous(now, r.preempted) : schedule_batch(now, wake);
        if (r.items.empty()) {
            const size_t n = m_t.requests.size();
            const double coming = m_src ? m_src->next(now) : next < n ? m_t.requests[next].arrival_s : kNever;
            r.at = std::min(coming, wake);
        }
        return r;
    }

    ServeResult finish(double now) {
        for (size_t id : m_waiting)  // cannot happen with the arrival checks; never lose a request
            m_res.requests[id].rejected = "never scheduled: the KV pool could not admit it";
        m_res.end_s = now;
        return std::move(m_res);
    }

    // Requests that arrived by `now`: the router's (m_src) or the trace's from `next` on.
    void take_arrivals(double now, size_t& next, std::vector<size_t>& got) {
        if (m_src) {
            m_timer.begin_step(now);
            got.clear();
            m_src->take(now, got);
            for (size_t id : got) arrive(id, now);
        } else {
            while (next < m_t.requests.size() && m_t.requests[next].arrival_s <= now) arrive(next++, now);
        }
    }

    // The step just logged: its priority preemptions and swap copies.
    void note_step(int64_t urgent, double sw) {
        StepLog& sl = m_res.steps.back();
        sl.priority_preempted = urgent;
        m_res.priority_preemptions += urgent;
        sl.swapped_out = m_swap_out, sl.swapped_in = m_swap_in, sl.swap_s = sw;
        m_res.swapped_out += m_swap_out, m_res.swapped_in += m_swap_in, m_res.swap_s += sw;
        m_swap_out = m_swap_in = 0;
    }

    // The oldest outstanding step left the last stage at `exit_s`: its tokens take effect.
    void retire_front(double exit_s, double& now) {
        Outstanding f = std::move(m_flight.front());
        m_flight.pop_front();
        StepLog& l = m_res.steps[f.log];
        if (!std::isfinite(exit_s) || !(exit_s > l.begin_s))
            throw SimError(kExitFailure, "serve: the step timer's step left at " + std::to_string(exit_s) + " s");
        l.seconds = exit_s - l.begin_s;
        for (const StepItem& it : f.items) m_busy[it.request] = 0;
        now = std::max(now, exit_s);
        complete(f.items, exit_s, l);
    }

    void arrive(size_t id, double now) {
        const Request& r = m_t.requests[id];
        const int64_t ctx = r.prompt_tokens + r.output_tokens;
        const int64_t keep = static_cast<int64_t>(std::ceil(m_o.watermark * static_cast<double>(m_pool.blocks())));
        std::string why;
        if (m_o.max_model_len > 0 && ctx > m_o.max_model_len)
            why = "prompt + output " + std::to_string(ctx) + " tokens exceed max_model_len " +
                  std::to_string(m_o.max_model_len);
        else if (m_pool.blocks_for(ctx) > m_pool.blocks() - keep)
            why = "needs " + std::to_string(m_pool.blocks_for(ctx)) + " KV blocks, the pool has " +
                  std::to_string(m_pool.blocks() - keep) + " beyond its watermark";
        else if (m_o.policy == Policy::Continuous && !m_o.chunked_prefill &&
                 r.prompt_tokens > m_o.max_num_batched_tokens)
            why = "prompt of " + std::to_string(r.prompt_tokens) + " tokens exceeds max_num_batched_tokens " +
                  std::to_string(m_o.max_num_batched_tokens) + " without chunked prefill";
        if (const RequestResult* c = m_src ? m_src->carried(id) : nullptr) {
            m_res.requests[id] = *c;
            m_seq[id].generated = 1;
            m_seq[id].moved = r.prompt_tokens;
        }
        if (!why.empty()) {
            m_res.requests[id].rejected = why;
            m_res.requests[id].finish_s = now;
            return;
        }
        enqueue(id, false);
    }

    // A request's priority as the scheduler sees it: all equal under fcfs.
    int64_t prio(size_t id) const { return m_o.priority ? m_t.requests[id].priority : 0; }

    // Waiting order: priority (fcfs: all equal), then arrival; a preempted request goes before
    // the others of its priority (it resumes first).
    void enqueue(size_t id, bool front) {
        const int64_t p = prio(id);
        auto it = std::find_if(m_waiting.begin(), m_waiting.end(), [&](size_t w) {
            const int64_t q = prio(w);
            return front ? q >= p : q > p;
        });
        m_waiting.insert(it, id);
    }

    // Whether the waiting request could be admitted now: a sequence slot, and free KV blocks
    // beyond the watermark for its first piece (its prefix-cache hits not counted).
    bool admissible(size_t id) const {
        if (static_cast<int64_t>(m_running.size()) >= m_o.max_num_seqs) return false;
        const SchedSeq& s = m_seq[id];
        const int64_t carried = std::max(s.moved, s.swapped);
        int64_t n = std::min(s.num_tokens() - carried, m_o.max_num_batched_tokens);
        if (m_o.long_prefill_token_threshold > 0) n = std::min(n, m_o.long_prefill_token_threshold);
        const int64_t keep =
            static_cast<int64_t>(std::ceil(m_o.watermark * static_cast<double>(m_pool.blocks())));
        return m_pool.free_blocks() - m_pool.blocks_for(carried + n) >= keep;
    }

    // Priority preemption before a step: while the most urgent waiting request cannot be
    // admitted and a running one is less urgent, the least urgent running one is preempted.
    int64_t preempt_for_priority() {
        int64_t n = 0;
        while (!m_waiting.empty() && !m_running.empty()) {
            const size_t w = m_waiting.front(), v = victim(0);
            if (v == kNone || prio(m_running[v]) <= prio(w) || admissible(w)) break;
            preempt(v);
            ++n;
        }
        return n;
    }

    bool is_decode(const SchedSeq& s, int64_t tokens) const {
        return s.generated >= 1 && tokens == 1 && s.computed == s.num_tokens() - 1;
    }
    StepItem item(size_t id, int64_t tokens) const {
        const SchedSeq& s = m_seq[id];
        return StepItem{id, tokens, s.computed, !is_decode(s, tokens), m_pool.held(id)};
    }

    // The running sequence to preempt among running[from..]: the largest priority value, the
    // latest of equals (the tail under fcfs, as vLLM's).
    // Requests in an outstanding step are not candidates (kNone: none is).
    size_t victim(size_t from) const {
        size_t v = kNone;
        for (size_t k = m_running.size(); k-- > from;) {
            if (m_busy[m_running[k]]) continue;
            if (v == kNone || prio(m_running[k]) > prio(m_running[v])) v = k;
        }
        return v;
    }

    void preempt(size_t pos) {
        const size_t id = m_running[pos];
        m_running.erase(m_running.begin() + static_cast<std::ptrdiff_t>(pos));
        m_pool.release(id);
        if (m_o.swap && m_seq[id].computed > 0) {
            m_seq[id].swapped = m_seq[id].computed;
            m_swap_out += m_seq[id].computed;
        }
        m_seq[id].computed = 0;
        m_seq[id].moved = 0;  // recomputed here (or swapped back)
        ++m_res.requests[id].preemptions;
        ++m_res.preemptions;
        enqueue(id, true);
    }

    std::vector<StepItem> schedule_continuous(double now, int64_t& preempted) {
        std::vector<StepItem> items;
        int64_t budget = m_o.max_num_batched_tokens;
        const int64_t thr = m_o.long_prefill_token_threshold;
        bool deferred = false;
        for (size_t i = 0; i < m_running.size() && budget > 0;) {
            const size_t id = m_running[i];
            if (m_busy[id]) {  // its step is in flight
                ++i;
                continue;
            }
            SchedSeq& s = m_seq[id];
            int64_t n = s.num_tokens() - s.computed;
            if (thr > 0) n = std::min(n, thr);
            n = std::min(n, budget);
            bool self = false;
            while (!m_pool.grow(id, s.computed + n, false)) {
                // fcfs: the tail; priority: the least urgent of all, one already in this step's
                // batch included (its piece is taken out again and its tokens returned).
                const size_t v = victim(m_o.priority ? 0 : i);
                // Only itself left to preempt while steps are in flight: it waits for them.
                if (v == kNone || (m_running[v] == id && !m_flight.empty())) {
                    deferred = true;
                    break;
                }
                self = m_running[v] == id;
                if (v < i) {
                    const size_t victim_id = m_running[v];
                    auto in = std::find_if(items.begin(), items.end(),
                                           [&](const StepItem& x) { return x.request == victim_id; });
                    if (in != items.end()) {
                        budget += in->tokens;
                        items.erase(in);
                    }
                    --i;
                }
                preempt(v);
                ++preempted;
                if (self) break;
            }
            if (self || deferred) break;
            items.push_back(item(id, n));
            budget -= n;
            ++i;
        }
        if (preempted || deferred) return items;  // no admission in a step that preempted (or waits)
        while (!m_waiting.empty() && budget > 0 && static_cast<int64_t>(m_running.size()) < m_o.max_num_seqs) {
            const size_t id = m_waiting.front();
            SchedSeq& s = m_seq[id];
            const Request& r = *s.r;
            // The hit: whole cached blocks of its prefix, leaving at least the last token to compute.
            const int64_t most = std::min(r.prefix_tokens, s.num_tokens() - 1) / m_pool.block_size();
            const int64_t prefix = m_pool.take_prefix(id, r.prefix_id, most) * m_pool.block_size();
            // A moved prompt's KV is here already; a swapped sequence's comes back from host memory.
            const int64_t carried = std::max(s.moved, s.swapped);
            const int64_t hit = std::max(prefix, carried);
            int64_t n = s.num_tokens() - hit;
            if (thr > 0) n = std::min(n, thr);
            if ((!m_o.chunked_prefill && n > budget) || !m_pool.grow(id, hit + std::min(n, budget), true)) {
                m_pool.release(id);
                break;
            }
            n = std::min(n, budget);
            s.computed = hit;
            RequestResult& x = m_res.requests[id];
            if (carried == 0) x.prefix_hit_tokens += hit;
            m_swap_in += s.swapped;
            s.swapped = 0;
            if (x.scheduled_s < 0) x.scheduled_s = now;
            m_waiting.erase(m_waiting.begin());
            m_running.push_back(id);
            items.push_back(item(id, n));
            budget -= n;
        }
        return items;
    }

    std::vector<StepItem> schedule_batch(double now, double& wake) {
        if (m_running.empty() && !m_waiting.empty()) {
            double first = kNever;  // the earliest waiting arrival (the queue's front may be more urgent)
            for (size_t id : m_waiting) first = std::min(first, m_t.requests[id].arrival_s);
            const double limit = first + (m_o.policy == Policy::Static ? m_o.timeout_s : m_o.window_s);
            if (static_cast<int64_t>(m_waiting.size()) < m_o.max_batch && now < limit) {
                wake = limit;
                return {};
            }
            // The batch: waiting requests in order, each with its whole context reserved.
            for (size_t k = 0; k < m_waiting.size() && static_cast<int64_t>(m_running.size()) < m_o.max_batch;) {
                const size_t id = m_waiting[k];
                const Request& r = m_t.requests[id];
                if (!m_pool.grow(id, r.prompt_tokens + r.output_tokens, true)) break;
                m_res.requests[id].scheduled_s = now;
                m_running.push_back(id);
                m_waiting.erase(m_waiting.begin() + static_cast<std::ptrdiff_t>(k));
            }
        }
        std::vector<StepItem> items;
        for (size_t id : m_running)
            if (!m_busy[id]) items.push_back(item(id, m_seq[id].num_tokens() - m_seq[id].computed));
        return items;
    }

    void complete(const std::vector<StepItem>& items, double now, StepLog& log) {
        int64_t& out = log.tokens_out;
        for (const StepItem& it : items) {
            SchedSeq& s = m_seq[it.request];
            const Request& r = *s.r;
            s.computed += it.tokens;
            m_pool.name_prefix(it.request, r.prefix_id, r.prefix_tokens, s.computed);
            if (s.computed < s.num_tokens()) continue;
            RequestResult& x = m_res.requests[it.request];
            ++out;
            if (++s.generated == 1) {
                x.first_token_s = now;
                if (m_handoff && s.generated < r.output_tokens) {
                    x.last_token_s = now;
                    m_handoff->prefilled(it.request, now, x, m_pool.held(it.request));
                    m_pool.release(it.request);
                    m_running.erase(std::find(m_running.begin(), m_running.end(), it.request));
                    continue;
                }
            } else {
                m_res.itl_s.push_back(now - x.last_token_s);
                x.max_itl_s = std::max(x.max_itl_s, now - x.last_token_s);
            }
            x.last_token_s = now;
            if (s.generated < r.output_tokens) continue;
            x.finish_s = now;
            m_pool.release(it.request);
            m_running.erase(std::find(m_running.begin(), m_running.end(), it.request));
        }
    }

    void log_step(double now, double dt, const std::vector<StepItem>& items, int64_t preempted) {
        StepLog l;
        l.begin_s = now, l.seconds = dt, l.preempted = preempted;
        l.sequences = static_cast<int64_t>(items.size());
        for (const StepItem& it : items) (it.prefill ? l.prefill_tokens : l.decode_tokens) += it.tokens;
        l.waiting = static_cast<int64_t>(m_waiting.size());
        l.kv_used_blocks = m_pool.used_blocks();
        m_res.steps.push_back(l);
    }
};

Scheduler::Scheduler(const RequestTrace& trace, const SchedulerOptions& o, IStepTimer& timer, IArrivals* arrivals,
                     IHandoff* handoff)
    : m_loop(std::make_unique<SchedulerLoop>(trace, o, timer, arrivals, handoff)) {}
Scheduler::~Scheduler() = default;
ServeResult Scheduler::run() { return m_loop->run(); }
int64_t Scheduler::outstanding_tokens() const { return m_loop->outstanding_tokens(); }

ServeResult simulate(const RequestTrace& trace, const SchedulerOptions& o, IStepTimer& timer) {
    return SchedulerLoop(trace, o, timer, nullptr, nullptr).run();
}

}  // namespace sfumato::serve
