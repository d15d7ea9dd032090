// runtime/llm: config.json parsing (the shipped configs against the public parameter counts,
// every rejection naming its field), the RoPE scalings as transformers defines them, the
// safetensors reader and the HF name mapping, and the host reference model's KV cache.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "runtime/llm/model_config.h"
#include "runtime/llm/reference.h"
#include "runtime/llm/safetensors.h"
#include "runtime/llm/weights.h"
#include "sim/error.h"

using namespace sfumato;
using namespace sfumato::llm;

namespace {

const std::vector<std::string> kDirs = {std::string(SFUMATO_SOURCE_DIR) + "/configs/llm"};

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

nlohmann::json tiny_json() {
    return nlohmann::json::parse(R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 64,
        "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
        "num_key_value_heads": 2, "vocab_size": 256, "max_position_embeddings": 512,
        "rms_norm_eps": 1e-5, "torch_dtype": "float16"})");
}

std::string with(const std::string& key, const nlohmann::json& v) {
    nlohmann::json j = tiny_json();
    j[key] = v;
    return j.dump();
}

// A safetensors file: header JSON then the tensors' bytes in order.
std::string safetensors_file(const std::vector<std::pair<std::string, std::vector<float>>>& tensors,
                             const std::vector<std::vector<int64_t>>& shapes) {
    nlohmann::json h = nlohmann::json::object();
    std::string data;
    for (size_t i = 0; i < tensors.size(); ++i) {
        const uint64_t b = data.size();
        data.append(reinterpret_cast<const char*>(tensors[i].second.data()), tensors[i].second.size() * 4);
        h[tensors[i].first] = {{"dtype", "F32"}, {"shape", shapes[i]}, {"data_offsets", {b, data.size()}}};
    }
    const std::string hs = h.dump();
    std::string out(8, '\0');
    uint64_t n = hs.size();
    for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
    return out + hs + data;
}

}  // namespace

TEST_CASE("llm: shipped configs parse to the public parameter counts", "[llm]") {
    // Parameter counts the model cards publish (Llama-2-7b: 6,738,415,616; Llama-2-70b:
    // 68,976,648,192), derived here from the config fields alone.
    const ModelConfig l7 = load_model_config("llama2-7b", kDirs);
    CHECK(l7.params() == 6738415616);
    CHECK(l7.head_dim == 128);
    const ModelConfig l70 = load_model_config("llama2-70b", kDirs);
    CHECK(l70.params() == 68976648192);
    CHECK(l70.num_kv_heads == 8);
    const ModelConfig q = load_model_config("qwen2-7b", kDirs);
    CHECK(q.arch == Arch::Qwen2);
    CHECK(q.qkv_bias);
    CHECK(q.sliding_window == 0);  // use_sliding_window is false
    const ModelConfig m = load_model_config("mixtral-8x7b", kDirs);
    CHECK(m.moe());
    CHECK(m.experts_per_token == 2);
    CHECK(load_model_config("llama3-8b", kDirs).rope_theta == 500000.0);
    CHECK(load_model_config("tiny", kDirs).num_layers == 2);
    CHECK_THAT(error_of([] { load_model_config("no-such-model", kDirs); }),
               Catch::Contains("no-such-model") && Catch::Contains("llama2-7b"));
}

TEST_CASE("llm: unsupported or malformed config.json fields are named", "[llm]") {
    auto err = [](const std::string& text) { return error_of([&] { parse_model_config(text, "m"); }); };
    CHECK(err(tiny_json().dump()).empty());
    CHECK_THAT(err(with("architectures", {"GPT2LMHeadModel"})), Catch::Contains("GPT2LMHeadModel"));
    CHECK_THAT(err(with("num_key_value_heads", 3)), Catch::Contains("num_key_value_heads"));
    CHECK_THAT(err(with("hidden_size", -4)), Catch::Contains("hidden_size"));
    CHECK_THAT(err(with("hidden_size", "64")), Catch::Contains("hidden_size"));
    CHECK_THAT(err(with("hidden_act", "gelu")), Catch::Contains("hidden_act"));
    CHECK_THAT(err(with("torch_dtype", "int4")), Catch::Contains("torch_dtype"));
    CHECK_THAT(err(with("rope_scaling", {{"rope_type", "yarn"}, {"factor", 4.0}})), Catch::Contains("yarn"));
    CHECK_THAT(err(with("rope_scaling", {{"type", "linear"}})), Catch::Contains("factor"));
    CHECK_THAT(err(with("mlp_bias", true)), Catch::Contains("mlp_bias"));
    CHECK_THAT(err(with("num_local_experts", 8)), Catch::Contains("num_local_experts"));
    CHECK_THAT(err("{\"architectures\": "), Catch::Contains("not valid JSON"));
    nlohmann::json j = tiny_json();
    j.erase("vocab_size");
    CHECK_THAT(err(j.dump()), Catch::Contains("vocab_size") && Catch::Contains("missing"));
}

TEST_CASE("llm: RoPE scalings follow transformers' definitions", "[llm]") {
    ModelConfig c = parse_model_config(tiny_json().dump(), "m");
    const std::vector<double> base = rope_inv_freq(c, 64);
    REQUIRE(base.size() == 8);
    for (size_t i = 0; i < base.size(); ++i) CHECK(base[i] == Approx(std::pow(10000.0, -2.0 * i / 16.0)));
    ModelConfig lin = parse_model_config(with("rope_scaling", {{"type", "linear"}, {"factor", 4.0}}), "m");
    const auto fl = rope_inv_freq(lin, 64);
    for (size_t i = 0; i < base.size(); ++i) CHECK(fl[i] == Approx(base[i] / 4.0));
    // Dynamic: unchanged within the trained length, a larger base beyond it.
    ModelConfig dyn = parse_model_config(with("rope_scaling", {{"type", "dynamic"}, {"factor", 2.0}}), "m");
    CHECK(rope_inv_freq(dyn, 512) == base);
    const auto fd = rope_inv_freq(dyn, 1024);
    const double b = 10000.0 * std::pow(2.0 * 1024 / 512 - 1.0, 16.0 / 14.0);
    for (size_t i = 0; i < base.size(); ++i) CHECK(fd[i] == Approx(std::pow(b, -2.0 * i / 16.0)));
    // llama3: wavelengths shorter than original/high_freq_factor kept, longer than
    // original/low_freq_factor divided by the factor, a smooth blend between.
    ModelConfig l3 = parse_model_config(
        with("rope_scaling", {{"rope_type", "llama3"}, {"factor", 8.0}, {"low_freq_factor", 1.0},
                              {"high_freq_factor", 4.0}, {"original_max_position_embeddings", 64}}),
        "m");
    const auto f3 = rope_inv_freq(l3, 64);
    for (size_t i = 0; i < base.size(); ++i) {
        const double wl = 2 * M_PI / base[i];
        if (wl < 64 / 4.0)
            CHECK(f3[i] == Approx(base[i]));
        else if (wl > 64 / 1.0)
            CHECK(f3[i] == Approx(base[i] / 8.0));
        else
            CHECK((f3[i] < base[i] && f3[i] > base[i] / 8.0));
    }
    // The table: row p holds cos(p f) then sin(p f).
    const auto t = rope_cos_sin(c, 3);
    CHECK(t.size() == 3 * 16);
    CHECK(t[2 * 16 + 1] == Approx(std::cos(2 * base[1])));
    CHECK(t[2 * 16 + 8 + 1] == Approx(std::sin(2 * base[1])));
}

TEST_CASE("llm: safetensors reader checks the file and maps HF names", "[llm]") {
    const std::string f = safetensors_file({{"a", {1, 2, 3, 4, 5, 6}}, {"b", {7}}}, {{2, 3}, {1}});
    Safetensors st(f, "t.safetensors");
    CHECK(st.info("a").shape == std::vector<int64_t>{2, 3});
    CHECK(st.floats("a", {2, 3})[5] == 6.f);
    CHECK_THAT(error_of([&] { st.floats("a", {3, 2}); }), Catch::Contains("'a'") && Catch::Contains("[2,3]"));
    CHECK_THAT(error_of([&] { st.info("c"); }), Catch::Contains("'c'"));
    CHECK_THAT(error_of([&] { Safetensors(f.substr(0, 5), "x"); }), Catch::Contains("x"));
    CHECK_THAT(error_of([&] { Safetensors(f.substr(0, f.size() - 4), "x"); }), Catch::Contains("data_offsets"));
    std::string big = f;
    big[7] = '\x7f';  // header length far past the file
    CHECK_THAT(error_of([&] { Safetensors(big, "x"); }), Catch::Contains("header length"));

    // Every HF tensor of the tiny model, in HF layout ([out, in]); the loader fuses and transposes.
    const ModelConfig c = load_model_config("tiny", kDirs);
    const int64_t H = c.hidden_size, I = c.intermediate_size, Q = c.q_size(), KV = c.kv_size(), V = c.vocab_size;
    std::vector<std::pair<std::string, std::vector<float>>> ts;
    std::vector<std::vector<int64_t>> shapes;
    float next = 0;
    auto add = [&](const std::string& n, std::vector<int64_t> s) {
        int64_t k = 1;
        for (int64_t d : s) k *= d;
        std::vector<float> v(static_cast<size_t>(k));
        for (float& x : v) x = (next += 1.f / 1024.f);
        ts.push_back({n, v});
        shapes.push_back(s);
    };
    add("model.embed_tokens.weight", {V, H});
    for (int l = 0; l < c.num_layers; ++l) {
        const std::string p = "model.layers." + std::to_string(l) + ".";
        add(p + "input_layernorm.weight", {H});
        add(p + "post_attention_layernorm.weight", {H});
        add(p + "self_attn.q_proj.weight", {Q, H});
        add(p + "self_attn.k_proj.weight", {KV, H});
        add(p + "self_attn.v_proj.weight", {KV, H});
        add(p + "self_attn.o_proj.weight", {H, Q});
        add(p + "mlp.gate_proj.weight", {I, H});
        add(p + "mlp.up_proj.weight", {I, H});
        add(p + "mlp.down_proj.weight", {H, I});
    }
    add("model.norm.weight", {H});
    add("lm_head.weight", {V, H});
    const Safetensors model(safetensors_file(ts, shapes), "tiny.safetensors");
    const ModelWeights w = load_weights(c, model);
    const auto k_proj = model.floats("model.layers.1.self_attn.k_proj.weight");
    const auto up = model.floats("model.layers.0.mlp.up_proj.weight");
    // k_proj[o, i] lands at wqkv[i, Q + o]; up_proj[o, i] at w_gate_up[i, I + o].
    CHECK(w.layers[1].wqkv[static_cast<size_t>(5 * (Q + 2 * KV) + Q + 3)] == round_to_model(k_proj[3 * H + 5], c));
    CHECK(w.layers[0].w_gate_up[static_cast<size_t>(7 * 2 * I + I + 2)] == round_to_model(up[2 * H + 7], c));
    ts.pop_back();
    shapes.pop_back();
    CHECK_THAT(error_of([&] { load_weights(c, Safetensors(safetensors_file(ts, shapes), "t")); }),
               Catch::Contains("lm_head.weight"));
}

TEST_CASE("llm: reference model prefill equals token-by-token decode", "[llm]") {
    // The KV cache must make a prefill of n tokens and n single-token steps the same
    // computation, row for row.
    const ModelConfig c = load_model_config("tiny", kDirs);
    const ModelWeights w = random_weights(c, 7);
    Reference a(c, w, 64), b(c, w, 64);
    const std::vector<int64_t> prompt = {3, 17, 250, 9, 9, 41};
    const std::vector<float> la = a.step(0, prompt);
    std::vector<float> lb;
    for (int64_t t : prompt) lb = b.step(0, {t});
    REQUIRE(la.size() == static_cast<size_t>(c.vocab_size));
    CHECK(la == lb);
    CHECK(a.length(0) == 6);
    // Different sequences do not see each other's cache.
    Reference r(c, w, 64);
    r.step(1, {5, 6, 7});
    CHECK(r.step(0, prompt) == la);
    // Greedy generation is deterministic and stays in the vocabulary.
    const auto g = Reference(c, w, 64).generate({prompt}, 8);
    CHECK(g == Reference(c, w, 64).generate({prompt}, 8));
    for (int64_t t : g[0]) CHECK((t >= 0 && t < c.vocab_size));
    CHECK_THAT(error_of([&] { Reference(c, w, 4).step(0, prompt); }), Catch::Contains("6"));
}
