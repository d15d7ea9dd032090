// The physical limit of an LLM decode step (VALIDATION.md, physical limits): at batch 1 a decode
// step streams every weight it multiplies by (all but the embedding table, of which it reads one
// row) and the K and V of every cached position, so what it reads from HBM is that, give or take
// what the L2 holds from the step before (at most the L2's size), and its time is at least those
// bytes over the HBM peak. The model is sized from the chip so that its weights are many times the
// L2 (the expectation is about streaming, not about hits); timing mode, every kernel simulated.
#include <catch2/catch.hpp>

#include "runtime/llm/engine.h"
#include "tests/sim_harness.h"

using namespace sfumato;
using namespace sfumato::llm;

TEST_CASE("llm: a batch-1 decode step reads its weights and KV from HBM and takes at least that over the HBM peak",
          "[llm][timing]") {
    test::Harness h({}, "tiny", false);
    const DeviceInfo& dev = h.chip().info();
    const ModelConfig c = parse_model_config(R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 512,
        "intermediate_size": 1024, "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 4,
        "vocab_size": 2048, "max_position_embeddings": 1024, "torch_dtype": "float16"})",
                                             "limits");
    const uint64_t elem = 2;
    // What one decode step must stream: the layers, the final norm and the LM head (the embedding
    // table is read one row per token).
    const uint64_t weights = static_cast<uint64_t>(c.num_layers * c.layer_params() + c.hidden_size +
                                                   c.hidden_size * c.vocab_size) * elem;
    REQUIRE(weights >= 8 * dev.l2_bytes);
    RunOptions o;
    o.prefill = 200;
    o.decode = 4;
    o.batch = 1;
    o.block_size = 64;
    LlmRun run(c, o, dev);
    std::vector<uint64_t> read_at_step;  // HBM bytes read when each step's tokens are back
    run.on_step([&](const StepRecord&) { read_at_step.push_back(h.chip().memory_system()->hbm_totals().bytes_read); });
    REQUIRE(h.run_host([&] {
        rt::Runtime rt(h.chip(), h.host_params(), h.trace(), &h.root());
        run.run(rt);
    }));
    REQUIRE(run.steps().size() == static_cast<size_t>(1 + o.decode));
    REQUIRE(read_at_step.size() == run.steps().size());
    const double ps_per_cycle = static_cast<double>(dev.clock.ticks(1000000)) / 1e6;
    for (int64_t k = 0; k < o.decode; ++k) {
        const StepRecord& st = run.steps()[static_cast<size_t>(k + 1)];
        REQUIRE(!st.prefill);
        // Step k attends over prefill + k cached positions and its own new one, in every layer.
        const uint64_t kv = static_cast<uint64_t>((o.prefill + k + 1) * c.num_layers * c.kv_bytes_per_token_layer(elem));
        const uint64_t need = weights + kv;
        const uint64_t got = read_at_step[static_cast<size_t>(k + 1)] - read_at_step[static_cast<size_t>(k)];
        const double hbm_bound_ps = static_cast<double>(std::max(got, need - dev.l2_bytes)) / dev.gm_bytes_per_cycle * ps_per_cycle;
        INFO("decode step " << k << ": HBM read " << got << " B, weights + KV " << need << " B (weights " << weights
                            << ", KV " << kv << "), L2 " << dev.l2_bytes << " B; step " << st.ps << " ps, HBM bound "
                            << hbm_bound_ps << " ps");
        // The L2 may still hold part of the previous step's weights, never more than its size.
        CHECK(got + dev.l2_bytes >= need);
        // Beyond weights and KV a step reads only activations (a few rows per op at batch 1),
        // the token ids and the cos/sin and embedding rows: far less than the L2.
        CHECK(got <= need + dev.l2_bytes);
        CHECK(static_cast<double>(st.ps) >= hbm_bound_ps);
    }
}
