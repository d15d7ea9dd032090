// Host reference model (see reference.h).
#include "runtime/llm/reference.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "sim/error.h"

namespace sfumato::llm {

namespace {

// y[t, n] = sum_k x[t, k] w[k, n] (+ b[n]), accumulated in fp32.
std::vector<float> matmul(const std::vector<float>& x, const float* w, int64_t t, int64_t k, int64_t n,
                          const std::vector<float>* bias = nullptr) {
    std::vector<float> y(static_cast<size_t>(t * n), 0.f);
    for (int64_t i = 0; i < t; ++i) {
        float* yr = y.data() + i * n;
        for (int64_t j = 0; j < k; ++j) {
            const float a = x[static_cast<size_t>(i * k + j)];
            const float* wr = w + j * n;
            for (int64_t c = 0; c < n; ++c) yr[c] += a * wr[c];
        }
        if (bias)
            for (int64_t c = 0; c < n; ++c) yr[c] += (*bias)[static_cast<size_t>(c)];
    }
    return y;
}

}  // namespace

int64_t argmax(const std::vector<float>& v) {
    int64_t best = 0;
    for (size_t i = 1; i < v.size(); ++i)
        if (v[i] > v[static_cast<size_t>(best)]) best = static_cast<int64_t>(i);
    return best;
}

Reference::Reference(const ModelConfig& c, const ModelWeights& w, int64_t max_len, Quant quant)
    : m_c(c), m_w(w), m_cos_sin(rope_cos_sin(c, max_len)), m_table_len(max_len) {
    if (quant == Quant::None) return;
    const int64_t H = c.hidden_size, I = c.intermediate_size, QKV = c.q_size() + 2 * c.kv_size();
    for (const LayerWeights& L : w.layers) {
        QuantLayer q;
        q.wqkv = quantize_weight(L.wqkv, H, QKV);
        q.wo = quantize_weight(L.wo, c.q_size(), H);
        if (!c.moe()) {
            q.w_gate_up = quantize_weight(L.w_gate_up, H, 2 * I);
            q.w_down = quantize_weight(L.w_down, I, H);
        }
        m_quant.push_back(std::move(q));
    }
}

std::vector<float> Reference::linear(size_t l, const std::string& role, const std::vector<float>& x, int64_t t,
                                     int64_t k, int64_t n, const std::vector<float>* bias) const {
    const LayerWeights& L = m_w.layers[l];
    std::vector<float> y;
    if (!m_quant.empty()) {
        const QuantLayer& q = m_quant[l];
        const QuantizedMatrix& m = role == "wqkv" ? q.wqkv : role == "wo" ? q.wo : role == "w_gate_up" ? q.w_gate_up : q.w_down;
        y = w8a8_linear(x, m, t, k, n, m_c);
        // The bias is a separate Add on the device, after the matmul's rounding.
        if (bias)
            for (int64_t r = 0; r < t; ++r)
                for (int64_t c = 0; c < n; ++c) {
                    float& v = y[static_cast<size_t>(r * n + c)];
                    v = round_to_model(v + (*bias)[static_cast<size_t>(c)], m_c);
                }
        return y;
    }
    const std::vector<float>& w = role == "wqkv" ? L.wqkv : role == "wo" ? L.wo : role == "w_gate_up" ? L.w_gate_up : L.w_down;
    y = matmul(x, w.data(), t, k, n, bias);
    round_to_model(y, m_c);
    return y;
}

int64_t Reference::length(int seq) const {
    return seq >= 0 && static_cast<size_t>(seq) < m_seqs.size() ? m_seqs[static_cast<size_t>(seq)].len : 0;
}

std::vector<float> Reference::mlp(size_t l, const std::vector<float>& h, int64_t t) const {
    const LayerWeights& L = m_w.layers[l];
    const int64_t H = m_c.hidden_size, I = m_c.intermediate_size;
    auto swiglu_down = [&](const std::vector<float>& x, const float* gu, const float* down, int64_t rows) {
        std::vector<float> g = matmul(x, gu, rows, H, 2 * I);
        round_to_model(g, m_c);
        std::vector<float> a(static_cast<size_t>(rows * I));
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t i = 0; i < I; ++i) {
                const float gate = g[static_cast<size_t>(r * 2 * I + i)], up = g[static_cast<size_t>(r * 2 * I + I + i)];
                a[static_cast<size_t>(r * I + i)] = gate / (1.f + std::exp(-gate)) * up;
            }
        round_to_model(a, m_c);
        std::vector<float> d = matmul(a, down, rows, I, H);
        round_to_model(d, m_c);
        return d;
    };
    if (!m_c.moe()) {
        const std::vector<float> g = linear(l, "w_gate_up", h, t, H, 2 * I);
        std::vector<float> a(static_cast<size_t>(t * I));
        for (int64_t r = 0; r < t; ++r)
            for (int64_t i = 0; i < I; ++i) {
                const float gate = g[static_cast<size_t>(r * 2 * I + i)], up = g[static_cast<size_t>(r * 2 * I + I + i)];
                a[static_cast<size_t>(r * I + i)] = round_to_model(gate / (1.f + std::exp(-gate)) * up, m_c);
            }
        return linear(l, "w_down", a, t, I, H);
    }
    // Mixtral's MoE as the contract's MoeRouter defines it: the k largest router logits (ties to
    // the lower expert), weights = softmax over the chosen logits (= softmax, top-k, renormalise)
    // stored in the model's dtype; each chosen expert's SwiGLU MLP; the weighted sum in fp32.
    const int64_t E = m_c.num_experts, K = m_c.experts_per_token;
    std::vector<float> logits = matmul(h, L.router.data(), t, H, E);
    round_to_model(logits, m_c);
    std::vector<float> y(static_cast<size_t>(t * H), 0.f);
    for (int64_t r = 0; r < t; ++r) {
        const float* lr = logits.data() + r * E;
        std::vector<int64_t> order(static_cast<size_t>(E));
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return lr[a] > lr[b]; });
        const float mx = lr[order[0]];
        float sum = 0;
        for (int64_t k = 0; k < K; ++k) sum += std::exp(lr[order[static_cast<size_t>(k)]] - mx);
        const std::vector<float> row(h.begin() + r * H, h.begin() + (r + 1) * H);
        for (int64_t k = 0; k < K; ++k) {
            const int64_t e = order[static_cast<size_t>(k)];
            const float wk = round_to_model(std::exp(lr[e] - mx) / sum, m_c);
            const std::vector<float> d = swiglu_down(row, L.e_gate_up.data() + e * H * 2 * I, L.e_down.data() + e * I * H, 1);
            for (int64_t c = 0; c < H; ++c) y[static_cast<size_t>(r * H + c)] += wk * d[static_cast<size_t>(c)];
        }
    }
    round_to_model(y, m_c);
    return y;
}

// One decoder layer over t new tokens at positions pos0..pos0+t-1; x is the previous layer's
// output (or the embeddings), resid the running residual (empty before layer 0). Returns the
// layer's output (the MLP's, before the next norm's residual add).
std::vector<float> Reference::layer(size_t l, Cache& cache, int64_t pos0, std::vector<float>& x,
                                    std::vector<float>& resid, int64_t t) {
    const ModelConfig& c = m_c;
    const LayerWeights& L = m_w.layers[l];
    const int64_t H = c.hidden_size, D = c.head_dim, NH = c.num_heads, NKV = c.num_kv_heads;
    const int64_t Q = c.q_size(), KV = c.kv_size(), QKV = Q + 2 * KV;
    auto rmsnorm = [&](const std::vector<float>& w) {
        std::vector<float> y(static_cast<size_t>(t * H));
        if (resid.empty()) resid.assign(static_cast<size_t>(t * H), 0.f);
        for (int64_t r = 0; r < t; ++r) {
            float ss = 0;
            for (int64_t i = 0; i < H; ++i) {
                float& s = resid[static_cast<size_t>(r * H + i)];
                s = round_to_model(x[static_cast<size_t>(r * H + i)] + s, c);
                ss += s * s;
            }
            const float inv = 1.f / std::sqrt(ss / static_cast<float>(H) + static_cast<float>(c.rms_norm_eps));
            for (int64_t i = 0; i < H; ++i)
                y[static_cast<size_t>(r * H + i)] =
                    round_to_model(resid[static_cast<size_t>(r * H + i)] * inv * w[static_cast<size_t>(i)], c);
        }
        return y;
    };
    std::vector<float> h = rmsnorm(L.ln1);
    std::vector<float> qkv = linear(l, "wqkv", h, t, H, QKV, c.qkv_bias ? &L.bqkv : nullptr);
    // RoPE (rotate-half) on Q and K heads.
    const int64_t half = D / 2;
    for (int64_t r = 0; r < t; ++r) {
        const float* cs = m_cos_sin.data() + (pos0 + r) * D;
        for (int64_t head = 0; head < NH + NKV; ++head) {
            float* v = qkv.data() + r * QKV + head * D;
            for (int64_t i = 0; i < half; ++i) {
                const float a = v[i], b = v[i + half], co = cs[i], si = cs[half + i];
                v[i] = round_to_model(a * co - b * si, c);
                v[i + half] = round_to_model(b * co + a * si, c);
            }
        }
    }
    auto& kc = cache.k[l];
    auto& vc = cache.v[l];
    for (int64_t r = 0; r < t; ++r) {
        kc.insert(kc.end(), qkv.begin() + r * QKV + Q, qkv.begin() + r * QKV + Q + KV);
        vc.insert(vc.end(), qkv.begin() + r * QKV + Q + KV, qkv.begin() + (r + 1) * QKV);
    }
    const float scale = 1.f / std::sqrt(static_cast<float>(D));
    std::vector<float> o(static_cast<size_t>(t * Q));
    for (int64_t r = 0; r < t; ++r) {
        const int64_t ctx = pos0 + r + 1;
        for (int64_t hd = 0; hd < NH; ++hd) {
            const int64_t g = hd / (NH / NKV);
            const float* qv = qkv.data() + r * QKV + hd * D;
            std::vector<float> s(static_cast<size_t>(ctx));
            float mx = -INFINITY;
            for (int64_t j = 0; j < ctx; ++j) {
                float dot = 0;
                for (int64_t i = 0; i < D; ++i) dot += qv[i] * kc[static_cast<size_t>(j * KV + g * D + i)];
                s[static_cast<size_t>(j)] = dot * scale;
                mx = std::max(mx, s[static_cast<size_t>(j)]);
            }
            float sum = 0;
            for (float& e : s) sum += e = std::exp(e - mx);
            for (int64_t i = 0; i < D; ++i) {
                float acc = 0;
                for (int64_t j = 0; j < ctx; ++j) acc += s[static_cast<size_t>(j)] * vc[static_cast<size_t>(j * KV + g * D + i)];
                o[static_cast<size_t>(r * Q + hd * D + i)] = round_to_model(acc / sum, c);
            }
        }
    }
    x = linear(l, "wo", o, t, Q, H);
    h = rmsnorm(L.ln2);
    return mlp(l, h, t);
}

std::vector<float> Reference::step(int seq, const std::vector<int64_t>& tokens) {
    const ModelConfig& c = m_c;
    if (seq < 0) throw InputError("reference: negative sequence id");
    if (static_cast<size_t>(seq) >= m_seqs.size()) m_seqs.resize(static_cast<size_t>(seq) + 1);
    Cache& cache = m_seqs[static_cast<size_t>(seq)];
    if (cache.k.empty()) {
        cache.k.resize(static_cast<size_t>(c.num_layers));
        cache.v.resize(static_cast<size_t>(c.num_layers));
    }
    const int64_t t = static_cast<int64_t>(tokens.size()), H = c.hidden_size, pos0 = cache.len;
    if (pos0 + t > m_table_len)
        throw InputError("reference: sequence " + std::to_string(seq) + " grows to " + std::to_string(pos0 + t) +
                         " tokens, past the " + std::to_string(m_table_len) + " it was built for");
    std::vector<float> x(static_cast<size_t>(t * H)), resid;
    for (int64_t r = 0; r < t; ++r) {
        const int64_t id = tokens[static_cast<size_t>(r)];
        if (id < 0 || id >= c.vocab_size) throw InputError("reference: token " + std::to_string(id) + " outside the vocabulary");
        std::copy(m_w.embed.begin() + id * H, m_w.embed.begin() + (id + 1) * H, x.begin() + r * H);
    }
    for (size_t l = 0; l < m_w.layers.size(); ++l) x = layer(l, cache, pos0, x, resid, t);
    cache.len += t;
    // Final norm and LM head on the last token only.
    std::vector<float> last(x.end() - H, x.end()), res(resid.end() - H, resid.end());
    float ss = 0;
    for (int64_t i = 0; i < H; ++i) {
        res[static_cast<size_t>(i)] = round_to_model(last[static_cast<size_t>(i)] + res[static_cast<size_t>(i)], c);
        ss += res[static_cast<size_t>(i)] * res[static_cast<size_t>(i)];
    }
    const float inv = 1.f / std::sqrt(ss / static_cast<float>(H) + static_cast<float>(c.rms_norm_eps));
    for (int64_t i = 0; i < H; ++i)
        last[static_cast<size_t>(i)] = round_to_model(res[static_cast<size_t>(i)] * inv * m_w.final_norm[static_cast<size_t>(i)], c);
    std::vector<float> logits = matmul(last, m_w.lm_head.data(), 1, H, c.vocab_size);
    round_to_model(logits, c);
    return logits;
}

std::vector<std::vector<int64_t>> Reference::generate(const std::vector<std::vector<int64_t>>& prompts, int steps) {
    std::vector<std::vector<int64_t>> out(prompts.size());
    std::vector<int64_t> next(prompts.size());
    for (size_t s = 0; s < prompts.size(); ++s) next[s] = argmax(step(static_cast<int>(s), prompts[s]));
    for (int k = 0; k < steps; ++k)
        for (size_t s = 0; s < prompts.size(); ++s) {
            out[s].push_back(next[s]);
            if (k + 1 < steps) next[s] = argmax(step(static_cast<int>(s), {next[s]}));
        }
    return out;
}

}  // namespace sfumato::llm
