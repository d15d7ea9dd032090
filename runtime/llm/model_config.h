// The description of a decoder-only LLM as runtime/llm models it, read from a Hugging Face
// config.json (LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, MixtralForCausalLM):
// sizes, grouped-query attention, RoPE (theta and the linear / dynamic / llama3 scalings as
// transformers defines them), RMSNorm epsilon, tied embeddings, QKV bias (Qwen2), mixture of
// experts (Mixtral) and the weights' dtype. Every field the builder does not model is either
// ignored because it cannot change the computation (token ids, initializer range, cache flags)
// or rejected with an InputError naming the field and its value (an unknown architecture, an
// activation other than SiLU, an MLP bias, an unsupported RoPE scaling type). Simplified: a
// sliding window (Mistral) is recorded and a run whose context exceeds it is refused, not
// modelled.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace sfumato::llm {

enum class Arch : uint8_t { Llama, Mistral, Qwen2, Mixtral };
const char* arch_name(Arch a);  // the Hugging Face architecture string

enum class RopeScaling : uint8_t { None, Linear, Dynamic, Llama3 };
const char* rope_scaling_name(RopeScaling s);

struct ModelConfig {
    std::string name;  // the file's stem or the shipped name
    Arch arch = Arch::Llama;
    int64_t hidden_size = 0;
    int64_t intermediate_size = 0;
    int64_t num_layers = 0;
    int64_t num_heads = 0;
    int64_t num_kv_heads = 0;
    int64_t head_dim = 0;
    int64_t vocab_size = 0;
    int64_t max_position_embeddings = 0;
    double rope_theta = 10000.0;
    RopeScaling rope_scaling = RopeScaling::None;
    double rope_factor = 1.0;
    double rope_low_freq_factor = 1.0, rope_high_freq_factor = 4.0;  // llama3
    int64_t rope_original_max_position = 0;                           // llama3 (and dynamic: the base length)
    double rms_norm_eps = 1e-6;
    bool tie_word_embeddings = false;
    bool qkv_bias = false;                 // Qwen2 always; Llama/Mistral with attention_bias
    int64_t num_experts = 0;               // 0: dense MLP
    int64_t experts_per_token = 0;
    int64_t sliding_window = 0;            // 0: none
    std::string torch_dtype = "float16";  // float16 | bfloat16 | float32

    bool moe() const { return num_experts > 0; }
    int64_t q_size() const { return num_heads * head_dim; }
    int64_t kv_size() const { return num_kv_heads * head_dim; }
    // Parameter counts (elements), for the memory plan and the physical-limit checks.
    int64_t layer_params() const;
    int64_t params() const;
    // Bytes of K and V of one token in one layer at element size `elem_bytes`.
    int64_t kv_bytes_per_token_layer(int elem_bytes) const { return 2 * kv_size() * elem_bytes; }
};

// Parses config.json text. `name` labels errors and the model. Throws InputError naming the
// field for anything malformed, missing, out of range or unsupported.
ModelConfig parse_model_config(const std::string& json_text, const std::string& name);
// A config.json path, or a shipped name looked up as DIR/NAME.json in each of `dirs` (in order).
ModelConfig load_model_config(const std::string& path_or_name, const std::vector<std::string>& dirs);

// RoPE inverse frequencies (rotary_dim / 2 of them) after the configured scaling; `seq_len` is
// the longest sequence the table serves (dynamic scaling grows the base past the trained
// length, as transformers does at that length).
std::vector<double> rope_inv_freq(const ModelConfig& c, int64_t seq_len);
// The Rope operator's cos_sin table: `positions` rows of [cos(p f_0..), sin(p f_0..)] (the
// contract's layout: first rotary_dim/2 columns cos, last rotary_dim/2 sin), row-major.
std::vector<float> rope_cos_sin(const ModelConfig& c, int64_t positions);

}  // namespace sfumato::llm
