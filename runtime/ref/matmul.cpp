// Host references of the matrix-multiply family in ONNX semantics, in double:
// - MatMul: numpy matmul (1-D operands get a dimension prepended (A) or
// appended (B) and lose
//   it again in the result; batch dimensions broadcast).
// - Gemm: Y = alpha * A' B' + beta * C with A' = transA ? A^T : A, B' likewise;
// C optional
//   (opset 11+) and unidirectionally broadcast to (M, N).
// - MatMulInteger: (A - a_zero_point)(B - b_zero_point) in exact integers,
// int32 result;
//   zero points scalar, or per row of A (M) / per column of B (N).
// The fused `activation` attribute (runtime/ref/activation.h) is applied last,
// as the graph's fusion pass means it. Results are rounded once to the output
// type.
#include <string>

#include "runtime/ref/activation.h"
#include "runtime/ref/node_checks.h"
#include "runtime/ref/ref_ops.h"
#include "sim/error.h"

namespace sfumato::ref {

namespace {

// Broadcast shape of two batch shapes (numpy rules), or throws naming the node.
std::vector<int64_t> broadcast(const RefNode& n, const std::vector<int64_t>& a,
                               const std::vector<int64_t>& b) {
    const size_t r = std::max(a.size(), b.size());
    std::vector<int64_t> out(r, 1);
    for (size_t i = 0; i < r; ++i) {
        const int64_t x = i < r - a.size() ? 1 : a[i - (r - a.size())];
        const int64_t y = i < r - b.size() ? 1 : b[i - (r - b.size())];
        if (x != y && x != 1 && y != 1)
            throw InputError("node '" + n.name + "' (" + n.op_type + "): batch dimensions " + shape_str(a) +
                             " and " + shape_str(b) + " do not broadcast");
        out[i] = x == 1 ? y : x;
    }
    return out;
}

// Offset (in matrices) of batch index `flat` of `out_batch` inside an operand
// of batch shape `b` (right-aligned, size-1 dims repeat).
int64_t batch_offset(const std::vector<int64_t>& out_batch, const std::vector<int64_t>& b, int64_t flat) {
    int64_t off = 0, stride = 1;
    for (size_t i = out_batch.size(); i-- > 0;) {
        const int64_t idx = flat % out_batch[i];
        flat /= out_batch[i];
        const size_t from_end = out_batch.size() - 1 - i;
        if (from_end < b.size()) {
            const int64_t d = b[b.size() - 1 - from_end];
            if (d != 1) off += idx * stride;
            stride *= d;
        }
    }
    return off;
}

// numpy matmul of a and b with per-element transforms (zero points) applied to
// the operands.
template <class FA, class FB>
HostTensor matmul(const RefNode& n, const HostTensor& a, const HostTensor& b, ElemType out, FA fa, FB fb) {
    if (a.rank() == 0 || b.rank() == 0)
        throw InputError("node '" + n.name + "' (" + n.op_type + "): MatMul operands must have rank >= 1");
    std::vector<int64_t> as = a.shape, bs = b.shape;
    if (as.size() == 1) as.insert(as.begin(), 1);
    if (bs.size() == 1) bs.push_back(1);
    const int64_t M = as[as.size() - 2], K = as.back(), N = bs.back();
    if (bs[bs.size() - 2] != K)
        throw InputError("node '" + n.name + "' (" + n.op_type + "): inner dimensions differ: A " +
                         shape_str(a.shape) + ", B " + shape_str(b.shape));
    const std::vector<int64_t> ab(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
    const std::vector<int64_t> ob = broadcast(n, ab, bb);
    int64_t batches = 1;
    for (int64_t d : ob) batches *= d;
    std::vector<int64_t> oshape = ob;
    if (a.rank() > 1) oshape.push_back(M);
    if (b.rank() > 1) oshape.push_back(N);
    HostTensor y(out, oshape);
    for (int64_t t = 0; t < batches; ++t) {
        const int64_t ao = batch_offset(ob, ab, t) * M * K, bo = batch_offset(ob, bb, t) * K * N;
        for (int64_t i = 0; i < M; ++i)
            for (int64_t j = 0; j < N; ++j) {
                double s = 0;
                for (int64_t kk = 0; kk < K; ++kk)
                    s += fa(a.data[ao + i * K + kk], i) * fb(b.data[bo + kk * N + j], j);
                y.data[(t * M + i) * N + j] = s;
            }
    }
    return y;
}

std::vector<HostTensor> ref_matmul(const RefNode& n, const std::vector<const HostTensor*>& in) {
    const HostTensor &a = need(n, in, 0, "A"), &b = need(n, in, 1, "B");
    auto id = [](double v, int64_t) { return v; };
    HostTensor y = matmul(n, a, b, a.type, id, id);
    apply_activation(activation_of(n.attrs), y);
    round_to_type(y);
    return {y};
}

std::vector<HostTensor> ref_gemm(const RefNode& n, const std::vector<const HostTensor*>& in) {
    const HostTensor &a = need(n, in, 0, "A"), &b = need(n, in, 1, "B");
    if (a.rank() != 2 || b.rank() != 2)
        throw InputError("node '" + n.name + "' (Gemm): A and B must be 2-D, got " + shape_str(a.shape) +
                         " and " + shape_str(b.shape));
    const bool ta = n.attrs.get_int("transA", 0) != 0, tb = n.attrs.get_int("transB", 0) != 0;
    const double alpha = n.attrs.get_float("alpha", 1.0), beta = n.attrs.get_float("beta", 1.0);
    const int64_t M = ta ? a.shape[1] : a.shape[0], K = ta ? a.shape[0] : a.shape[1];
    const int64_t KB = tb ? b.shape[1] : b.shape[0], N = tb ? b.shape[0] : b.shape[1];
    if (K != KB)
        throw InputError("node '" + n.name + "' (Gemm): inner dimensions differ: A' has " +
                         std::to_string(K) + " columns, B' " + std::to_string(KB) + " rows");
    const HostTensor* c = in.size() > 2 ? in[2] : nullptr;
    int64_t cm = 1, cn = 1;  // C's extent along M and N (1 = broadcast)
    if (c) {
        if (c->rank() > 2) throw InputError("node '" + n.name + "' (Gemm): C has rank > 2");
        cn = c->rank() >= 1 ? c->shape.back() : 1;
        cm = c->rank() == 2 ? c->shape[0] : 1;
        if ((cm != 1 && cm != M) || (cn != 1 && cn != N))
            throw InputError("node '" + n.name + "' (Gemm): C " + shape_str(c->shape) +
                             " does not broadcast to [" + std::to_string(M) + "," + std::to_string(N) + "]");
    }
    HostTensor y(a.type, {M, N});
    for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
            double s = 0;
            for (int64_t kk = 0; kk < K; ++kk)
                s += a.data[ta ? kk * M + i : i * K + kk] * b.data[tb ? j * K + kk : kk * N + j];
            double v = alpha * s;
            if (c) v += beta * c->data[(cm == 1 ? 0 : i) * cn + (cn == 1 ? 0 : j)];
            y.data[i * N + j] = v;
        }
    apply_activation(activation_of(n.attrs), y);
    round_to_type(y);
    return {y};
}

std::vector<HostTensor> ref_matmul_integer(const RefNode& n, const std::vector<const HostTensor*>& in) {
    const HostTensor &a = need(n, in, 0, "A"), &b = need(n, in, 1, "B");
    const HostTensor* za = in.size() > 2 ? in[2] : nullptr;
    const HostTensor* zb = in.size() > 3 ? in[3] : nullptr;
    // Scalar, or per row of A's last-but-one dimension / per column of B's last
    // dimension.
    auto zp = [](const HostTensor* z, int64_t idx) {
        if (!z || z->numel() == 0) return 0.0;
        return z->numel() == 1 ? z->data[0] : z->data[static_cast<size_t>(idx) % z->numel()];
    };
    auto fa = [&](double v, int64_t i) { return v - zp(za, i); };
    auto fb = [&](double v, int64_t j) { return v - zp(zb, j); };
    HostTensor y = matmul(n, a, b, ElemType::Int32, fa, fb);
    round_to_type(y);
    return {y};
}

}  // namespace

SFUMATO_REGISTER_REF(matmul, "MatMul", ref_matmul);
SFUMATO_REGISTER_REF(gemm, "Gemm", ref_gemm);
SFUMATO_REGISTER_REF(matmul_integer, "MatMulInteger", ref_matmul_integer);

}  // namespace sfumato::ref
