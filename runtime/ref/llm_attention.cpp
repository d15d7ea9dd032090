// Host reference of PagedAttention (contract: docs/llm.md, "Operators"), in
// double. For every sequence s (query_lens[s] new tokens after context_lens[s]
// cached ones, in order), the new k and v rows are first written at cache
// positions context_lens[s] + i (block block_table[s][pos / BS], slot pos % BS)
// of a copy of the caches; then query i of the sequence (absolute position p =
// context_lens[s] + i) attends to cache positions 0..p of its own sequence,
// head h using kv head h / (NH / NKV): o = softmax(scale * q k^T) v, rounded
// once to the output type. The reference returns o only (the graph treats the
// caches as device state the kernel writes).
#include <cmath>
#include <limits>

#include "runtime/ref/llm_shapes.h"
#include "runtime/ref/ref_ops.h"
#include "sim/error.h"

namespace sfumato::ref {

PagedLayout paged_layout(const std::string& node, const Attrs& a, const std::vector<int64_t>& q,
                         const std::vector<int64_t>& k, const std::vector<int64_t>& v,
                         const std::vector<int64_t>& kc, const std::vector<int64_t>& vc) {
    auto fail = [&](const std::string& what) {
        throw InputError("node '" + node + "' (PagedAttention): " + what);
    };
    PagedLayout l;
    l.NH = a.get_int("num_heads", 0), l.NKV = a.get_int("num_kv_heads", 0), l.D = a.get_int("head_dim", 0);
    l.BS = a.get_int("block_size", 0), l.max_blocks = a.get_int("max_blocks", 0);
    l.scale = a.get_float("scale", l.D > 0 ? 1.0 / std::sqrt(static_cast<double>(l.D)) : 1.0);
    l.query_lens = a.get_ints("query_lens", {});
    l.context_lens = a.get_ints("context_lens", {});
    l.block_table = a.get_ints("block_table", {});
    if (l.NH <= 0 || l.NKV <= 0 || l.D <= 0 || l.BS <= 0 || l.max_blocks <= 0)
        fail("attributes num_heads, num_kv_heads, head_dim, block_size and max_blocks must be positive");
    if (l.NH % l.NKV)
        fail("num_heads " + std::to_string(l.NH) + " is not a multiple of num_kv_heads " +
             std::to_string(l.NKV));
    if (q.size() != 3 || q[1] != l.NH || q[2] != l.D)
        fail("q must be [T, num_heads, head_dim], got " + shape_str(q));
    l.T = q[0];
    const std::vector<int64_t> kv{l.T, l.NKV, l.D};
    if (k != kv || v != kv)
        fail("k and v must be [T, num_kv_heads, head_dim] = " + shape_str(kv) + ", got " + shape_str(k) +
             " and " + shape_str(v));
    if (kc.size() != 4 || kc[1] != l.BS || kc[2] != l.NKV || kc[3] != l.D || vc != kc)
        fail("k_cache and v_cache must be [NB, block_size, num_kv_heads, head_dim], got " + shape_str(kc) +
             " and " + shape_str(vc));
    l.NB = kc[0];
    const size_t S = l.query_lens.size();
    if (S == 0 || l.context_lens.size() != S)
        fail("query_lens and context_lens must list the same sequences (at least one)");
    if (l.block_table.size() != S * static_cast<size_t>(l.max_blocks))
        fail("block_table has " + std::to_string(l.block_table.size()) +
             " entries, expected sequences x max_blocks = " +
             std::to_string(S * static_cast<size_t>(l.max_blocks)));
    int64_t sum = 0;
    for (size_t s = 0; s < S; ++s) {
        const int64_t ql = l.query_lens[s], cl = l.context_lens[s];
        if (ql < 0 || cl < 0) fail("sequence " + std::to_string(s) + " has a negative length");
        if (cl + ql > l.max_blocks * l.BS)
            fail("sequence " + std::to_string(s) + " needs " + std::to_string(cl + ql) +
                 " cache positions, max_blocks x block_size = " + std::to_string(l.max_blocks * l.BS));
        for (int64_t b = 0; b * l.BS < cl + ql; ++b) {
            const int64_t id = l.block_table[s * static_cast<size_t>(l.max_blocks) + static_cast<size_t>(b)];
            if (id < 0 || id >= l.NB)
                fail("sequence " + std::to_string(s) + " block " + std::to_string(b) + " is " +
                     std::to_string(id) + " (cache has " + std::to_string(l.NB) + " blocks)");
        }
        sum += ql;
    }
    if (sum != l.T)
        fail("query_lens sum to " + std::to_string(sum) + ", q has T = " + std::to_string(l.T) + " tokens");
    return l;
}

int64_t PagedLayout::slot(size_t s, int64_t pos) const {
    return block_table[s * static_cast<size_t>(max_blocks) + static_cast<size_t>(pos / BS)] * BS + pos % BS;
}

namespace {

std::vector<HostTensor> ref_paged_attention(const RefNode& n, const std::vector<const HostTensor*>& in) {
    if (in.size() < 5)
        throw InputError("node '" + n.name + "' (PagedAttention): needs q, k, v, k_cache and v_cache");
    for (size_t i = 0; i < 5; ++i)
        if (!in[i])
            throw InputError("node '" + n.name + "' (PagedAttention): input " + std::to_string(i) +
                             " is missing");
    const HostTensor &q = *in[0], &k = *in[1], &v = *in[2];
    const PagedLayout l =
        paged_layout(n.name, n.attrs, q.shape, k.shape, v.shape, in[3]->shape, in[4]->shape);
    HostTensor kc = *in[3], vc = *in[4];
    const int64_t NKV = l.NKV, D = l.D, grp = l.NH / l.NKV;
    int64_t t0 = 0;
    for (size_t s = 0; s < l.query_lens.size(); ++s) {
        for (int64_t i = 0; i < l.query_lens[s]; ++i)
            for (int64_t h = 0; h < NKV * D; ++h) {
                const size_t dst = static_cast<size_t>(l.slot(s, l.context_lens[s] + i) * NKV * D + h);
                kc.data[dst] = k.data[static_cast<size_t>((t0 + i) * NKV * D + h)];
                vc.data[dst] = v.data[static_cast<size_t>((t0 + i) * NKV * D + h)];
            }
        t0 += l.query_lens[s];
    }
    round_to_type(kc);  // the cache holds the rows in its own type
    round_to_type(vc);
    HostTensor o(q.type, q.shape);
    std::vector<double> sc;
    t0 = 0;
    for (size_t s = 0; s < l.query_lens.size(); ++s) {
        for (int64_t i = 0; i < l.query_lens[s]; ++i) {
            const int64_t p = l.context_lens[s] + i, t = t0 + i;
            sc.assign(static_cast<size_t>(p + 1), 0.0);
            for (int64_t h = 0; h < l.NH; ++h) {
                const int64_t kh = h / grp;
                const double* qr = q.data.data() + (t * l.NH + h) * D;
                double mx = -std::numeric_limits<double>::infinity();
                for (int64_t x = 0; x <= p; ++x) {
                    const double* kr = kc.data.data() + (l.slot(s, x) * NKV + kh) * D;
                    double d = 0;
                    for (int64_t e = 0; e < D; ++e) d += qr[e] * kr[e];
                    sc[static_cast<size_t>(x)] = d * l.scale;
                    mx = std::max(mx, sc[static_cast<size_t>(x)]);
                }
                double sum = 0;
                for (double& e : sc) sum += e = std::exp(e - mx);
                double* orow = o.data.data() + (t * l.NH + h) * D;
                for (int64_t x = 0; x <= p; ++x) {
                    const double* vr = vc.data.data() + (l.slot(s, x) * NKV + kh) * D;
                    for (int64_t e = 0; e < D; ++e) orow[e] += sc[static_cast<size_t>(x)] / sum * vr[e];
                }
            }
        }
        t0 += l.query_lens[s];
    }
    round_to_type(o);
    return {o};
}

}  // namespace

SFUMATO_REGISTER_REF(paged_attention, "PagedAttention", ref_paged_attention);

}  // namespace sfumato::ref
