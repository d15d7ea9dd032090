// `sfumato llm --system F --pp M [--tp T]` (runtime/llm/pipeline.h): pipeline
// stages give the same greedy tokens as one chip in functional mode (also with
// TP inside the stages, uneven micro-batches and one stage with micro-batches);
// the activations sent per step are the hidden state and the residual of the
// step's tokens; with one micro-batch a decode step is at least the sum of the
// stages' kernel time in it (they cannot overlap: each waits for the previous
// one's activations); bad plans exit 2 naming the culprit.
#include <fstream>

#include "tests/cli_summary.h"

using namespace sfumato;
using namespace sfumato::test;

TEST_CASE(
    "llm pp: pipeline stages (with TP inside, uneven micro-batches) give "
    "the same greedy tokens as one chip") {
    const std::string req = " --mode functional --prefill 20 --decode 32 --batch 3 --seed 7";
    const nlohmann::json one =
        summary_of("llm tiny --config " + config("tiny") + " --trace off" + req, "llm_pp1");
    const auto& tokens = one["llm"]["tokens"];
    REQUIRE(tokens.size() == 3);
    REQUIRE(tokens[0].size() == 33);
    for (const std::string pp :
         {"--pp 2", "--pp 2 --tp 2", "--pp 1 --microbatches 3", "--pp 2 --microbatches 1"}) {
        const nlohmann::json s = summary_of("llm tiny " + tiny_system() + pp + req, "llm_pp_tokens");
        INFO(pp);
        CHECK(s["llm"]["tokens"] == tokens);
        CHECK(s["llm"]["ranks_agree"] == true);
    }
    // Default micro-batches: as many as stages, 3 sequences as 2 + 1; tiny's 2
    // layers one per stage.
    const nlohmann::json two = summary_of("llm tiny " + tiny_system() + "--pp 2" + req, "llm_pp2");
    CHECK(two["llm"]["parallel"]["microbatches"] == nlohmann::json::array({2, 1}));
    CHECK(two["llm"]["stages"][0]["first_layer"] == 0);
    CHECK(two["llm"]["stages"][0]["end_layer"] == 1);
    CHECK(two["llm"]["stages"][1]["first_layer"] == 1);
    CHECK(two["llm"]["stages"][1]["end_layer"] == 2);
}

// 5 layers on 3 stages: 2 + 2 + 1 (the remainder on the stages before the
// last). hidden 256, head_dim 16 (the tiny chip's buffers hold attention tiles
// of it).
TEST_CASE(
    "llm pp: bytes sent per step are hidden state + residual, a decode "
    "step at least its stages' compute") {
    const std::string dir = temp_dir("llm_pp_model");
    const std::string model = dir + "/five.json";
    std::ofstream(model) << R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 256,
        "intermediate_size": 512, "num_hidden_layers": 5, "num_attention_heads": 16,
        "num_key_value_heads": 16, "vocab_size": 256, "max_position_embeddings": 512})";
    const int64_t batch = 4, hidden = 256, prefill = 24, decode = 3, elem = 2, pp = 3;
    for (int mb : {1, 2}) {
        const nlohmann::json s =
            summary_of("llm " + model + " " + tiny_system() + "--pp 3 --microbatches " + std::to_string(mb) +
                         " --mode timing --prefill " + std::to_string(prefill) + " --decode " +
                         std::to_string(decode) + " --batch " + std::to_string(batch),
                     "llm_pp_timing" + std::to_string(mb));
        const auto& st = s["llm"]["stages"];
        REQUIRE(st.size() == static_cast<size_t>(pp));
        const int64_t bounds[] = {0, 2, 4, 5};
        for (int64_t i = 0; i < pp; ++i) {
            CHECK(st[static_cast<size_t>(i)]["first_layer"] == bounds[i]);
            CHECK(st[static_cast<size_t>(i)]["end_layer"] == bounds[i + 1]);
        }
        // Each stage but the last sends its tokens' hidden state and residual once
        // per step.
        for (int64_t i = 0; i < pp; ++i) {
            const auto& c = st[static_cast<size_t>(i)];
            const int64_t sends = i + 1 < pp ? 1 : 0;
            INFO("micro-batches " << mb << " stage " << i << ": " << c.dump());
            CHECK(c["prefill"]["sent_bytes"] == sends * 2 * batch * prefill * hidden * elem);
            CHECK(c["decode"]["sent_bytes"] == sends * 2 * batch * decode * hidden * elem);
            CHECK(c["decode"]["sends"] == sends * decode * mb);
            if (sends) CHECK(c["decode"]["comm_share"].get<double>() > 0);
            CHECK(c["decode"]["busy_share"].get<double>() > 0);
            CHECK(c["decode"]["bubble_share"].get<double>() > 0);  // every stage waits for the others
        }
        if (mb != 1) continue;
        // One micro-batch: the stages run one after the other within each decode
        // step.
        const auto& steps = s["llm"]["decode_step_ms"];
        REQUIRE(steps.size() == static_cast<size_t>(decode));
        for (size_t k = 0; k < steps.size(); ++k) {
            double sum = 0;
            for (const auto& c : st) sum += c["decode_step_busy_ms"][k].get<double>();
            INFO("decode step " << k);
            CHECK(sum > 0);
            CHECK(steps[k].get<double>() >= sum);
        }
    }
}

// Timing mode with TP inside the stages: only rank 0 of each stage simulates kernels; the other
// ranks follow it, and still run their all-reduces and send their own activations.
TEST_CASE("llm pp: with --tp and --simulate one every rank sends, only rank 0 of a stage computes") {
    const std::string req = " --mode timing --prefill 16 --decode 2 --batch 2";
    for (const std::string sim : {"one", "all"}) {
        const nlohmann::json s =
            summary_of("llm tiny " + tiny_system() + "--pp 2 --tp 2 --simulate " + sim + req, "llm_pp_mirror");
        CHECK(s["llm"]["parallel"]["simulate"] == sim);
        const auto& st = s["llm"]["stages"];
        REQUIRE(st.size() == 4);
        for (size_t i = 0; i < 4; ++i) {
            INFO(sim << " chip " << i << ": " << st[i].dump());
            CHECK(st[i]["stage"] == i / 2);
            // Two per layer (one per stage) and step of a micro-batch (2 of 1 sequence, 2 decode steps).
            CHECK(st[i]["decode"]["all_reduces"] == 2 * 2 * 2);
            // Stage 0's ranks each send 2 decode steps x hidden state + residual of 1 token (64 wide).
            CHECK(st[i]["decode"]["sent_bytes"] == (i < 2 ? 2 * 2 * 2 * 64 * 2 : 0));
            CHECK((st[i]["decode"]["busy_share"].get<double>() > 0) == (sim == "all" || i % 2 == 0));
        }
    }
}

TEST_CASE("llm pp: bad plans exit 2 naming the culprit") {
    struct Case {
        std::string args, says;
    } cases[] = {
        {"tiny " + tiny_system() + "--pp 3", "2 layers"},
        {"tiny --config " + config("tiny") + " --pp 2", "needs --system"},
        {"tiny " + tiny_system() + "--pp 2 --tp 4", "8 chips needed"},
        {"tiny " + tiny_system() + "--pp 1 --microbatches 1 --tp 3", "4 attention heads"},
        {"tiny " + tiny_system() + "--pp 2 --microbatches 3 --batch 2", "--microbatches 3"},
        {"tiny " + tiny_system() + "--pp 2 --graph-mode on", "--graph-mode"},
        // 7B's 16 layers per stage do not fit a tiny chip: the message names the
        // chip and the shortfall.
        {"llama2-7b " + tiny_system() + "--pp 2", "chip 0 (stage 0, layers 0..15)"},
        // A KV cache too small for the request: named with its chip and
        // shortfall.
        {"tiny " + tiny_system() + "--pp 2 --kv-blocks 1 --prefill 200", "short by"},
    };
    for (const Case& c : cases) {
        const CliResult r = run_cli("llm " + c.args + " --mode timing");
        INFO(c.args << "\n" << r.output);
        CHECK(r.code == 2);
        CHECK_THAT(r.output, Catch::Contains(c.says));
    }
}
