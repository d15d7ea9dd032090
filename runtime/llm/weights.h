// Host-side weights of a model, in the fused layouts the step graphs use (x @ W, row-major
// [in, out]): QKV fused into one [H, Q + 2 KV] matrix (plus its bias for Qwen2), gate and up
// fused into [H, 2 I] (gate columns first), the LM head as [H, V]. Values are rounded to the
// model's dtype (what the device holds), so the host reference and the device see the same
// numbers. They come from a fixed seed (scaled so activations stay near unit size through any
// depth) or from a safetensors checkpoint by the Hugging Face tensor names. Host weights exist
// only for models small enough to simulate functionally; timing mode never builds them.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/llm/model_config.h"
#include "runtime/llm/safetensors.h"

namespace sfumato::llm {

struct LayerWeights {
    std::vector<float> ln1, ln2;   // [H]
    std::vector<float> wqkv;       // [H, Q + 2 KV]
    std::vector<float> bqkv;       // [Q + 2 KV] (qkv_bias only)
    std::vector<float> wo;         // [Q, H]
    std::vector<float> w_gate_up;  // [H, 2 I] (dense MLP)
    std::vector<float> w_down;     // [I, H]
    std::vector<float> router;     // [H, E] (MoE)
    std::vector<float> e_gate_up;  // [E, H, 2 I]
    std::vector<float> e_down;     // [E, I, H]
};

struct ModelWeights {
    std::vector<float> embed;       // [V, H]
    std::vector<LayerWeights> layers;
    std::vector<float> final_norm;  // [H]
    std::vector<float> lm_head;     // [H, V]
};

// Rounds v to the model's dtype (float16 / bfloat16; float32 unchanged).
void round_to_model(std::vector<float>& v, const ModelConfig& c);
float round_to_model(float x, const ModelConfig& c);

ModelWeights random_weights(const ModelConfig& c, uint64_t seed);
// HF names: model.embed_tokens.weight, model.layers.N.{input_layernorm, post_attention_layernorm}.
// weight, model.layers.N.self_attn.{q,k,v,o}_proj.{weight,bias}, model.layers.N.mlp.{gate,up,down}_
// proj.weight (Mixtral: block_sparse_moe.gate.weight, block_sparse_moe.experts.E.{w1,w2,w3}.weight),
// model.norm.weight, lm_head.weight (absent when tied). A missing tensor or a shape that disagrees
// with the config is an InputError naming it.
ModelWeights load_weights(const ModelConfig& c, const Safetensors& st);

// Bytes of a model's weights on the device at `elem_bytes` per element (what the memory plan
// reserves; the LM head counts once more unless tied).
uint64_t weight_bytes(const ModelConfig& c, int elem_bytes);

}  // namespace sfumato::llm
