// `sfumato llm` as a user runs it: bad input exits 2 with a message naming the culprit (an
// unknown architecture, a malformed config.json or safetensors file, a KV cache that does not
// hold the request, a request past the model's positions), before anything is simulated.
#include <catch2/catch.hpp>
#include <fstream>

#include "tests/support.h"

using namespace sfumato;
using namespace sfumato::test;

namespace {

std::string write(const std::string& dir, const std::string& name, const std::string& text) {
    const std::string p = dir + "/" + name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
}

}  // namespace

TEST_CASE("llm cli: bad models and requests exit 2 naming the culprit") {
    const std::string dir = temp_dir("llm_cli_bad");
    const std::string base = "llm --config " + config("tiny") + " --trace off ";
    struct Case {
        std::string args, says;
    } cases[] = {
        {write(dir, "gpt2.json", R"({"architectures": ["GPT2LMHeadModel"], "hidden_size": 64})"), "GPT2LMHeadModel"},
        {write(dir, "broken.json", R"({"architectures": ["LlamaForCausalLM"], )"), "not valid JSON"},
        {write(dir, "yarn.json",
               R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 64, "intermediate_size": 128,
                   "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 256,
                   "rope_scaling": {"rope_type": "yarn", "factor": 4.0}})"),
         "yarn"},
        {write(dir, "gelu.json",
               R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 64, "intermediate_size": 128,
                   "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 256, "hidden_act": "gelu"})"),
         "hidden_act"},
        {write(dir, "heads.json",
               R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 64, "intermediate_size": 128,
                   "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 3, "vocab_size": 256})"),
         "num_key_value_heads"},
        {"no-such-model", "no-such-model"},
        // The KV cache sized from the memory left after weights and activations.
        {"tiny --batch 64 --prefill 400 --kv-mem-fraction 0.001", "short by"},
        {"tiny --kv-blocks 1 --prefill 300", "short by"},
        {"tiny --prefill 600", "max_position_embeddings"},
        {"tiny --mode functional --weights " + write(dir, "bad.safetensors", std::string("\x10\0\0\0\0\0\0\0{}", 10)),
         "bad.safetensors"},
        {"tiny --mode functional --weights " +
             write(dir, "past_end.safetensors",
                   std::string("\x49\0\0\0\0\0\0\0", 8) +
                       R"({"lm_head.weight":{"dtype":"F16","shape":[4],"data_offsets":[0,8000]}}   )"),
         "past_end.safetensors"},
    };
    for (const Case& c : cases) {
        const bool functional = c.args.find("--mode functional") != std::string::npos;
        const CliResult r = run_cli(base + c.args + (functional ? "" : " --mode timing"));
        INFO(c.args << "\n" << r.output);
        CHECK(r.code == 2);
        CHECK_THAT(r.output, Catch::Contains(c.says));
    }
}

// Graph mode: with a host launch cost (a runtime parameter) longer than the tiny model's
// kernels, an eager decode step takes at least one launch cost per kernel on the host; the same
// step captured pays one launch cost for the whole step, so it is faster by at most the K - 1
// launch costs it no longer pays, and the device work is the same.
TEST_CASE("llm cli: graph mode on vs off differs per step by the host launch cost") {
    const std::string out = temp_dir("llm_graph_mode");
    const double launch_ns = 20000;
    const CliResult r = run_cli("llm tiny --config " + config("tiny") +
                                " --mode timing --trace off --prefill 16 --decode 4 --graph-mode both"
                                " --set host.launch_overhead_ns=20000 --out " + out);
    INFO(r.output);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.output, Catch::Contains("host launch cost saved per decode step"));
    const nlohmann::json s = read_json(out + "/summary.json");
    const auto& g = s["llm"]["graph_mode"];
    REQUIRE(g["mode"] == "both");
    double kernels = 0;
    for (const auto& op : s["llm"]["decode_ops"]) kernels += op["kernels"].get<double>();
    const auto& eager = g["eager"]["decode_step_ms"];
    const auto& captured = g["captured"]["decode_step_ms"];
    REQUIRE(eager.size() == 4);
    REQUIRE(captured.size() == eager.size());
    const double k = kernels / static_cast<double>(eager.size()), launch_ms = launch_ns / 1e6;
    REQUIRE(k >= 2);
    for (size_t i = 0; i < eager.size(); ++i) {
        const double e = eager[i].get<double>(), c = captured[i].get<double>();
        INFO("step " << i << ": eager " << e << " ms, captured " << c << " ms, " << k << " kernels");
        CHECK(e >= k * launch_ms);
        CHECK(c >= launch_ms);
        CHECK(c < e);
        CHECK(e - c <= (k - 1) * launch_ms * (1 + 1e-9));
    }
}
