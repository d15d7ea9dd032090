// runtime/llm end to end on the simulated chip (functional mode): the tiny model's greedy tokens
// equal the host fp32 reference's for 32 decode steps, up to near-ties within fp16 precision
// (the paged KV cache, RoPE positions, the fused projections and the LM head on each sequence's
// last token all take part), with two sequences in the batch and a block size (64, the smallest
// PagedAttention takes) that the sequences outgrow while decoding, so that they span two blocks;
// and the same with the prefill split by a token budget into groups and chunks.
#include <catch2/catch.hpp>
#include <cmath>

#include "runtime/llm/engine.h"
#include "runtime/llm/reference.h"
#include "tests/sim_harness.h"

using namespace sfumato;
using namespace sfumato::llm;

namespace {

void check_against_reference(const ModelConfig& c, const ModelWeights& w, const RunOptions& o, const LlmRun& run) {
    // The reference follows the device's tokens (teacher forcing) and each device token must be
    // the reference's greedy choice, or tie with it within the device's precision: the two
    // compute in different orders and the device rounds activations to fp16, so logits closer
    // than a few fp16 units in the last place may rank either way.
    Reference ref(c, w, o.prefill + o.decode + 1);
    REQUIRE(run.tokens().size() == o.prompts.size());
    int near_ties = 0;
    for (int s = 0; s < static_cast<int>(o.prompts.size()); ++s) {
        const std::vector<int64_t>& got = run.tokens()[static_cast<size_t>(s)];
        REQUIRE(got.size() == static_cast<size_t>(o.decode + 1));
        std::vector<float> logits = ref.step(s, o.prompts[static_cast<size_t>(s)]);
        for (size_t i = 0; i < got.size(); ++i) {
            const int64_t best = argmax(logits);
            const float top = logits[static_cast<size_t>(best)], mine = logits[static_cast<size_t>(got[i])];
            const float ulp = std::ldexp(1.0f, std::ilogb(std::max(std::fabs(top), 1e-3f)) - 10);  // fp16
            INFO("sequence " << s << " token " << i << ": device " << got[i] << " (logit " << mine << "), reference "
                             << best << " (logit " << top << ")");
            if (got[i] != best) {
                ++near_ties;
                CHECK(top - mine <= 4 * ulp);
            }
            if (i + 1 < got.size()) logits = ref.step(s, {got[i]});
        }
    }
    // Ties are rare: almost every token is the reference's own choice.
    CHECK(near_ties <= 2);
}

}  // namespace

TEST_CASE("llm: the tiny model generates the reference's greedy tokens for 32 steps", "[llm][functional]") {
    test::Harness h;
    const ModelConfig c = load_model_config("tiny", {std::string(SFUMATO_SOURCE_DIR) + "/configs/llm"});
    const ModelWeights w = random_weights(c, 11);
    RunOptions o;
    o.prefill = 40;
    o.decode = 32;
    o.batch = 2;
    o.block_size = 64;
    o.weights = &w;
    o.prompts.assign(2, {});
    for (int64_t i = 0; i < o.prefill; ++i) {
        o.prompts[0].push_back((i * 37 + 5) % c.vocab_size);
        o.prompts[1].push_back((i * i + 3 * i + 1) % c.vocab_size);
    }
    LlmRun run(c, o, h.chip().info());
    REQUIRE(h.run_host([&] {
        rt::Runtime rt(h.chip(), h.host_params(), h.trace(), &h.root());
        run.run(rt);
    }));
    check_against_reference(c, w, o, run);
    // One prefill plan and the decode plans of the block-table widths the lengths pass through.
    CHECK(run.plans_compiled() >= 2);
    CHECK(run.steps().size() == 33);
}

TEST_CASE("llm: prefill in groups and chunks (a token budget per step) generates the reference's tokens",
          "[llm][functional]") {
    test::Harness h;
    const ModelConfig c = load_model_config("tiny", {std::string(SFUMATO_SOURCE_DIR) + "/configs/llm"});
    const ModelWeights w = random_weights(c, 5);
    RunOptions o;
    o.prefill = 80;
    o.decode = 8;
    o.batch = 3;
    o.block_size = 64;
    o.max_prefill_tokens = 48;  // each prompt in two chunks, the second after a cached context
    o.weights = &w;
    o.prompts.assign(3, {});
    for (int64_t s = 0; s < 3; ++s)
        for (int64_t i = 0; i < o.prefill; ++i) o.prompts[static_cast<size_t>(s)].push_back((i * 31 + s * 7 + 1) % c.vocab_size);
    LlmRun run(c, o, h.chip().info());
    REQUIRE(h.run_host([&] {
        rt::Runtime rt(h.chip(), h.host_params(), h.trace(), &h.root());
        run.run(rt);
    }));
    size_t prefill_steps = 0;
    for (const StepRecord& r : run.steps()) prefill_steps += r.prefill;
    CHECK(prefill_steps == 6);
    check_against_reference(c, w, o, run);
}
