// `sfumato llm --system F --tp N` (runtime/llm/parallel.h): tensor parallelism
// gives the same greedy tokens as one chip in functional mode (heads split, and
// KV heads replicated when there are fewer than chips); each all-reduce takes
// at least what the links allow (a ring all-reduce of S bytes moves 2 (N - 1) /
// N S bytes through each chip's link, and crosses a link at least once); bad
// plans exit 2 naming the culprit.
#include <fstream>

#include "tests/cli_summary.h"

using namespace sfumato;
using namespace sfumato::test;

TEST_CASE(
    "llm tp: TP=2 and TP=4 (KV heads replicated) give the same greedy "
    "tokens as TP=1") {
    const std::string req = " --mode functional --prefill 20 --decode 32 --batch 2 --seed 7";
    const nlohmann::json one =
        summary_of("llm tiny --config " + config("tiny") + " --trace off" + req, "llm_tp1");
    const nlohmann::json two = summary_of("llm tiny " + tiny_system() + "--tp 2" + req, "llm_tp2");
    const nlohmann::json four = summary_of("llm tiny " + tiny_system() + "--tp 4" + req, "llm_tp4");
    const auto& tokens = one["llm"]["tokens"];
    REQUIRE(tokens.size() == 2);
    REQUIRE(tokens[0].size() == 33);
    CHECK(two["llm"]["tokens"] == tokens);
    CHECK(four["llm"]["tokens"] == tokens);
    CHECK(two["llm"]["ranks_agree"] == true);
    CHECK(four["llm"]["ranks_agree"] == true);
    // tiny: 4 heads, 2 KV heads, MLP 128.
    CHECK(two["llm"]["parallel"]["heads_per_chip"] == 2);
    CHECK(two["llm"]["parallel"]["kv_heads_per_chip"] == 1);
    CHECK(two["llm"]["parallel"]["intermediate_per_chip"] == 64);
    CHECK(four["llm"]["parallel"]["kv_heads_replicated"] == true);
    CHECK(four["llm"]["parallel"]["kv_heads_per_chip"] == 1);
}

// A model wide enough that an all-reduce is bandwidth-bound on the tiny system's 8 GB/s links
// (head_dim 16, as the tiny model: the tiny chip's buffers hold attention tiles of it).
// The ring algorithm (forced: on a full mesh the mesh algorithm spreads a chip's bytes over its
// N - 1 links) sends 2 (N - 1) / N of the vector through each chip's one outgoing ring link.
TEST_CASE("llm tp: communication share > 0 and each all-reduce at least the ring's bytes over a link") {
    const std::string dir = temp_dir("llm_tp_model");
    const std::string model = dir + "/wide.json";
    std::ofstream(model) << R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 1024,
        "intermediate_size": 2048, "num_hidden_layers": 2, "num_attention_heads": 64,
        "num_key_value_heads": 64, "vocab_size": 256, "max_position_embeddings": 512})";
    const int64_t batch = 8, hidden = 1024, layers = 2, decode = 3;
    const double link_gbps = 8, latency_ns = 200;  // configs/system-tiny.ini, system.link
    for (int n : {2, 4}) {
        const nlohmann::json s = summary_of("llm " + model + " " + tiny_system() + "--tp " + std::to_string(n) +
                                              " --set comm.algo=ring --mode timing --prefill 32 --decode " +
                                              std::to_string(decode) + " --batch " + std::to_string(batch),
                                          "llm_tp_share" + std::to_string(n));
        const auto& comm = s["llm"]["communication"];
        REQUIRE(comm.size() == static_cast<size_t>(n));
        for (const auto& c : comm) {
            const auto& d = c["decode"];
            INFO("tp " << n << " chip " << c["chip"] << ": " << d.dump());
            // Two all-reduces per layer and step, each of the step's [tokens, hidden]
            // fp16 output.
            REQUIRE(d["all_reduces"] == 2 * layers * decode);
            const double bytes = static_cast<double>(batch * hidden * 2);
            CHECK(d["bytes"].get<double>() == 2 * layers * decode * bytes);
            const double per_ns = 2.0 * (n - 1) / n * bytes / link_gbps + latency_ns;
            CHECK(d["comm_ms"].get<double>() * 1e6 >= d["all_reduces"].get<double>() * per_ns);
            CHECK(d["share"].get<double>() > 0);
            CHECK(d["share"].get<double>() < 1);
            CHECK(c["prefill"]["share"].get<double>() > 0);
        }
        // The decode step is at least its all-reduces.
        const double tpot_ns = s["llm"]["tpot_ms"].get<double>() * 1e6;
        CHECK(tpot_ns >= 2 * layers * (2.0 * (n - 1) / n * batch * hidden * 2 / link_gbps + latency_ns));
        // Each chip's memory plan holds the collective buffers.
        CHECK(s["llm"]["memory"][0]["collective_buffers"].get<uint64_t>() > 0);
    }
}

TEST_CASE("llm tp: bad plans exit 2 naming the culprit") {
    struct Case {
        std::string args, says;
    } cases[] = {
        {"tiny " + tiny_system() + "--tp 3", "4 attention heads"},
        {"tiny --config " + config("tiny") + " --tp 2", "needs --system"},
        {"tiny " + tiny_system() + "--tp 8", "has 4 chips"},
        {"tiny " + tiny_system() + "--tp 2 --graph-mode on", "--graph-mode"},
        {"mixtral-8x7b " + tiny_system() + "--tp 2", "mixture-of-experts"},
        // 7B's weight shard does not fit a tiny chip: the message names the chip
        // and the shortfall.
        {"llama2-7b " + tiny_system() + "--tp 4", "chip 0"},
    };
    for (const Case& c : cases) {
        const CliResult r = run_cli("llm " + c.args + " --mode timing");
        INFO(c.args << "\n" << r.output);
        CHECK(r.code == 2);
        CHECK_THAT(r.output, Catch::Contains(c.says));
    }
}
