// W8A8 weights and the quantised linear layer's host reference (see quant.h).
#include "runtime/llm/quant.h"

#include <algorithm>
#include <cmath>

#include "runtime/llm/weights.h"
#include "runtime/ref/llm_moe.h"
#include "sim/error.h"

namespace sfumato::llm {

Quant parse_quant(const std::string& s) {
    if (s == "none") return Quant::None;
    if (s == "w8a8") return Quant::W8A8;
    throw InputError("--quant must be none or w8a8, not '" + s + "'");
}

const char* quant_name(Quant q) { return q == Quant::W8A8 ? "w8a8" : "none"; }

bool quantized_weight(Quant q, const std::string& role) {
    return q == Quant::W8A8 && (role == "wqkv" || role == "wo" || role == "w_gate_up" || role == "w_down");
}

QuantizedMatrix quantize_weight(const std::vector<float>& w, int64_t K, int64_t N) {
    if (static_cast<int64_t>(w.size()) != K * N) throw InputError("quantize_weight: size mismatch");
    QuantizedMatrix m;
    m.q.resize(w.size());
    m.scale.assign(static_cast<size_t>(N), 0.f);
    std::vector<float> amax(static_cast<size_t>(N), ref::kQuantFloor);
    for (int64_t k = 0; k < K; ++k)
        for (int64_t n = 0; n < N; ++n)
            amax[static_cast<size_t>(n)] =
                std::max(amax[static_cast<size_t>(n)], std::fabs(w[static_cast<size_t>(k * N + n)]));
    for (int64_t n = 0; n < N; ++n) {
        const float a = amax[static_cast<size_t>(n)];
        m.scale[static_cast<size_t>(n)] = a / 127.0f;
        const float inv = 127.0f / a;
        for (int64_t k = 0; k < K; ++k) {
            const size_t i = static_cast<size_t>(k * N + n);
            m.q[i] = static_cast<int8_t>(std::clamp(std::nearbyint(w[i] * inv), -128.0f, 127.0f));
        }
    }
    return m;
}

std::vector<float> w8a8_linear(const std::vector<float>& x, const QuantizedMatrix& w, int64_t t, int64_t K,
                               int64_t N, const ModelConfig& c) {
    std::vector<float> y(static_cast<size_t>(t * N));
    std::vector<int8_t> qa(static_cast<size_t>(K));
    std::vector<int32_t> acc(static_cast<size_t>(N));
    for (int64_t r = 0; r < t; ++r) {
        const float a_scale = ref::quant_row(x.data() + r * K, K, qa.data());
        std::fill(acc.begin(), acc.end(), 0);
        for (int64_t k = 0; k < K; ++k) {
            const int32_t a = qa[static_cast<size_t>(k)];
            const int8_t* wr = w.q.data() + k * N;
            for (int64_t n = 0; n < N; ++n) acc[static_cast<size_t>(n)] += a * wr[n];
        }
        for (int64_t n = 0; n < N; ++n) {
            const float v = static_cast<float>(acc[static_cast<size_t>(n)]) * w.scale[static_cast<size_t>(n)];
            y[static_cast<size_t>(r * N + n)] = round_to_model(v * a_scale, c);
        }
    }
    return y;
}

uint64_t weight_bytes(const ModelConfig& c, Quant q) {
    if (q == Quant::None) return weight_bytes(c, 2);
    const int64_t H = c.hidden_size, I = c.intermediate_size, QKV = c.q_size() + 2 * c.kv_size();
    // Per layer: the quantised matrices' K x N elements and N scales.
    int64_t elems = H * QKV + c.q_size() * H, scales = QKV + H;
    if (!c.moe()) {
        elems += H * 2 * I + I * H;
        scales += 2 * I + H;
    }
    const uint64_t layers = static_cast<uint64_t>(c.num_layers);
    const uint64_t fp16 = weight_bytes(c, 2) - layers * static_cast<uint64_t>(elems) * 2;
    return fp16 + layers * (static_cast<uint64_t>(elems) + static_cast<uint64_t>(scales) * 4);
}

}  // namespace sfumato::llm
