// runtime/serve's scheduler with several batches in flight (IStepTimer::batches_in_flight > 1: a
// pipeline-parallel instance, serve.pp_batches_in_flight) over a model pipeline: P stages, each
// taking 1/P of a simple step-time model's step (a fixed cost, a cost per new token and per
// context token), each stage processing the batches in order, a batch entering stage s + 1 when
// stage s finished it. The timer checks what the scheduler must guarantee: no request in two
// outstanding steps, at most K outstanding, steps retired in order; the tests check that every
// request finishes or is rejected, that K = P keeps the stages busy together and raises the
// throughput of a saturated trace over K = 1 (one step through all stages at a time, the
// stages' times added), and that the same inputs give the same results.
#include <catch2/catch.hpp>
#include <deque>
#include <set>

#include "runtime/serve/metrics.h"
#include "runtime/serve/scheduler.h"

using namespace sfumato;
using namespace sfumato::serve;

namespace {

struct PipeTimer : IStepTimer {
    int64_t stages = 2, limit = 2;
    double per_step = 0.010, per_token = 1e-4, per_context = 1e-7;
    double clock = 0;           // the loop's time as the timer last saw it
    std::vector<double> free;   // per stage: when it finishes its last batch
    std::vector<std::pair<double, double>> busy;  // every stage's [start, end) of every batch
    struct Out {
        double exit = 0;
        std::vector<size_t> ids;
    };
    std::deque<Out> out;
    std::set<size_t> in_flight;
    size_t most_out = 0, retired = 0, submitted = 0;
    double last_exit = 0;

    double whole(const std::vector<StepItem>& batch) const {
        double s = per_step;
        for (const StepItem& it : batch)
            s += per_token * static_cast<double>(it.tokens) + per_context * static_cast<double>(it.context);
        return s;
    }
    int64_t batches_in_flight() const override { return limit; }
    void begin_step(double now_s) override { clock = std::max(clock, now_s); }
    // K = 1: the step passes every stage before the next one starts.
    double step_seconds(const std::vector<StepItem>& batch) override {
        const double s = whole(batch);
        busy.push_back({clock, clock + s});
        return s;
    }
    double submit(const std::vector<StepItem>& batch) override {
        if (free.empty()) free.assign(static_cast<size_t>(stages), 0.0);
        Out o;
        for (const StepItem& it : batch) {
            INFO("request " << it.request);
            REQUIRE(in_flight.insert(it.request).second);  // in no other outstanding step
            o.ids.push_back(it.request);
        }
        const double per = whole(batch) / static_cast<double>(stages);
        double t = clock;
        for (double& f : free) {
            const double start = std::max(t, f);
            f = start + per;
            busy.push_back({start, f});
            t = f;
        }
        o.exit = t;
        out.push_back(o);
        ++submitted;
        most_out = std::max(most_out, out.size());
        REQUIRE(static_cast<int64_t>(out.size()) <= limit);
        clock = std::max(clock, free[0]);
        return clock;
    }
    bool retire(double until_s, double& exit_s) override {
        REQUIRE_FALSE(out.empty());
        if (out.front().exit > until_s) {
            clock = std::max(clock, until_s);
            return false;
        }
        exit_s = out.front().exit;
        REQUIRE(exit_s >= last_exit);  // in order
        last_exit = exit_s;
        for (size_t id : out.front().ids) in_flight.erase(id);
        out.pop_front();
        ++retired;
        clock = std::max(clock, exit_s);
        return true;
    }
    // Time during which two stages worked at once (the spans sorted, swept).
    double overlap() const {
        std::vector<std::pair<double, int>> ev;
        for (const auto& [b, e] : busy) ev.insert(ev.end(), {{b, 1}, {e, -1}});
        std::sort(ev.begin(), ev.end());
        double total = 0, from = 0;
        int n = 0;
        for (const auto& [t, d] : ev) {
            if (n >= 2) total += t - from;
            from = t;
            n += d;
        }
        return total;
    }
};

RequestTrace gen(const std::string& spec) { return generate_requests(parse_gen_spec(spec)); }

ServeResult run_pipe(const RequestTrace& t, const SchedulerOptions& o, int64_t limit, PipeTimer& timer) {
    timer.limit = limit;
    ServeResult r = simulate(t, o, timer);
    CHECK(timer.out.empty());
    CHECK(timer.retired == timer.submitted);
    return r;
}

void require_all_finished(const RequestTrace& t, const ServeResult& r) {
    int64_t out = 0, expect = 0;
    for (const StepLog& s : r.steps) out += s.tokens_out;
    for (size_t i = 0; i < t.requests.size(); ++i) {
        const RequestResult& x = r.requests[i];
        INFO(x.id << " " << x.rejected);
        REQUIRE(x.rejected.empty());
        REQUIRE(x.first_token_s > x.arrival_s);
        REQUIRE(x.finish_s >= x.first_token_s);
        expect += t.requests[i].output_tokens;
    }
    CHECK(out == expect);  // every output token from exactly one step
}

}  // namespace

TEST_CASE("serve pipeline: P batches in flight overlap the stages and raise a saturated trace's throughput",
          "[serve]") {
    // Offered load well above what one step through both stages at a time serves.
    const RequestTrace t = gen("n=200,rate=200,seed=7,prompt=uniform:32:256,output=uniform:8:64");
    SchedulerOptions o;
    o.kv_blocks = 4096, o.block_size = 16, o.max_num_seqs = 64, o.max_num_batched_tokens = 1024;
    PipeTimer one, two;
    const ServeResult r1 = run_pipe(t, o, 1, one), r2 = run_pipe(t, o, 2, two);
    require_all_finished(t, r1);
    require_all_finished(t, r2);
    const ServeMetrics m1 = summarize(r1), m2 = summarize(r2);
    INFO("K=1: " << m1.requests_per_s << " req/s, " << r1.steps.size() << " steps; K=2: " << m2.requests_per_s
                 << " req/s, " << r2.steps.size() << " steps");
    // K = 1: the stages never work at once; K = 2: two batches were outstanding, the stages'
    // busy spans overlap, and a step's span (submission to exit) overlaps the next one's.
    CHECK(one.overlap() == 0);
    CHECK(two.most_out == 2);
    CHECK(two.overlap() > 0);
    bool steps_overlap = false;
    for (size_t k = 1; k < r2.steps.size(); ++k)
        steps_overlap = steps_overlap || r2.steps[k].begin_s < r2.steps[k - 1].begin_s + r2.steps[k - 1].seconds;
    CHECK(steps_overlap);
    CHECK(m2.requests_per_s > m1.requests_per_s);
    CHECK(m2.output_tokens_per_s > m1.output_tokens_per_s);
    // Two stages at most double it (each does half a step's work per batch).
    CHECK(m2.output_tokens_per_s <= 2 * m1.output_tokens_per_s * 1.05);
    // The same inputs again: identical results.
    PipeTimer again;
    const ServeResult r3 = run_pipe(t, o, 2, again);
    REQUIRE(r3.steps.size() == r2.steps.size());
    for (size_t i = 0; i < t.requests.size(); ++i) {
        CHECK(r3.requests[i].first_token_s == r2.requests[i].first_token_s);
        CHECK(r3.requests[i].finish_s == r2.requests[i].finish_s);
    }
}

TEST_CASE("serve pipeline: with batches in flight every request finishes under every policy, KV pressure and "
          "priorities",
          "[serve]") {
    const RequestTrace t = gen("n=80,rate=40,seed=9,prompt=uniform:64:256,output=uniform:64:256");
    struct Case {
        const char* name;
        SchedulerOptions o;
    };
    std::vector<Case> cases;
    SchedulerOptions base;
    base.block_size = 16, base.kv_blocks = 1024;
    cases.push_back({"continuous", base});
    SchedulerOptions tight = base;
    tight.kv_blocks = 64, tight.watermark = 0;  // 1024 tokens for up to 512 per request: preempts
    cases.push_back({"continuous, short KV pool", tight});
    SchedulerOptions swap = tight;
    swap.swap = true;
    cases.push_back({"continuous, short KV pool, swap", swap});
    SchedulerOptions chunk = base;
    chunk.long_prefill_token_threshold = 64, chunk.max_num_seqs = 8;
    cases.push_back({"continuous, chunked prefill", chunk});
    SchedulerOptions st = base;
    st.policy = Policy::Static, st.max_batch = 8, st.timeout_s = 0.05;
    cases.push_back({"static", st});
    SchedulerOptions dy = base;
    dy.policy = Policy::Dynamic, dy.max_batch = 8, dy.window_s = 0.02;
    cases.push_back({"dynamic", dy});
    for (const Case& c : cases)
        for (int64_t stages : {2, 4}) {
            INFO(c.name << ", " << stages << " stages");
            PipeTimer p;
            p.stages = stages;
            const ServeResult r = run_pipe(t, c.o, stages, p);
            require_all_finished(t, r);
            int64_t most = 0;
            for (const StepLog& s : r.steps) most = std::max(most, s.kv_used_blocks);
            CHECK(most <= c.o.kv_blocks);
            if (c.o.kv_blocks == 64) CHECK(r.preemptions > 0);
            if (c.o.swap) CHECK(r.swapped_in == r.swapped_out);
            // A static or dynamic batch runs to completion: one batch in flight at a time.
            if (c.o.policy != Policy::Continuous) CHECK(p.most_out == 1);
            else CHECK(static_cast<int64_t>(p.most_out) == stages);
        }
    // Priorities: an urgent request arriving while the pool is full preempts a less urgent one
    // that is in no outstanding step, and everything finishes.
    std::string csv = "arrival_s,prompt_tokens,output_tokens,priority\n";
    for (int i = 0; i < 8; ++i) csv += "0,240,200,1\n";
    csv += "0.2,100,10,0\n";
    const RequestTrace u = parse_requests(csv, "u.csv");
    SchedulerOptions pr = tight;
    pr.priority = true;
    PipeTimer p;
    const ServeResult r = run_pipe(u, pr, 2, p);
    require_all_finished(u, r);
    CHECK(r.priority_preemptions > 0);
    CHECK(r.requests[8].finish_s < r.requests[0].finish_s);
}
