// runtime/serve: the KV block pool (prefix naming, LRU eviction, watermark) and the scheduler's
// policies over a simple step-time model. The model stands for the chip's timer (which runs each
// step's kernels): a fixed cost per step (reading the weights once), a cost per new token
// (prefill compute) and per context token of each sequence (its KV read). The properties checked
// are the policies' own: every request finishes or is rejected with a reason, batching raises
// throughput, iteration-level batching cuts queueing, chunked prefill shields decodes from long
// prompts, prefix hits skip computation, a short KV pool preempts and still finishes everything.
#include <catch2/catch.hpp>
#include <cmath>

#include "runtime/serve/kv_blocks.h"
#include "runtime/serve/metrics.h"
#include "runtime/serve/scheduler.h"
#include "sim/error.h"

using namespace sfumato;
using namespace sfumato::serve;

namespace {

struct LinearTimer : IStepTimer {
    double per_step = 0.010, per_token = 1e-4, per_context = 1e-7;
    size_t calls = 0;
    double step_seconds(const std::vector<StepItem>& batch) override {
        ++calls;
        double s = per_step;
        for (const StepItem& it : batch)
            s += per_token * static_cast<double>(it.tokens) + per_context * static_cast<double>(it.context);
        return s;
    }
};

RequestTrace gen(const std::string& spec) { return generate_requests(parse_gen_spec(spec)); }

ServeResult run_policy(const RequestTrace& t, const SchedulerOptions& o) {
    LinearTimer timer;
    return simulate(t, o, timer);
}

void require_all_served(const ServeResult& r) {
    for (const RequestResult& x : r.requests) {
        INFO(x.id << " " << x.rejected);
        REQUIRE(x.rejected.empty());
        REQUIRE(x.first_token_s >= x.arrival_s);
        REQUIRE(x.finish_s >= x.first_token_s);
    }
}

}  // namespace

TEST_CASE("serve kv blocks: prefix blocks are named, shared, and evicted least recently freed first", "[serve]") {
    KvBlockPool p(8, 16, true);
    REQUIRE(p.grow(0, 40, true));  // 3 blocks
    CHECK(p.used_blocks() == 3);
    p.name_prefix(0, "sys", 40, 40);  // 2 full blocks within the prefix
    CHECK(p.take_prefix(1, "sys", 8) == 2);  // shared while 0 still holds them
    CHECK(p.used_blocks() == 3);
    REQUIRE(p.grow(1, 50, true));  // 2 shared + 2 new
    CHECK(p.used_blocks() == 5);
    p.release(0);
    p.release(1);
    CHECK(p.free_blocks() == 8);
    CHECK(p.take_prefix(2, "sys", 8) == 2);  // still cached after both finished
    p.release(2);
    // Taking all 8 blocks evicts the cached ones.
    REQUIRE(p.grow(3, 128, false));
    CHECK_FALSE(p.grow(4, 1, false));
    p.release(3);
    CHECK(p.take_prefix(5, "sys", 8) == 0);
    // Watermark: admission keeps ceil(0.25 * 8) = 2 blocks free, growth may use them.
    KvBlockPool w(8, 16, false, 0.25);
    CHECK_FALSE(w.grow(0, 16 * 7, true));
    CHECK(w.grow(0, 16 * 6, true));
    CHECK(w.grow(0, 16 * 8, false));
    CHECK_THROWS_AS(KvBlockPool(0, 16, false), InputError);
    CHECK_THROWS_AS(KvBlockPool(8, 16, false, 1.0), InputError);
}

TEST_CASE("serve scheduler: every request finishes, the same inputs give the same results", "[serve]") {
    const RequestTrace t = gen("n=200,rate=20,seed=3,prompt=uniform:32:512,output=uniform:1:64");
    SchedulerOptions o;
    o.kv_blocks = 256, o.block_size = 16;
    for (Policy p : {Policy::Continuous, Policy::Static, Policy::Dynamic}) {
        INFO(policy_name(p));
        o.policy = p;
        const ServeResult a = run_policy(t, o), b = run_policy(t, o);
        require_all_served(a);
        REQUIRE(a.steps.size() == b.steps.size());
        for (size_t i = 0; i < a.requests.size(); ++i) REQUIRE(a.requests[i].finish_s == b.requests[i].finish_s);
        // Every output token comes out of exactly one step: a prompt's last chunk (or a
        // preempted sequence's recomputation) gives one, each decode one.
        int64_t out = 0, expect = 0, decode = 0;
        for (const StepLog& s : a.steps) out += s.tokens_out, decode += s.decode_tokens;
        for (const Request& r : t.requests) expect += r.output_tokens;
        CHECK(out == expect);
        CHECK(decode <= expect - static_cast<int64_t>(t.requests.size()));
        if (a.preemptions == 0) CHECK(decode == expect - static_cast<int64_t>(t.requests.size()));
    }
    CHECK(parse_policy("dynamic") == Policy::Dynamic);
    CHECK_THROWS_WITH(parse_policy("fifo"), "unknown scheduling policy 'fifo' (known: continuous, static, dynamic)");
}

TEST_CASE("serve scheduler: continuous batching beats static on throughput and p99 TTFT under load", "[serve]") {
    // Offered load above what one request at a time can serve.
    const RequestTrace t = gen("n=300,rate=30,seed=5,prompt=uniform:64:256,output=uniform:16:128");
    SchedulerOptions c;
    c.kv_blocks = 2048, c.block_size = 16, c.max_num_seqs = 32;
    SchedulerOptions s = c;
    s.policy = Policy::Static, s.max_batch = 32, s.timeout_s = 0.5;
    const ServeMetrics mc = summarize(run_policy(t, c)), ms = summarize(run_policy(t, s));
    INFO("continuous " << mc.output_tokens_per_s << " tok/s, p99 TTFT " << mc.ttft.p99 << " s; static "
                       << ms.output_tokens_per_s << " tok/s, p99 TTFT " << ms.ttft.p99 << " s");
    CHECK(mc.served == 300);
    CHECK(mc.output_tokens_per_s > ms.output_tokens_per_s);
    CHECK(mc.ttft.p99 < ms.ttft.p99);
}

TEST_CASE("serve scheduler: dynamic batching beats one request at a time on throughput", "[serve]") {
    const RequestTrace t = gen("n=120,rate=20,seed=6,prompt=128,output=uniform:8:64");
    SchedulerOptions one;
    one.policy = Policy::Static, one.max_batch = 1, one.timeout_s = 0;
    one.kv_blocks = 1024, one.block_size = 16;
    SchedulerOptions dyn = one;
    dyn.policy = Policy::Dynamic, dyn.max_batch = 16, dyn.window_s = 0.05;
    const ServeResult r1 = run_policy(t, one), rd = run_policy(t, dyn);
    const ServeMetrics m1 = summarize(r1), md = summarize(rd);
    CHECK(m1.mean_batch == 1.0);
    CHECK(md.mean_batch > 1.0);
    CHECK(md.requests_per_s > m1.requests_per_s);
    // A dynamic batch closes at the window or when full: no request of a batch was scheduled
    // later than the window after the batch's first arrival unless the previous batch still ran.
    for (const RequestResult& x : rd.requests) CHECK(x.scheduled_s >= x.arrival_s);
}

TEST_CASE("serve scheduler: chunked prefill shortens the decodes' longest stalls", "[serve]") {
    // Long prompts arriving among running decodes: unchunked, a 2048-token prefill stalls every
    // running decode for its whole step; in chunks of 256 the stall spreads over steps of at most
    // 512 tokens each. (With a time linear in tokens the total stall is the same, so the
    // mean TPOT hardly moves; on the chip a chunk rides under a memory-bound decode step.)
    SchedulerOptions whole;
    whole.kv_blocks = 4096, whole.block_size = 16, whole.max_num_batched_tokens = 4096;
    SchedulerOptions chunked = whole;
    chunked.long_prefill_token_threshold = 256, chunked.max_num_batched_tokens = 512;
    const RequestTrace tt =
        generate_requests(parse_gen_spec("n=60,rate=8,seed=7,prompt=hist:lengths_hist.csv,output=64",
                                         std::string(SFUMATO_SOURCE_DIR) + "/tests/data/serve"));
    const ServeMetrics mw = summarize(run_policy(tt, whole)), mc = summarize(run_policy(tt, chunked));
    INFO("p99 ITL whole " << mw.itl.p99 << " s, chunked " << mc.itl.p99 << " s; max " << mw.itl.max << " / "
                          << mc.itl.max);
    LinearTimer lt;
    // The longest gap: a step of 2048 prompt tokens (plus decodes) unchunked; chunked, no step
    // holds more than 512 tokens, so no gap reaches the cost of 2048 (the context term stays
    // below 65536 KV tokens x per_context = 6.6 ms).
    CHECK(mw.itl.max >= lt.per_step + 2048 * lt.per_token);
    CHECK(mc.itl.max < lt.per_step + 2048 * lt.per_token);
    CHECK(mc.itl.p99 < mw.itl.p99);
}

TEST_CASE("serve scheduler: prefix caching skips the shared prefix and lowers TTFT", "[serve]") {
    const RequestTrace t = gen("n=100,rate=10,seed=8,prompt=1024,output=16,prefix_groups=2,prefix_tokens=768");
    SchedulerOptions on;
    on.kv_blocks = 2048, on.block_size = 16;
    SchedulerOptions off = on;
    off.prefix_caching = false;
    const ServeResult ron = run_policy(t, on), roff = run_policy(t, off);
    int64_t hits = 0, prefill_on = 0, prefill_off = 0;
    size_t hit_requests = 0;
    for (const RequestResult& x : ron.requests) {
        hits += x.prefix_hit_tokens;
        // The prefix is 48 whole blocks, computed in one step: a request finds all or none.
        CHECK((x.prefix_hit_tokens == 0 || x.prefix_hit_tokens == 768));
        hit_requests += x.prefix_hit_tokens > 0;
    }
    for (const StepLog& s : ron.steps) prefill_on += s.prefill_tokens;
    for (const StepLog& s : roff.steps) prefill_off += s.prefill_tokens;
    // Each group's first request computes the prefix; most later ones find it.
    CHECK(hit_requests <= 98);
    CHECK(hit_requests * 2 > 100);
    CHECK(prefill_off - prefill_on == hits);
    CHECK(summarize(ron).ttft.mean < summarize(roff).ttft.mean);
}

TEST_CASE("serve scheduler: a KV pool too small for the load preempts and still finishes every request",
          "[serve]") {
    const RequestTrace t = gen("n=80,rate=40,seed=9,prompt=uniform:64:256,output=uniform:64:256");
    SchedulerOptions o;
    o.block_size = 16, o.kv_blocks = 64, o.watermark = 0;  // 1024 tokens for up to 512 per request
    const ServeResult r = run_policy(t, o);
    require_all_served(r);
    CHECK(r.preemptions > 0);
    int64_t most = 0;
    for (const StepLog& s : r.steps) most = std::max(most, s.kv_used_blocks);
    CHECK(most <= 64);
}

TEST_CASE("serve scheduler: impossible requests are rejected with the reason, the others served", "[serve]") {
    RequestTrace t = parse_requests(
        "arrival_s,prompt_tokens,output_tokens,priority\n0,100,10,0\n0.001,5000,10,0\n0.002,100,10,0\n", "t.csv");
    SchedulerOptions o;
    o.block_size = 16, o.kv_blocks = 64, o.watermark = 0;
    const ServeResult r = run_policy(t, o);
    CHECK(r.requests[0].rejected.empty());
    CHECK(r.requests[1].rejected == "needs 314 KV blocks, the pool has 64 beyond its watermark");
    CHECK(r.requests[2].rejected.empty());
    CHECK(r.requests[2].finish_s > 0);
    const ServeMetrics m = summarize(r);
    CHECK(m.served == 2);
    CHECK(m.rejected == 1);
    o.max_model_len = 100;
    CHECK(run_policy(t, o).requests[0].rejected == "prompt + output 110 tokens exceed max_model_len 100");
}

TEST_CASE("serve scheduler: a lower priority value is served first under load", "[serve]") {
    // 40 requests at once, every fourth urgent; batches of 4 at a time.
    std::string csv = "arrival_s,prompt_tokens,output_tokens,priority\n";
    for (int i = 0; i < 40; ++i) csv += "0," + std::to_string(64) + ",32," + (i % 4 == 3 ? "0" : "1") + "\n";
    const RequestTrace t = parse_requests(csv, "p.csv");
    SchedulerOptions o;
    o.kv_blocks = 1024, o.block_size = 16, o.max_num_seqs = 4;
    // fcfs (the default) ignores the priorities: requests start in arrival order.
    const ServeResult fcfs = run_policy(t, o);
    for (size_t i = 1; i < t.requests.size(); ++i) CHECK(fcfs.requests[i].scheduled_s >= fcfs.requests[i - 1].scheduled_s);
    CHECK(fcfs.requests[3].scheduled_s < fcfs.requests[39].scheduled_s);  // an urgent one waits for earlier ones
    o.priority = true;
    const ServeResult r = run_policy(t, o);
    double urgent = 0, other = 0;
    for (size_t i = 0; i < t.requests.size(); ++i)
        (t.requests[i].priority == 0 ? urgent : other) += r.requests[i].ttft();
    // The 10 urgent requests take the first three batches; the 30 others wait for them.
    double latest_urgent = 0;
    for (size_t i = 0; i < t.requests.size(); ++i)
        if (t.requests[i].priority == 0) latest_urgent = std::max(latest_urgent, r.requests[i].scheduled_s);
    for (size_t i = 0; i < t.requests.size(); ++i)
        if (t.requests[i].priority == 1) CHECK(r.requests[i].scheduled_s >= latest_urgent);
    CHECK(urgent / 10 < other / 30);

    // Over the static policy too: its first batch of 4 is the first 4 urgent requests (under
    // fcfs the first 4 to arrive, one of them urgent).
    o.policy = Policy::Static, o.max_batch = 4, o.timeout_s = 0;
    for (const bool prio : {true, false}) {
        o.priority = prio;
        const ServeResult b = run_policy(t, o);
        std::vector<size_t> first;
        for (size_t i = 0; i < t.requests.size(); ++i)
            if (b.requests[i].scheduled_s == 0) first.push_back(i);
        CHECK(first == (prio ? std::vector<size_t>{3, 7, 11, 15} : std::vector<size_t>{0, 1, 2, 3}));
    }
}

TEST_CASE("serve scheduler: priority scheduling preempts a less urgent request for an urgent one", "[serve]") {
    // Four requests of priority 1 fill the pool as they decode (16 of 64 blocks each from their
    // 241st token); an urgent one (priority 0) arrives at 0.2 s, after their prompts' step (about
    // 0.1 s) and a few decode steps, and needs 7 blocks.
    std::string csv = "arrival_s,prompt_tokens,output_tokens,priority\n";
    for (int i = 0; i < 4; ++i) csv += "0,240,200,1\n";
    csv += "0.2,100,10,0\n";
    const RequestTrace t = parse_requests(csv, "u.csv");
    SchedulerOptions o;
    o.block_size = 16, o.kv_blocks = 64, o.watermark = 0;
    LinearTimer lt;
    // A step of the four decoding: the longest the urgent request can wait for the next step.
    const double step = lt.per_step + 4 * (lt.per_token + lt.per_context * 440);
    const ServeResult fcfs = run_policy(t, o);
    o.priority = true;
    const ServeResult prio = run_policy(t, o);
    require_all_served(fcfs);
    require_all_served(prio);
    const RequestResult& f = fcfs.requests[4];
    const RequestResult& u = prio.requests[4];
    // fcfs: it waits for a sequence to finish or be preempted (the pool is full).
    CHECK(f.scheduled_s - f.arrival_s > 10 * step);
    CHECK(fcfs.priority_preemptions == 0);
    // priority: it starts at the next step, a less urgent request preempted for it.
    CHECK(u.scheduled_s - u.arrival_s <= step);
    CHECK(prio.priority_preemptions >= 1);
    CHECK(u.preemptions == 0);
    int64_t low = 0;
    for (size_t i = 0; i < 4; ++i) low += prio.requests[i].preemptions;
    CHECK(low >= prio.priority_preemptions);
    CHECK(u.ttft() < f.ttft() / 10);

    // A sequence slot is also a reason: four running with plenty of blocks, max_num_seqs 4.
    o.kv_blocks = 1024, o.max_num_seqs = 4;
    const ServeResult slots = run_policy(t, o);
    require_all_served(slots);
    CHECK(slots.requests[4].scheduled_s - slots.requests[4].arrival_s <= step);
    CHECK(slots.priority_preemptions == 1);
    o.priority = false;
    CHECK(run_policy(t, o).requests[4].scheduled_s - slots.requests[4].arrival_s > 10 * step);
}

TEST_CASE("serve requests: generated priority classes follow their weights", "[serve]") {
    const RequestTrace t = gen("n=4000,rate=10,prompt=8,output=2,seed=3,priorities=1:3:0:4");
    size_t k[4] = {0, 0, 0, 0};
    for (const Request& r : t.requests) {
        REQUIRE(r.priority >= 0);
        REQUIRE(r.priority < 4);
        ++k[r.priority];
    }
    CHECK(k[2] == 0);  // weight 0
    // Each share within 5 standard deviations of its weight / 8 (binomial).
    const double n = 4000, w[4] = {1, 3, 0, 4};
    for (int c = 0; c < 4; ++c) {
        const double p = w[c] / 8, sd = std::sqrt(n * p * (1 - p));
        CHECK(std::abs(static_cast<double>(k[c]) - n * p) <= 5 * sd + 1e-9);
    }
    // The classes have their own stream: the arrivals and lengths are those without them.
    const RequestTrace plain = gen("n=4000,rate=10,prompt=8,output=2,seed=3");
    for (size_t i = 0; i < t.requests.size(); ++i) REQUIRE(t.requests[i].arrival_s == plain.requests[i].arrival_s);
    CHECK_THROWS_AS(gen("n=4,rate=10,prompt=8,output=2,priorities=0:0"), InputError);
    CHECK_THROWS_AS(gen("n=4,rate=10,prompt=8,output=2,priorities=1:x"), InputError);
}

TEST_CASE("serve metrics: nearest-rank percentiles", "[serve]") {
    std::vector<double> v;
    for (int i = 100; i >= 1; --i) v.push_back(i);
    const Percentiles p = percentiles(v);
    CHECK(p.p50 == 50);
    CHECK(p.p90 == 90);
    CHECK(p.p99 == 99);
    CHECK(p.max == 100);
    CHECK(p.mean == 50.5);
}
