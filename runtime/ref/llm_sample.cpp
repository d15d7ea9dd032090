// Host reference of Sample and its counter-based generator (runtime/ref/llm_sample.h).
#include "runtime/ref/llm_sample.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "runtime/ref/ref_ops.h"
#include "sim/error.h"

namespace sfumato::ref {

namespace {
uint64_t mix(uint64_t z) {
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
}  // namespace

float sample_gumbel(uint64_t seed, uint64_t row, uint64_t rank) {
    const uint64_t h = mix(mix(mix(seed) ^ row) ^ rank);
    const double u = (static_cast<double>(h >> 11) + 0.5) * 0x1p-53;
    return static_cast<float>(-std::log(-std::log(u)));
}

int64_t sample_row(const double* logits, int64_t V, int64_t top_k, double temperature, uint64_t seed,
                   uint64_t row) {
    std::vector<int64_t> idx(static_cast<size_t>(V));
    std::iota(idx.begin(), idx.end(), 0);
    const int64_t k = std::min(top_k, V);
    std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), [&](int64_t a, int64_t b) {
        return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
    });
    if (k == 1) return idx[0];
    const double s = 1.0 / temperature;
    int64_t best = 0;
    float bz = 0;
    for (int64_t j = 0; j < k; ++j) {
        const float scaled = static_cast<float>(
            static_cast<double>(static_cast<float>(logits[idx[static_cast<size_t>(j)]])) * s);
        const float z =
            static_cast<float>(static_cast<double>(scaled) +
                               static_cast<double>(sample_gumbel(seed, row, static_cast<uint64_t>(j))));
        if (j == 0 || z > bz) bz = z, best = j;
    }
    return idx[static_cast<size_t>(best)];
}

namespace {

std::vector<HostTensor> ref_sample(const RefNode& n, const std::vector<const HostTensor*>& in) {
    auto fail = [&](const std::string& what) { throw InputError("node '" + n.name + "' (Sample): " + what); };
    if (in.empty() || !in[0]) fail("needs input logits");
    const HostTensor& x = *in[0];
    if (x.rank() != 2 || x.shape[1] < 1) fail("logits must be [B, V] with V >= 1, got " + shape_str(x.shape));
    const int64_t k = n.attrs.get_int("top_k", 1);
    const double temp = n.attrs.get_float("temperature", 1.0);
    if (k < 1) fail("attribute 'top_k' = " + std::to_string(k) + " must be >= 1");
    if (!(temp > 0) || !std::isfinite(temp)) fail("attribute 'temperature' must be a positive number");
    const uint64_t seed = static_cast<uint64_t>(n.attrs.get_int("seed", 0));
    const int64_t B = x.shape[0], V = x.shape[1];
    HostTensor y(ElemType::Int64, {B});
    for (int64_t b = 0; b < B; ++b)
        y.data[static_cast<size_t>(b)] = static_cast<double>(
            sample_row(x.data.data() + b * V, V, k, temp, seed, static_cast<uint64_t>(b)));
    return {y};
}

}  // namespace

SFUMATO_REGISTER_REF(sample, "Sample", ref_sample);

}  // namespace sfumato::ref
