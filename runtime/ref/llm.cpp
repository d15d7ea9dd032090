// Host references of the LLM operators (the sfumato-only node types RmsNorm,
// Rope and SwiGlu; contract in docs/llm.md, section "Operators"), in double,
// rounded once to the output type:
//   RmsNorm(x [T, H], weight [H], residual [T, H]?): s = x + residual (or x),
//     y = s / sqrt(mean(s^2) + epsilon) * weight, residual_out = s.
//   Rope(x [T, N, D], positions [T], cos_sin [P, R]): rotates the first R dims
//   of every head by
//     the angle row of the token's position (cos in columns [0, R/2), sin in
//     [R/2, R)); style "half" pairs (i, i + R/2) as rotate-half does,
//     "interleaved" pairs (2i, 2i + 1).
//   SwiGlu(gate_up [T, 2I]): y = silu(gate) * up, gate the first I columns.
// A position outside the cos_sin table is an error naming the token.
#include <cmath>

#include "runtime/ref/ref_ops.h"
#include "runtime/ref/node_checks.h"
#include "sim/error.h"

namespace sfumato::ref {

namespace {

std::vector<HostTensor> ref_rms_norm(const RefNode& n, const std::vector<const HostTensor*>& in) {
    if (in.size() < 2 || !in[0] || !in[1]) fail(n, "needs inputs x and weight");
    const HostTensor &x = *in[0], &w = *in[1];
    const HostTensor* r = in.size() > 2 ? in[2] : nullptr;
    if (x.rank() < 1) fail(n, "x must have rank >= 1");
    const int64_t H = x.shape.back();
    if (w.numel() != static_cast<uint64_t>(H))
        fail(n, "weight " + shape_str(w.shape) + " does not match H = " + std::to_string(H));
    if (r && r->shape != x.shape)
        fail(n, "residual " + shape_str(r->shape) + " differs from x " + shape_str(x.shape));
    const double eps = n.attrs.get_float("epsilon", 1e-6);
    HostTensor y(x.type, x.shape), s(x.type, x.shape);
    const uint64_t T = H ? x.numel() / static_cast<uint64_t>(H) : 0;
    for (uint64_t t = 0; t < T; ++t) {
        double ss = 0;
        for (int64_t h = 0; h < H; ++h) {
            const size_t i = static_cast<size_t>(t * static_cast<uint64_t>(H) + static_cast<uint64_t>(h));
            s.data[i] = x.data[i] + (r ? r->data[i] : 0.0);
            ss += s.data[i] * s.data[i];
        }
        const double rs = 1.0 / std::sqrt(ss / static_cast<double>(H) + eps);
        for (int64_t h = 0; h < H; ++h) {
            const size_t i = static_cast<size_t>(t * static_cast<uint64_t>(H) + static_cast<uint64_t>(h));
            y.data[i] = s.data[i] * rs * w.data[static_cast<size_t>(h)];
        }
    }
    round_to_type(y);
    round_to_type(s);
    if (r) return {y, s};
    return {y};
}

std::vector<HostTensor> ref_rope(const RefNode& n, const std::vector<const HostTensor*>& in) {
    if (in.size() < 3 || !in[0] || !in[1] || !in[2]) fail(n, "needs inputs x, positions and cos_sin");
    const HostTensor &x = *in[0], &pos = *in[1], &cs = *in[2];
    if (x.rank() != 3) fail(n, "x must be [T, N, D], got " + shape_str(x.shape));
    const int64_t T = x.shape[0], N = x.shape[1], D = x.shape[2];
    if (pos.numel() != static_cast<uint64_t>(T))
        fail(n, "positions " + shape_str(pos.shape) + " has not T = " + std::to_string(T) + " entries");
    if (cs.rank() != 2) fail(n, "cos_sin must be [P, R], got " + shape_str(cs.shape));
    const int64_t P = cs.shape[0], R = cs.shape[1];
    const int64_t rd = n.attrs.get_int("rotary_dim", R);
    if (rd != R || R % 2 != 0 || R > D || R <= 0)
        fail(n, "rotary_dim " + std::to_string(rd) + " must equal cos_sin's width " + std::to_string(R) +
                    ", be even and <= D = " + std::to_string(D));
    const std::string style = n.attrs.get_string("style", "half");
    if (style != "half" && style != "interleaved")
        fail(n, "style '" + style + "' (valid: half, interleaved)");
    const bool half = style == "half";
    HostTensor y = x;
    const int64_t h2 = R / 2;
    for (int64_t t = 0; t < T; ++t) {
        const int64_t p = static_cast<int64_t>(pos.data[static_cast<size_t>(t)]);
        if (p < 0 || p >= P)
            fail(n, "token " + std::to_string(t) + " has position " + std::to_string(p) +
                        " outside the table's " + std::to_string(P) + " rows");
        const double* row = cs.data.data() + p * R;
        for (int64_t hd = 0; hd < N; ++hd) {
            const size_t b = static_cast<size_t>((t * N + hd) * D);
            for (int64_t i = 0; i < h2; ++i) {
                const size_t a = b + static_cast<size_t>(half ? i : 2 * i),
                             c = b + static_cast<size_t>(half ? i + h2 : 2 * i + 1);
                const double co = row[i], si = row[h2 + i], x1 = x.data[a], x2 = x.data[c];
                y.data[a] = x1 * co - x2 * si;
                y.data[c] = x2 * co + x1 * si;
            }
        }
    }
    round_to_type(y);
    return {y};
}

std::vector<HostTensor> ref_swiglu(const RefNode& n, const std::vector<const HostTensor*>& in) {
    if (in.empty() || !in[0]) fail(n, "needs input gate_up");
    const HostTensor& x = *in[0];
    if (x.rank() < 1 || x.shape.back() % 2 != 0)
        fail(n, "gate_up's last dimension must be even, got " + shape_str(x.shape));
    const int64_t I = x.shape.back() / 2;
    std::vector<int64_t> os = x.shape;
    os.back() = I;
    HostTensor y(x.type, os);
    const uint64_t T = I ? y.numel() / static_cast<uint64_t>(I) : 0;
    for (uint64_t t = 0; t < T; ++t)
        for (int64_t i = 0; i < I; ++i) {
            const double g =
                x.data[static_cast<size_t>(t * 2 * static_cast<uint64_t>(I) + static_cast<uint64_t>(i))];
            const double u =
                x.data[static_cast<size_t>(t * 2 * static_cast<uint64_t>(I) + static_cast<uint64_t>(I + i))];
            y.data[static_cast<size_t>(t * static_cast<uint64_t>(I) + static_cast<uint64_t>(i))] =
                g / (1.0 + std::exp(-g)) * u;
        }
    round_to_type(y);
    return {y};
}

}  // namespace

SFUMATO_REGISTER_REF(rms_norm, "RmsNorm", ref_rms_norm);
SFUMATO_REGISTER_REF(rope, "Rope", ref_rope);
SFUMATO_REGISTER_REF(swiglu, "SwiGlu", ref_swiglu);

}  // namespace sfumato::ref
