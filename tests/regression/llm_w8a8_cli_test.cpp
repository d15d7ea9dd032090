// `sfumato llm --quant w8a8` as a user runs it: an unknown --quant value exits 2 naming it, and
// the physical check of W8A8 decode: at batch 1 a decode step reads every weight once, so the
// HBM bytes per generated token drop by the bytes the int8 projections save (half of their
// fp16 bytes, less 4 bytes of scale per output channel), up to the small activation traffic the
// quantisation adds (DynamicQuant's read and write of each projection's input, QuantMatMul's
// int32 result through its workspace and its dequant's read of it).
#include <catch2/catch.hpp>
#include <fstream>

#include "tests/support.h"

using namespace sfumato;
using namespace sfumato::test;

TEST_CASE("llm w8a8 cli: --quant takes none or w8a8") {
    const CliResult r =
        run_cli("llm tiny --config " + config("tiny") + " --mode timing --trace off --quant int4");
    INFO(r.output);
    CHECK(r.code == 2);
    CHECK_THAT(r.output, Catch::Contains("--quant") && Catch::Contains("int4"));
}

TEST_CASE("llm w8a8 cli: HBM bytes per decoded token drop by the weight bytes int8 saves") {
    const std::string dir = temp_dir("llm_w8a8_bytes");
    const int64_t H = 512, I = 1024, heads = 8, kv_heads = 4, D = H / heads, layers = 2;
    const std::string model = dir + "/small.json";
    std::ofstream(model)
        << R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 512, "intermediate_size": 1024,
        "num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": 4, "vocab_size": 256,
        "max_position_embeddings": 512, "torch_dtype": "float16"})";
    double bytes[2] = {0, 0};
    const char* quant[2] = {"none", "w8a8"};
    for (int i = 0; i < 2; ++i) {
        const std::string out = dir + "/" + quant[i];
        const CliResult r = run_cli("llm " + model + " --config " + config("tiny") +
                                    " --mode timing --trace off --prefill 16 --decode 4 --quant " + quant[i] +
                                    " --out " + out);
        INFO(r.output);
        REQUIRE(r.code == 0);
        bytes[i] = read_json(out + "/summary.json")["llm"]["hbm_bytes_per_token"].get<double>();
    }
    // The projections: (K, N) of QKV, output, gate/up, down.
    const int64_t QKV = (heads + 2 * kv_heads) * D;
    const int64_t kn[4][2] = {{H, QKV}, {H, H}, {H, 2 * I}, {I, H}};
    double saved = 0, extra = 0, scales = 0;
    for (const auto& p : kn) {
        saved += static_cast<double>(p[0] * p[1] - 4 * p[1]);  // 2 -> 1 byte a weight, 4 bytes a scale
        extra += static_cast<double>(4 * p[0] + 12 * p[1] + 16);
        scales += static_cast<double>(4 * p[1]);
    }
    saved *= layers, extra *= layers, scales *= layers;
    const double drop = bytes[0] - bytes[1];
    INFO("fp16 " << bytes[0] << " B/token, w8a8 " << bytes[1] << " B/token: drop " << drop
                 << ", weights saved " << saved);
    CHECK(drop >= saved - extra);
    CHECK(drop <= saved + scales);  // a kernel that does not count its scales' read
    CHECK(drop > 0.9 * saved);
}
