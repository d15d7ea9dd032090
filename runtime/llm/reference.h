// The host reference implementation of a model (fp32 arithmetic), written from the operator
// contract (docs/llm.md "Operators") and the Hugging Face modelling code's semantics: token
// embedding, per layer RMSNorm (fused with the residual add), fused QKV projection (+ bias),
// RoPE (rotate-half) on Q and K, grouped-query causal attention over a per-sequence KV cache,
// output projection, RMSNorm, SwiGLU MLP (or the Mixtral MoE: softmax router, top-k,
// renormalised weights), final RMSNorm and the LM head on each sequence's last token; greedy
// sampling takes the lowest index among equal maxima. Every tensor the device stores between
// operators is rounded to the model's dtype at the same points, so the reference and the
// simulated chip differ only by the order of fp32 accumulations inside an operator.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/llm/model_config.h"
#include "runtime/llm/quant.h"
#include "runtime/llm/weights.h"

namespace sfumato::llm {

class Reference {
public:
    // max_len: the longest sequence it will hold (the RoPE table's length; dynamic scaling
    // depends on it, as the step graphs' table does).
    // quant: W8A8 computes the quantised projections as the device does (quant.h: per-channel
    // int8 weights, per-token DynamicQuant, exact int32 products, dequant in fp32).
    Reference(const ModelConfig& c, const ModelWeights& w, int64_t max_len, Quant quant = Quant::None);
    // Appends `tokens` to sequence `seq` (created on first use) and returns the logits [V] of
    // its last token.
    std::vector<float> step(int seq, const std::vector<int64_t>& tokens);
    // Greedy generation: each prompt is prefilled, then `steps` tokens are generated per
    // sequence (the first from the prefill's logits). Returns the generated tokens per sequence.
    std::vector<std::vector<int64_t>> generate(const std::vector<std::vector<int64_t>>& prompts, int steps);
    int64_t length(int seq) const;

private:
    struct Cache {
        std::vector<std::vector<float>> k, v;  // per layer: [len, KV * D]
        int64_t len = 0;
    };
    std::vector<float> layer(size_t l, Cache& cache, int64_t pos0, std::vector<float>& x, std::vector<float>& resid,
                             int64_t t);
    std::vector<float> mlp(size_t l, const std::vector<float>& h, int64_t t) const;
    // x [t, k] @ the layer weight `role` (its int8 form under W8A8), rounded to the model's dtype.
    std::vector<float> linear(size_t l, const std::string& role, const std::vector<float>& x, int64_t t, int64_t k,
                              int64_t n, const std::vector<float>* bias = nullptr) const;
    struct QuantLayer {
        QuantizedMatrix wqkv, wo, w_gate_up, w_down;
    };
    std::vector<QuantLayer> m_quant;  // W8A8 only
    const ModelConfig& m_c;
    const ModelWeights& m_w;
    std::vector<float> m_cos_sin;
    int64_t m_table_len = 0;
    std::vector<Cache> m_seqs;
};

// Index of the largest value (lowest index on ties).
int64_t argmax(const std::vector<float>& v);

}  // namespace sfumato::llm
