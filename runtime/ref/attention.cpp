// Host reference of sfumato's FusedAttention node (runtime/ops/node_op.h), in double: for every
// leading index and query row i, s_j = scale * (q_i . k_j) [+ mask_ij] over the keys j visible
// to i (all, or j <= i with causal = 1), p = softmax(s), o_i = sum_j p_j v_j; rounded once to
// the output type. The mask is additive and broadcasts (numpy rules) to [.., Sq, Sk]. This is
// exactly what MatMul(Q, K^T) -> [Mul scale] -> [causal Where / Add mask] -> Softmax(last axis)
// -> MatMul(., V) computes in exact arithmetic.
#include <cmath>
#include <limits>

#include "runtime/ref/broadcast.h"
#include "runtime/ref/ref_ops.h"
#include "sim/error.h"

namespace sfumato::ref {

namespace {

std::vector<HostTensor> ref_fused_attention(const RefNode& n, const std::vector<const HostTensor*>& in) {
    auto fail = [&](const std::string& what) { throw InputError("node '" + n.name + "' (FusedAttention): " + what); };
    if (in.size() < 3 || !in[0] || !in[1] || !in[2]) fail("needs inputs Q, K and V");
    const HostTensor &q = *in[0], &k = *in[1], &v = *in[2];
    const HostTensor* mask = in.size() > 3 ? in[3] : nullptr;
    const size_t r = q.rank();
    if (r < 2 || k.rank() != r || v.rank() != r) fail("Q, K and V must have the same rank >= 2");
    for (size_t a = 0; a + 2 < r; ++a)
        if (k.shape[a] != q.shape[a] || v.shape[a] != q.shape[a])
            fail("leading dimensions of Q " + shape_str(q.shape) + ", K " + shape_str(k.shape) + " and V " +
                 shape_str(v.shape) + " differ");
    const int64_t Sq = q.shape[r - 2], D = q.shape[r - 1], Sk = k.shape[r - 2], Dv = v.shape[r - 1];
    if (k.shape[r - 1] != D) fail("Q and K head dimensions differ");
    if (v.shape[r - 2] != Sk) fail("K and V key counts differ");
    const double scale = n.attrs.get_float("scale", 1.0);
    const bool causal = n.attrs.get_int("causal", 0) != 0;
    std::vector<int64_t> sshape(q.shape.begin(), q.shape.end() - 1);
    sshape.push_back(Sk);
    HostTensor m;
    if (mask) {
        if (!broadcasts_to(mask->shape, sshape))
            fail("mask " + shape_str(mask->shape) + " does not broadcast to the scores " + shape_str(sshape));
        m = broadcast_to(*mask, sshape);
    }
    std::vector<int64_t> oshape = q.shape;
    oshape.back() = Dv;
    HostTensor o(q.type, oshape);
    const int64_t G = static_cast<int64_t>(q.numel() / static_cast<uint64_t>(Sq * D));
    std::vector<double> s(static_cast<size_t>(Sk));
    for (int64_t g = 0; g < G; ++g)
        for (int64_t i = 0; i < Sq; ++i) {
            const int64_t last = causal ? std::min(Sk - 1, i) : Sk - 1;
            double mx = -std::numeric_limits<double>::infinity();
            for (int64_t j = 0; j <= last; ++j) {
                double d = 0;
                for (int64_t x = 0; x < D; ++x)
                    d += q.data[static_cast<size_t>((g * Sq + i) * D + x)] * k.data[static_cast<size_t>((g * Sk + j) * D + x)];
                d *= scale;
                if (mask) d += m.data[static_cast<size_t>((g * Sq + i) * Sk + j)];
                s[static_cast<size_t>(j)] = d;
                mx = std::max(mx, d);
            }
            double sum = 0;
            for (int64_t j = 0; j <= last; ++j) sum += s[static_cast<size_t>(j)] = std::exp(s[static_cast<size_t>(j)] - mx);
            for (int64_t x = 0; x < Dv; ++x) {
                double acc = 0;
                for (int64_t j = 0; j <= last; ++j)
                    acc += s[static_cast<size_t>(j)] * v.data[static_cast<size_t>((g * Sk + j) * Dv + x)];
                o.data[static_cast<size_t>((g * Sq + i) * Dv + x)] = last < 0 ? 0.0 : acc / sum;
            }
        }
    round_to_type(o);
    return {o};
}

}  // namespace

SFUMATO_REGISTER_REF(fused_attention, "FusedAttention", ref_fused_attention);

}  // namespace sfumato::ref
