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
        {"no-such-model", "no-such-model"},
        {"tiny --kv-blocks 1 --prefill 300", "short by"},
        {"tiny --prefill 600", "max_position_embeddings"},
        {"tiny --mode functional --weights " + write(dir, "bad.safetensors", std::string("\x10\0\0\0\0\0\0\0{}", 10)),
         "bad.safetensors"},
    };
    for (const Case& c : cases) {
        const bool functional = c.args.find("--mode functional") != std::string::npos;
        const CliResult r = run_cli(base + c.args + (functional ? "" : " --mode timing"));
        INFO(c.args << "\n" << r.output);
        CHECK(r.code == 2);
        CHECK_THAT(r.output, Catch::Contains(c.says));
    }
}
