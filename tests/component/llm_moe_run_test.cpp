// runtime/llm with a mixture-of-experts model (MixtralForCausalLM) end to end on the simulated
// chip: the tiny MoE model (configs/llm/tiny-moe.json: 2 layers, 4 experts, top 2) in functional
// mode generates the host fp32 reference's greedy tokens for 32 decode steps (the router on the
// device chooses the experts, the permutation, the grouped matmuls over the experts and the
// weighted combine take part, with two sequences and a cache block outgrown while decoding); in
// timing mode the routing is the seeded draw given to the kernels as host_experts, so the
// grouped matmuls read the drawn experts' weights only.
#include <catch2/catch.hpp>
#include <cmath>
#include <map>

#include "runtime/llm/engine.h"
#include "runtime/llm/reference.h"
#include "tests/sim_harness.h"

using namespace sfumato;
using namespace sfumato::llm;

namespace {

ModelConfig tiny_moe() {
    return load_model_config("tiny-moe", {std::string(SFUMATO_SOURCE_DIR) + "/configs/llm"});
}

RunOptions request(const ModelConfig& c, int64_t decode) {
    RunOptions o;
    o.prefill = 40;
    o.decode = decode;
    o.batch = 2;
    o.block_size = 64;
    o.prompts.assign(2, {});
    for (int64_t i = 0; i < o.prefill; ++i) {
        o.prompts[0].push_back((i * 37 + 5) % c.vocab_size);
        o.prompts[1].push_back((i * i + 3 * i + 1) % c.vocab_size);
    }
    return o;
}

// The MoE op types of one step and how many kernels each launched.
std::map<std::string, size_t> moe_ops(const StepRecord& r) {
    std::map<std::string, size_t> n;
    for (const StepOp& op : r.ops)
        if (op.op_type.starts_with("Moe") || op.op_type == "GroupedMatmul") n[op.op_type] += 1;
    return n;
}

}  // namespace

TEST_CASE("llm moe: the tiny MoE model generates the reference's greedy tokens for 32 steps",
          "[llm][moe][functional]") {
    test::Harness h;
    const ModelConfig c = tiny_moe();
    REQUIRE(c.moe());
    const ModelWeights w = random_weights(c, 11);
    RunOptions o = request(c, 32);
    o.weights = &w;
    LlmRun run(c, o, h.chip().info());
    REQUIRE(h.run_host([&] {
        rt::Runtime rt(h.chip(), h.host_params(), h.trace(), &h.root());
        run.run(rt);
    }));
    // Every step runs the MoE block in each layer: router, permutation, two grouped matmuls, combine.
    REQUIRE(run.steps().size() == 33);
    const std::map<std::string, size_t> want = {
        {"GroupedMatmul", 4}, {"MoeCombine", 2}, {"MoePermute", 2}, {"MoeRouter", 2}};
    for (const StepRecord& r : run.steps()) CHECK(moe_ops(r) == want);
    // Teacher-forced against the reference: each device token is the reference's greedy choice
    // or ties with it within a few fp16 units (the two accumulate in different orders, and a
    // near-tie of two router logits may pick another expert for one token).
    Reference ref(c, w, o.prefill + o.decode + 1);
    int near_ties = 0, same = 0;
    for (int s = 0; s < 2; ++s) {
        const std::vector<int64_t>& got = run.tokens()[static_cast<size_t>(s)];
        REQUIRE(got.size() == 33);
        std::vector<float> logits = ref.step(s, o.prompts[static_cast<size_t>(s)]);
        for (size_t i = 0; i < got.size(); ++i) {
            const int64_t best = argmax(logits);
            const float top = logits[static_cast<size_t>(best)], mine = logits[static_cast<size_t>(got[i])];
            const float ulp = std::ldexp(1.0f, std::ilogb(std::max(std::fabs(top), 1e-3f)) - 10);
            INFO("sequence " << s << " token " << i << ": device " << got[i] << " (logit " << mine
                             << "), reference " << best << " (logit " << top << ")");
            if (got[i] == best) {
                ++same;
            } else {
                ++near_ties;
                CHECK(top - mine <= 4 * ulp);
            }
            if (i + 1 < got.size()) logits = ref.step(s, {got[i]});
        }
    }
    CHECK(near_ties <= 2);
    CHECK(same >= 64);
    // Free-running: the reference's own greedy generation equals the device's tokens.
    Reference free(c, w, o.prefill + o.decode + 1);
    const auto gen = free.generate(o.prompts, static_cast<int>(o.decode + 1));
    if (near_ties == 0) CHECK(gen == run.tokens());
}

TEST_CASE("llm moe: timing mode routes by the seeded draw: the grouped matmuls read the drawn experts only",
          "[llm][moe]") {
    // Timing mode holds no router output; without host_experts every entry would go to expert 0
    // and the grouped matmul's compulsory bytes would count all E experts' weights.
    test::Harness h({}, "tiny", false);
    const ModelConfig c = tiny_moe();
    RunOptions o = request(c, 6);
    LlmRun run(c, o, h.chip().info());
    REQUIRE(h.run_host([&] {
        rt::Runtime rt(h.chip(), h.host_params(), h.trace(), &h.root());
        run.run(rt);
    }));
    REQUIRE(run.steps().size() == 7);
    const uint64_t H = static_cast<uint64_t>(c.hidden_size), I = static_cast<uint64_t>(c.intermediate_size);
    const uint64_t E = static_cast<uint64_t>(c.num_experts), K = static_cast<uint64_t>(c.experts_per_token);
    const uint64_t R = 2 * K;  // a decode step: two tokens, K entries each
    auto gate_up_bytes = [&](uint64_t active) {
        return (R * H + active * H * 2 * I + R * 2 * I) * 2 + E * 4;
    };
    bool fewer_than_all = false;
    for (const StepRecord& r : run.steps()) {
        CHECK(moe_ops(r).at("GroupedMatmul") == 4);
        if (r.prefill) continue;
        for (const StepOp& op : r.ops) {
            if (node_role(op.name) != "experts_gate_up") continue;
            REQUIRE(op.tasks.size() == 1);
            const uint64_t b = op.tasks[0]->kernel.bytes;
            CHECK(b >= gate_up_bytes(K));  // each token's K distinct experts
            CHECK(b <= gate_up_bytes(std::min(E, R)));
            fewer_than_all = fewer_than_all || b < gate_up_bytes(E);
        }
    }
    CHECK(fewer_than_all);
}
