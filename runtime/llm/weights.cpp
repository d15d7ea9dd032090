// Model weights on the host (see weights.h).
#include "runtime/llm/weights.h"

#include <cmath>
#include <random>

#include "isa/dtype.h"
#include "runtime/ops/host_memory.h"
#include "sim/error.h"

namespace sfumato::llm {

namespace {

using Shape = std::vector<int64_t>;

// Uniform values of standard deviation `std` around `mean`, from a counter-free engine seeded per
// tensor (so adding a tensor never changes another's values).
std::vector<float> draw(uint64_t seed, uint64_t tensor, size_t n, double mean, double std, const ModelConfig& c) {
    std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + tensor);
    std::uniform_real_distribution<double> u(-std::sqrt(3.0), std::sqrt(3.0));
    std::vector<float> v(n);
    for (float& x : v) x = static_cast<float>(mean + std * u(rng));
    round_to_model(v, c);
    return v;
}

// HF Linear weights are [out, in]; the graphs multiply x @ W with W [in, out].
void put_transposed(std::vector<float>& dst, int64_t dst_cols, int64_t col0, const std::vector<float>& w,
                    int64_t out, int64_t in) {
    for (int64_t o = 0; o < out; ++o)
        for (int64_t i = 0; i < in; ++i)
            dst[static_cast<size_t>(i * dst_cols + col0 + o)] = w[static_cast<size_t>(o * in + i)];
}

}  // namespace

float round_to_model(float x, const ModelConfig& c) {
    if (c.torch_dtype == "float16") return isa::f16_to_f32(isa::f32_to_f16(x));
    if (c.torch_dtype == "bfloat16") return isa::bf16_to_f32(isa::f32_to_bf16(x));
    return x;
}

void round_to_model(std::vector<float>& v, const ModelConfig& c) {
    for (float& x : v) x = round_to_model(x, c);
}

uint64_t weight_bytes(const ModelConfig& c, int elem_bytes) {
    return static_cast<uint64_t>(c.params()) * static_cast<uint64_t>(elem_bytes);
}

ModelWeights random_weights(const ModelConfig& c, uint64_t seed) {
    const size_t h = static_cast<size_t>(c.hidden_size), in = static_cast<size_t>(c.intermediate_size);
    const size_t qkv = static_cast<size_t>(c.q_size() + 2 * c.kv_size()), q = static_cast<size_t>(c.q_size());
    const size_t e = static_cast<size_t>(c.num_experts), v = static_cast<size_t>(c.vocab_size);
    // A matrix with fan-in k gets std 1/sqrt(k): its output has the input's scale.
    auto fan = [](size_t k) { return 1.0 / std::sqrt(static_cast<double>(k)); };
    // fp32 host values, then their device image in the functional memory.
    ops::require_host_memory("llm " + c.name + " functional run (host weights and their device image)",
                             weight_bytes(c, 4 + 2));
    ModelWeights w;
    uint64_t id = 0;
    w.embed = draw(seed, id++, v * h, 0.0, 1.0, c);
    for (int64_t l = 0; l < c.num_layers; ++l) {
        LayerWeights L;
        L.ln1 = draw(seed, id++, h, 1.0, 0.1, c);
        L.ln2 = draw(seed, id++, h, 1.0, 0.1, c);
        L.wqkv = draw(seed, id++, h * qkv, 0.0, fan(h), c);
        if (c.qkv_bias) L.bqkv = draw(seed, id++, qkv, 0.0, 0.1, c);
        L.wo = draw(seed, id++, q * h, 0.0, fan(q), c);
        if (c.moe()) {
            L.router = draw(seed, id++, h * e, 0.0, fan(h), c);
            L.e_gate_up = draw(seed, id++, e * h * 2 * in, 0.0, fan(h), c);
            L.e_down = draw(seed, id++, e * in * h, 0.0, fan(in), c);
        } else {
            L.w_gate_up = draw(seed, id++, h * 2 * in, 0.0, fan(h), c);
            L.w_down = draw(seed, id++, in * h, 0.0, fan(in), c);
        }
        w.layers.push_back(std::move(L));
    }
    w.final_norm = draw(seed, id++, h, 1.0, 0.1, c);
    if (c.tie_word_embeddings) {
        w.lm_head.assign(h * v, 0.f);
        put_transposed(w.lm_head, c.vocab_size, 0, w.embed, c.vocab_size, c.hidden_size);
    } else {
        w.lm_head = draw(seed, id++, h * v, 0.0, fan(h), c);
    }
    return w;
}

ModelWeights load_weights(const ModelConfig& c, const Safetensors& st) {
    const int64_t h = c.hidden_size, in = c.intermediate_size, q = c.q_size(), kv = c.kv_size();
    const int64_t qkv = q + 2 * kv;
    auto get = [&](const std::string& name, const Shape& shape) {
        std::vector<float> v = st.floats(name, shape);
        round_to_model(v, c);
        return v;
    };
    ModelWeights w;
    w.embed = get("model.embed_tokens.weight", {c.vocab_size, h});
    for (int64_t l = 0; l < c.num_layers; ++l) {
        const std::string p = "model.layers." + std::to_string(l) + ".";
        LayerWeights L;
        L.ln1 = get(p + "input_layernorm.weight", {h});
        L.ln2 = get(p + "post_attention_layernorm.weight", {h});
        L.wqkv.assign(static_cast<size_t>(h * qkv), 0.f);
        put_transposed(L.wqkv, qkv, 0, get(p + "self_attn.q_proj.weight", {q, h}), q, h);
        put_transposed(L.wqkv, qkv, q, get(p + "self_attn.k_proj.weight", {kv, h}), kv, h);
        put_transposed(L.wqkv, qkv, q + kv, get(p + "self_attn.v_proj.weight", {kv, h}), kv, h);
        if (c.qkv_bias) {
            L.bqkv = get(p + "self_attn.q_proj.bias", {q});
            const auto bk = get(p + "self_attn.k_proj.bias", {kv});
            const auto bv = get(p + "self_attn.v_proj.bias", {kv});
            L.bqkv.insert(L.bqkv.end(), bk.begin(), bk.end());
            L.bqkv.insert(L.bqkv.end(), bv.begin(), bv.end());
        }
        L.wo.assign(static_cast<size_t>(q * h), 0.f);
        put_transposed(L.wo, h, 0, get(p + "self_attn.o_proj.weight", {h, q}), h, q);
        if (c.moe()) {
            const int64_t e = c.num_experts;
            L.router.assign(static_cast<size_t>(h * e), 0.f);
            put_transposed(L.router, e, 0, get(p + "block_sparse_moe.gate.weight", {e, h}), e, h);
            L.e_gate_up.assign(static_cast<size_t>(e * h * 2 * in), 0.f);
            L.e_down.assign(static_cast<size_t>(e * in * h), 0.f);
            for (int64_t x = 0; x < e; ++x) {
                const std::string ep = p + "block_sparse_moe.experts." + std::to_string(x) + ".";
                std::vector<float> gu(static_cast<size_t>(h * 2 * in)), dn(static_cast<size_t>(in * h));
                put_transposed(gu, 2 * in, 0, get(ep + "w1.weight", {in, h}), in, h);
                put_transposed(gu, 2 * in, in, get(ep + "w3.weight", {in, h}), in, h);
                put_transposed(dn, h, 0, get(ep + "w2.weight", {h, in}), h, in);
                std::copy(gu.begin(), gu.end(), L.e_gate_up.begin() + x * h * 2 * in);
                std::copy(dn.begin(), dn.end(), L.e_down.begin() + x * in * h);
            }
        } else {
            L.w_gate_up.assign(static_cast<size_t>(h * 2 * in), 0.f);
            put_transposed(L.w_gate_up, 2 * in, 0, get(p + "mlp.gate_proj.weight", {in, h}), in, h);
            put_transposed(L.w_gate_up, 2 * in, in, get(p + "mlp.up_proj.weight", {in, h}), in, h);
            L.w_down.assign(static_cast<size_t>(in * h), 0.f);
            put_transposed(L.w_down, h, 0, get(p + "mlp.down_proj.weight", {h, in}), h, in);
        }
        w.layers.push_back(std::move(L));
    }
    w.final_norm = get("model.norm.weight", {h});
    w.lm_head.assign(static_cast<size_t>(h * c.vocab_size), 0.f);
    const bool tied = c.tie_word_embeddings || !st.has("lm_head.weight");
    if (tied && !c.tie_word_embeddings) throw InputError("--weights: no tensor 'lm_head.weight' (and tie_word_embeddings is false)");
    put_transposed(w.lm_head, c.vocab_size, 0, tied ? w.embed : get("lm_head.weight", {c.vocab_size, h}), c.vocab_size, h);
    return w;
}

}  // namespace sfumato::llm
