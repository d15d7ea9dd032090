// W8A8 for the LLM host programs (`--quant w8a8`): which weights are quantised, how, and the host
// reference of a quantised linear layer. A linear layer's weight W [K, N] (x @ W) becomes int8
// with one fp32 scale per output channel n: s_n = amax_k |W[k, n]| / 127, q = round-to-nearest-
// even(W * (127 / amax)) saturated to int8 (the fp32 steps DynamicQuant takes per token, here per
// column). At run time the activation is quantised per token (DynamicQuant) and QuantMatMul
// multiplies in int8 with int32 accumulation and dequantises in its epilogue. Quantised: the QKV,
// output, gate/up and down projections of every layer. Kept in the model's dtype: the embedding
// table (a lookup, not a matmul), the norms, the QKV bias, the MoE router (its logits choose the
// experts: int8 error there changes which experts run, not just their outputs), the experts'
// grouped matmuls (no int8 grouped matmul kernel yet) and the LM head (the logits decide the
// greedy token; it is 2 % of Llama-2-7B's weights, and W8A8 recipes commonly keep it in 16 bits).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/llm/model_config.h"

namespace sfumato::llm {

enum class Quant : uint8_t { None, W8A8 };
// "none" | "w8a8"; anything else throws InputError naming --quant and the value.
Quant parse_quant(const std::string& s);
const char* quant_name(Quant q);

// Whether the layer weight `role` ("wqkv", "wo", "w_gate_up", "w_down", ...) is int8 under `q`.
bool quantized_weight(Quant q, const std::string& role);

struct QuantizedMatrix {
    std::vector<int8_t> q;     // [K, N]
    std::vector<float> scale;  // [N]
};
// Per-output-channel int8 of W [K, N] (row-major, x @ W).
QuantizedMatrix quantize_weight(const std::vector<float>& w, int64_t K, int64_t N);

// The W8A8 linear layer as the device computes it (DynamicQuant per row of x [T, K], exact int32
// products, y = fl32(fl32(acc) * w_scale[n]) * a_scale[t]), rounded to the model's dtype.
std::vector<float> w8a8_linear(const std::vector<float>& x, const QuantizedMatrix& w, int64_t t, int64_t K,
                               int64_t N, const ModelConfig& c);

// Bytes of a model's weights on the device under `q` (int8 weights plus their fp32 scales; the
// rest at the model's 2 bytes).
uint64_t weight_bytes(const ModelConfig& c, Quant q);

}  // namespace sfumato::llm
