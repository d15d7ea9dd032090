// Host references of the mixture-of-experts and W8A8 operators (contract: docs/llm.md,
// "Operators"):
//   MoeRouter(logits [T, E]) -> weights [T, k], experts [T, k]: top-k per row (ties to the lower
//     index), weights = softmax over the k chosen logits (Mixtral's softmax, top-k, renormalise).
//   MoePermute(x [T, H], experts [T, k]) -> x_perm [T k, H], rows [T, k], sizes [E]: entries
//     grouped by expert (runtime/ref/llm_moe.h), x_perm[rows[t, j]] = x[t].
//   GroupedMatmul(x [R, K], w [E, K, N], sizes [E]) -> y [R, N]: rows [off_e, off_e + sizes[e])
//     times w[e]; the sizes must sum to R.
//   MoeCombine(y_perm [R, H], rows [T, k], weights [T, k]) -> y [T, H] = sum_j weights[t, j] *
//     y_perm[rows[t, j]].
//   MoeFfn(x, logits, w_gate_up [E, H, 2I], w_down [E, I, H]) -> y [T, H]: the chain router,
//     permute, grouped gate/up matmul, SwiGlu, grouped down matmul, combine, each stage rounded
//     to the activation type as the device stores it.
//   DynamicQuant(x [T, H]) -> q [T, H] int8, scale [T] fp32: per-token symmetric int8 in the
//     kernel's own fp32 arithmetic (bit-exact).
//   QuantMatMul(a [M, K] int8, w [K, N] int8, w_scale [N], a_scale [M]) -> y [M, N] fp16/bf16:
//     exact int32 products, then fl32(fl32(acc) * w_scale[n]) * a_scale[m] in fp32, rounded once
//     to the output type (bit-exact with the kernel; overflow of the output type gives inf).
// The float references compute in double and round once to the output type.
#include "runtime/ref/llm_moe.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "runtime/ref/node_checks.h"
#include "runtime/ref/ref_ops.h"
#include "sim/error.h"

namespace sfumato::ref {

std::vector<int64_t> moe_top_k(const double* logits, int64_t E, int64_t k) {
    std::vector<int64_t> idx(static_cast<size_t>(E));
    for (int64_t e = 0; e < E; ++e) idx[static_cast<size_t>(e)] = e;
    std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) { return logits[a] > logits[b]; });
    idx.resize(static_cast<size_t>(std::min(k, E)));
    return idx;
}

MoeGrouping moe_group(const std::vector<int64_t>& experts, int64_t E, const std::string& who) {
    MoeGrouping g;
    g.sizes.assign(static_cast<size_t>(E), 0);
    for (size_t i = 0; i < experts.size(); ++i) {
        if (experts[i] < 0 || experts[i] >= E)
            throw InputError(who + ": entry " + std::to_string(i) + " has expert " + std::to_string(experts[i]) +
                             " outside [0, " + std::to_string(E) + ")");
        ++g.sizes[static_cast<size_t>(experts[i])];
    }
    std::vector<int64_t> next(static_cast<size_t>(E), 0);
    for (int64_t e = 1; e < E; ++e)
        next[static_cast<size_t>(e)] = next[static_cast<size_t>(e - 1)] + g.sizes[static_cast<size_t>(e - 1)];
    g.rows.resize(experts.size());
    for (size_t i = 0; i < experts.size(); ++i) g.rows[i] = next[static_cast<size_t>(experts[i])]++;
    return g;
}

float quant_row(const float* x, int64_t n, int8_t* q) {
    float amax = kQuantFloor;
    for (int64_t i = 0; i < n; ++i) amax = std::max(amax, std::fabs(x[i]));
    const float inv = 127.0f / amax, scale = amax / 127.0f;
    for (int64_t i = 0; i < n; ++i) {
        const float v = std::nearbyint(x[i] * inv);  // default rounding: to nearest even
        // A NaN quantises to 0 as on the device's DynamicQuant; std::clamp would pass it on to an
        // undefined float-to-int8 conversion (UBSan's finding).
        q[i] = std::isnan(v) ? int8_t{0} : static_cast<int8_t>(std::clamp(v, -128.0f, 127.0f));
    }
    return scale;
}

namespace {

void need_rank(const RefNode& n, const HostTensor& t, size_t r, const char* what) {
    if (t.rank() != r) fail(n, std::string("input '") + what + "' must have rank " + std::to_string(r) + ", got " + shape_str(t.shape));
}

std::vector<int64_t> ints_of(const HostTensor& t) {
    std::vector<int64_t> v(t.data.size());
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int64_t>(t.data[i]);
    return v;
}

std::vector<HostTensor> ref_router(const RefNode& n, const std::vector<const HostTensor*>& in) {
    const HostTensor& x = need(n, in, 0, "logits");
    need_rank(n, x, 2, "logits");
    const int64_t T = x.shape[0], E = x.shape[1], k = n.attrs.get_int("top_k", 2);
    if (k < 1 || k > E) fail(n, "attribute 'top_k' = " + std::to_string(k) + " must be in [1, " + std::to_string(E) + "] (the experts)");
    HostTensor w(x.type, {T, k}), ids(ElemType::Int64, {T, k});
    for (int64_t t = 0; t < T; ++t) {
        const double* row = x.data.data() + t * E;
        const std::vector<int64_t> top = moe_top_k(row, E, k);
        double s = 0;
        for (int64_t j = 0; j < k; ++j) s += std::exp(row[top[static_cast<size_t>(j)]] - row[top[0]]);
        for (int64_t j = 0; j < k; ++j) {
            const size_t o = static_cast<size_t>(t * k + j);
            ids.data[o] = static_cast<double>(top[static_cast<size_t>(j)]);
            w.data[o] = std::exp(row[top[static_cast<size_t>(j)]] - row[top[0]]) / s;
        }
    }
    round_to_type(w);
    return {w, ids};
}

std::vector<HostTensor> ref_permute(const RefNode& n, const std::vector<const HostTensor*>& in) {
    const HostTensor &x = need(n, in, 0, "x"), &ex = need(n, in, 1, "experts");
    need_rank(n, x, 2, "x");
    need_rank(n, ex, 2, "experts");
    const int64_t T = x.shape[0], H = x.shape[1], k = ex.shape[1], E = n.attrs.get_int("num_experts", 0);
    if (ex.shape[0] != T) fail(n, "experts " + shape_str(ex.shape) + " does not match x's " + std::to_string(T) + " tokens");
    if (E < 1) fail(n, "attribute 'num_experts' must be >= 1");
    const MoeGrouping g = moe_group(ints_of(ex), E, "node '" + n.name + "' (" + n.op_type + ")");
    HostTensor xp(x.type, {T * k, H}), rows(ElemType::Int64, {T, k}), sizes(ElemType::Int64, {E});
    for (int64_t i = 0; i < T * k; ++i) {
        const int64_t r = g.rows[static_cast<size_t>(i)];
        rows.data[static_cast<size_t>(i)] = static_cast<double>(r);
        std::copy_n(x.data.begin() + (i / k) * H, H, xp.data.begin() + r * H);
    }
    for (int64_t e = 0; e < E; ++e) sizes.data[static_cast<size_t>(e)] = static_cast<double>(g.sizes[static_cast<size_t>(e)]);
    return {xp, rows, sizes};
}

std::vector<HostTensor> ref_grouped_matmul(const RefNode& n, const std::vector<const HostTensor*>& in) {
    const HostTensor &x = need(n, in, 0, "x"), &w = need(n, in, 1, "weight"), &sz = need(n, in, 2, "group_sizes");
    need_rank(n, x, 2, "x");
    need_rank(n, w, 3, "weight");
    const int64_t R = x.shape[0], K = x.shape[1], E = w.shape[0], N = w.shape[2];
    if (w.shape[1] != K) fail(n, "weight " + shape_str(w.shape) + " does not match x's K = " + std::to_string(K));
    if (sz.numel() != static_cast<uint64_t>(E)) fail(n, "group_sizes " + shape_str(sz.shape) + " has not E = " + std::to_string(E) + " entries");
    HostTensor y(x.type, {R, N});
    int64_t r0 = 0;
    for (int64_t e = 0; e < E; ++e) {
        const int64_t s = static_cast<int64_t>(sz.data[static_cast<size_t>(e)]);
        if (s < 0 || r0 + s > R) fail(n, "group_sizes: expert " + std::to_string(e) + " takes rows past R = " + std::to_string(R));
        for (int64_t r = r0; r < r0 + s; ++r)
            for (int64_t c = 0; c < N; ++c) {
                double acc = 0;
                for (int64_t q = 0; q < K; ++q) acc += x.data[static_cast<size_t>(r * K + q)] * w.data[static_cast<size_t>((e * K + q) * N + c)];
                y.data[static_cast<size_t>(r * N + c)] = acc;
            }
        r0 += s;
    }
    if (r0 != R) fail(n, "group_sizes sum to " + std::to_string(r0) + ", not R = " + std::to_string(R));
    round_to_type(y);
    return {y};
}

std::vector<HostTensor> ref_combine(const RefNode& n, const std::vector<const HostTensor*>& in) {
    const HostTensor &yp = need(n, in, 0, "y_perm"), &rows = need(n, in, 1, "rows"), &w = need(n, in, 2, "weights");
    need_rank(n, yp, 2, "y_perm");
    need_rank(n, rows, 2, "rows");
    const int64_t R = yp.shape[0], H = yp.shape[1], T = rows.shape[0], k = rows.shape[1];
    if (w.shape != rows.shape) fail(n, "weights " + shape_str(w.shape) + " differs from rows " + shape_str(rows.shape));
    HostTensor y(yp.type, {T, H});
    for (int64_t t = 0; t < T; ++t)
        for (int64_t j = 0; j < k; ++j) {
            const int64_t r = static_cast<int64_t>(rows.data[static_cast<size_t>(t * k + j)]);
            if (r < 0 || r >= R) fail(n, "rows: entry " + std::to_string(t * k + j) + " = " + std::to_string(r) + " outside y_perm's " + std::to_string(R) + " rows");
            const double s = w.data[static_cast<size_t>(t * k + j)];
            for (int64_t h = 0; h < H; ++h) y.data[static_cast<size_t>(t * H + h)] += s * yp.data[static_cast<size_t>(r * H + h)];
        }
    round_to_type(y);
    return {y};
}

std::vector<HostTensor> ref_moe_ffn(const RefNode& n, const std::vector<const HostTensor*>& in) {
    const HostTensor &x = need(n, in, 0, "x"), &lg = need(n, in, 1, "logits"), &wgu = need(n, in, 2, "w_gate_up"),
                     &wd = need(n, in, 3, "w_down");
    need_rank(n, lg, 2, "logits");
    RefNode r = n;
    r.op_type = "MoeRouter";
    const std::vector<HostTensor> rt = run_ref(r, {&lg});
    r.op_type = "MoePermute";
    r.attrs.set("num_experts", Attr::of_int(lg.shape[1]));
    const std::vector<HostTensor> pm = run_ref(r, {&x, &rt[1]});
    r.op_type = "GroupedMatmul";
    const std::vector<HostTensor> h1 = run_ref(r, {&pm[0], &wgu, &pm[2]});
    r.op_type = "SwiGlu";
    const std::vector<HostTensor> h2 = run_ref(r, {&h1[0]});
    r.op_type = "GroupedMatmul";
    const std::vector<HostTensor> h3 = run_ref(r, {&h2[0], &wd, &pm[2]});
    r.op_type = "MoeCombine";
    return run_ref(r, {&h3[0], &pm[1], &rt[0]});
}

std::vector<HostTensor> ref_dynamic_quant(const RefNode& n, const std::vector<const HostTensor*>& in) {
    const HostTensor& x = need(n, in, 0, "x");
    if (x.rank() < 1) fail(n, "x must have rank >= 1");
    const int64_t H = x.shape.back(), T = H ? static_cast<int64_t>(x.numel()) / H : 0;
    std::vector<int64_t> ss(x.shape.begin(), x.shape.end() - 1);
    HostTensor q(ElemType::Int8, x.shape), s(ElemType::Float, ss);
    std::vector<float> row(static_cast<size_t>(H));
    std::vector<int8_t> qr(static_cast<size_t>(H));
    for (int64_t t = 0; t < T; ++t) {
        for (int64_t h = 0; h < H; ++h) row[static_cast<size_t>(h)] = static_cast<float>(x.data[static_cast<size_t>(t * H + h)]);
        s.data[static_cast<size_t>(t)] = quant_row(row.data(), H, qr.data());
        for (int64_t h = 0; h < H; ++h) q.data[static_cast<size_t>(t * H + h)] = qr[static_cast<size_t>(h)];
    }
    return {q, s};
}

std::vector<HostTensor> ref_quant_matmul(const RefNode& n, const std::vector<const HostTensor*>& in) {
    const HostTensor &a = need(n, in, 0, "a"), &w = need(n, in, 1, "w"), &ws = need(n, in, 2, "w_scale"),
                     &as = need(n, in, 3, "a_scale");
    need_rank(n, a, 2, "a");
    need_rank(n, w, 2, "w");
    const int64_t M = a.shape[0], K = a.shape[1], N = w.shape[1];
    if (w.shape[0] != K) fail(n, "w " + shape_str(w.shape) + " does not match a's K = " + std::to_string(K));
    if (ws.numel() != static_cast<uint64_t>(N)) fail(n, "w_scale " + shape_str(ws.shape) + " has not N = " + std::to_string(N) + " entries");
    if (as.numel() != static_cast<uint64_t>(M)) fail(n, "a_scale " + shape_str(as.shape) + " has not M = " + std::to_string(M) + " entries");
    const std::string od = n.attrs.get_string("output_dtype", "fp16");
    const ElemType ot = od == "bf16" ? ElemType::Bfloat16 : od == "fp16" ? ElemType::Float16 : ElemType::Undefined;
    if (ot == ElemType::Undefined) fail(n, "attribute 'output_dtype' = '" + od + "' (valid: fp16, bf16)");
    HostTensor y(ot, {M, N});
    for (int64_t m = 0; m < M; ++m)
        for (int64_t c = 0; c < N; ++c) {
            int64_t acc = 0;
            for (int64_t q = 0; q < K; ++q)
                acc += static_cast<int64_t>(a.data[static_cast<size_t>(m * K + q)]) * static_cast<int64_t>(w.data[static_cast<size_t>(q * N + c)]);
            const int32_t acc32 = static_cast<int32_t>(static_cast<uint32_t>(acc));  // the cube wraps
            const float v = static_cast<float>(acc32) * static_cast<float>(ws.data[static_cast<size_t>(c)]);
            y.data[static_cast<size_t>(m * N + c)] = static_cast<double>(v * static_cast<float>(as.data[static_cast<size_t>(m)]));
        }
    round_to_type(y);
    return {y};
}

}  // namespace

SFUMATO_REGISTER_REF(moe_router, "MoeRouter", ref_router);
SFUMATO_REGISTER_REF(moe_permute, "MoePermute", ref_permute);
SFUMATO_REGISTER_REF(grouped_matmul, "GroupedMatmul", ref_grouped_matmul);
SFUMATO_REGISTER_REF(moe_combine, "MoeCombine", ref_combine);
SFUMATO_REGISTER_REF(moe_ffn, "MoeFfn", ref_moe_ffn);
SFUMATO_REGISTER_REF(dynamic_quant, "DynamicQuant", ref_dynamic_quant);
SFUMATO_REGISTER_REF(quant_matmul, "QuantMatMul", ref_quant_matmul);

}  // namespace sfumato::ref
