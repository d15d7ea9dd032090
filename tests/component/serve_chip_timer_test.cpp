// runtime/serve/chip_timer.h on the simulated chip (timing mode, the tiny model): a step mixing a
// chunked-prefill piece with decodes runs as the model's kernels in the blocks the scheduler
// gave each sequence; two steps of different splits and lengths in one shape bucket share one
// plan; another bucket compiles another; the timer idles the host so that the simulated clock
// is the scheduler's at each step's start; and the whole scheduler loop runs on it.
#include <catch2/catch.hpp>

#include "runtime/serve/chip_timer.h"
#include "runtime/serve/metrics.h"
#include "sim/sc_time_util.h"
#include "tests/sim_harness.h"

using namespace sfumato;
using namespace sfumato::serve;

namespace {

llm::RunOptions serve_like(int64_t blocks) {
    llm::RunOptions o;
    o.batch = 1;
    o.prefill = 128;
    o.decode = 512 - 129;  // RoPE rows: the tiny model's 512 positions
    o.block_size = 64;
    o.kv_blocks = blocks;
    o.keep_step_ops = false;
    return o;
}

}  // namespace

TEST_CASE("serve: the chip timer runs ragged steps and shares a plan within a shape bucket", "[serve]") {
    test::Harness h({}, "tiny", false);
    const llm::ModelConfig c = llm::load_model_config("tiny", {std::string(SFUMATO_SOURCE_DIR) + "/configs/llm"});
    const int64_t blocks = 17, scratch = blocks - 1;
    llm::LlmRun run(c, serve_like(blocks), h.chip().info());
    size_t after_a = 0, after_b = 0, after_c = 0;
    double ta = 0, tb = 0, tc = 0;
    uint64_t begin_b = 0, origin = 0;
    REQUIRE(h.run_host([&] {
        rt::Runtime rt(h.chip(), h.host_params(), h.trace(), &h.root());
        run.start(rt);
        ChipStepTimer timer(run, rt, scratch, true);
        origin = timer.origin_ps();
        // A: a 37-token prompt piece (padded to 40) and a decode after 70 cached tokens.
        timer.begin_step(0);
        ta = timer.step_seconds({{0, 37, 0, true, {0}}, {1, 1, 70, false, {1, 2}}});
        after_a = run.plans_compiled();
        // B: another split of the same shape: a 35-token piece after 64 cached ones, one decode.
        const double sched_b = ta + 1e-3;  // an idle millisecond (waiting for an arrival)
        timer.begin_step(sched_b);
        begin_b = now_tick().v;
        tb = timer.step_seconds({{3, 35, 64, true, {3, 4}}, {1, 1, 71, false, {1, 2}}});
        after_b = run.plans_compiled();
        // C: decodes only (another bucket).
        tc = timer.step_seconds({{1, 1, 72, false, {1, 2}}, {3, 1, 99, false, {3, 4}}, {5, 1, 5, false, {5}}});
        after_c = run.plans_compiled();
        CHECK(timer.counters().steps == 3);
        CHECK(timer.counters().padded_tokens == 3 + 5 + 1);
        CHECK(timer.counters().padded_sequences == 1 + 1 + 1);
    }));
    CHECK(ta > 0);
    CHECK(tb > 0);
    CHECK(tc > 0);
    CHECK(after_b == after_a);  // same bucket: no compilation
    CHECK(after_c > after_b);
    CHECK(run.plans_recompiled() == 0);
    // The host idled until the simulated clock reached the scheduler's time (ns resolution).
    const double sched_b_ps = (ta + 1e-3) * 1e12;
    CHECK(static_cast<double>(begin_b - origin) >= sched_b_ps - 1000);
    CHECK(static_cast<double>(begin_b - origin) <= sched_b_ps + 1000);
    // Each step's record is its time from the first input copy to the read-back.
    REQUIRE(run.steps().size() == 3);
    CHECK(static_cast<double>(run.steps()[1].ps) * 1e-12 == Approx(tb));
    CHECK(run.steps()[1].begin_ps >= begin_b);
}

TEST_CASE("serve: the scheduler loop on the chip timer serves every request", "[serve]") {
    test::Harness h({}, "tiny", false);
    const llm::ModelConfig c = llm::load_model_config("tiny", {std::string(SFUMATO_SOURCE_DIR) + "/configs/llm"});
    const int64_t blocks = 33;
    llm::LlmRun run(c, serve_like(blocks), h.chip().info());
    const RequestTrace trace = generate_requests(parse_gen_spec("n=6,rate=2000,prompt=uniform:20:90,output=4,seed=3"));
    SchedulerOptions o;
    o.kv_blocks = blocks - 1;
    o.block_size = 64;
    o.max_num_batched_tokens = 128;
    o.long_prefill_token_threshold = 64;
    ServeResult r;
    REQUIRE(h.run_host([&] {
        rt::Runtime rt(h.chip(), h.host_params(), h.trace(), &h.root());
        run.start(rt);
        ChipStepTimer timer(run, rt, blocks - 1, true);
        r = simulate(trace, o, timer);
        // The loop's clock is the chip's: the last step ended at the simulated time now.
        CHECK(static_cast<double>(now_tick().v - timer.origin_ps()) * 1e-12 == Approx(r.end_s).epsilon(1e-6));
    }));
    const ServeMetrics m = summarize(r);
    CHECK(m.served == trace.requests.size());
    CHECK(run.steps().size() == r.steps.size());
    for (const RequestResult& x : r.requests) CHECK(x.first_token_s > x.arrival_s);
}
