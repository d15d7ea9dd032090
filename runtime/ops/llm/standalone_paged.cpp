// `sfumato kernel paged_attention`: the PagedAttention node
// (runtime/ops/llm/paged_attention.h) on random q, k, v and caches from a fixed
// seed, with a block table that scatters every sequence over shuffled cache
// blocks:
//   paged_attention --query-lens 1,1,37 --context-lens 300,20,64 --heads 8
//   --kv-heads 2
//                   --head-dim 128 [--block-size 128] [--dtype fp16|bf16]
// A sequence with query length 1 is a decode, longer ones (chunked) prefill
// after their context. Checked against the host reference in functional mode
// with FusedAttention's rule: inputs in [-1, 1], u the input type's unit
// roundoff; P rounded to the input type moves o by at most u, fp16 scores (fp16
// inputs) move o by at most 2 u sqrt(D), fp16 partial products add u; rtol 2 u
// for the output rounding.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "runtime/ops/norm/standalone_forms.h"
#include "sim/error.h"

namespace sfumato::ops::llm {

namespace {

std::unique_ptr<IOp> make_paged_form(const OpArgs& a, const DeviceInfo& dev) {
    const std::string op = "paged_attention";
    const std::vector<int64_t> ql = norm::ints_arg(a, op, "query_lens"),
                               cl = norm::ints_arg(a, op, "context_lens");
    if (ql.empty() || ql.size() != cl.size())
        throw InputError(
            "operator 'paged_attention': arguments 'query_lens' and 'context_lens' must list the same "
            "sequences");
    for (size_t s = 0; s < ql.size(); ++s)
        if (ql[s] < 0 || cl[s] < 0 || ql[s] + cl[s] > (1 << 20))
            throw InputError("operator 'paged_attention': argument 'query_lens' / 'context_lens': sequence " +
                             std::to_string(s) + " has a negative or too long length");
    const int64_t NH = static_cast<int64_t>(arg_u64(a, op, "heads", 1, 1024));
    const int64_t NKV = static_cast<int64_t>(arg_u64(a, op, "kv_heads", 1, 1024));
    const int64_t D = static_cast<int64_t>(arg_u64(a, op, "head_dim", 16, 512));
    const int64_t BS = static_cast<int64_t>(arg_u64(a, op, "block_size", 1, 1 << 16));
    const std::string dt = arg_str(a, "dtype");
    if (dt != "fp16" && dt != "bf16")
        throw InputError("operator 'paged_attention': argument 'dtype' = '" + dt + "' (valid: fp16, bf16)");
    const ref::ElemType t = dt == "fp16" ? ref::ElemType::Float16 : ref::ElemType::Bfloat16;
    int64_t T = 0, max_blocks = 1, NB = 1;
    for (size_t s = 0; s < ql.size(); ++s) {
        T += ql[s];
        const int64_t nb = (ql[s] + cl[s] + BS - 1) / BS;
        max_blocks = std::max(max_blocks, nb);
        NB += nb;
    }
    // Every sequence's blocks drawn from a shuffled list (one spare block nobody
    // uses).
    std::vector<int64_t> ids(static_cast<size_t>(NB));
    std::iota(ids.begin(), ids.end(), 0);
    std::mt19937 rng(2024);
    std::shuffle(ids.begin(), ids.end(), rng);
    std::vector<int64_t> table(ql.size() * static_cast<size_t>(max_blocks), -1);
    size_t next = 0;
    for (size_t s = 0; s < ql.size(); ++s)
        for (int64_t b = 0; b * BS < ql[s] + cl[s]; ++b)
            table[s * static_cast<size_t>(max_blocks) + static_cast<size_t>(b)] = ids[next++];
    NodeDesc n;
    n.op_type = "PagedAttention";
    n.attrs.set("num_heads", ref::Attr::of_int(NH));
    n.attrs.set("num_kv_heads", ref::Attr::of_int(NKV));
    n.attrs.set("head_dim", ref::Attr::of_int(D));
    n.attrs.set("block_size", ref::Attr::of_int(BS));
    n.attrs.set("scale", ref::Attr::of_float(1.0 / std::sqrt(static_cast<double>(D))));
    n.attrs.set("query_lens", ref::Attr::of_ints(ql));
    n.attrs.set("context_lens", ref::Attr::of_ints(cl));
    n.attrs.set("block_table", ref::Attr::of_ints(table));
    n.attrs.set("max_blocks", ref::Attr::of_int(max_blocks));
    n.inputs = {make_tensor({T, NH, D}, t), make_tensor({T, NKV, D}, t), make_tensor({T, NKV, D}, t),
                make_tensor({NB, BS, NKV, D}, t), make_tensor({NB, BS, NKV, D}, t)};
    const double u = t == ref::ElemType::Float16 ? 0x1p-11 : 0x1p-8;
    Tolerance tol;
    tol.atol = t == ref::ElemType::Float16 ? u * (3 + 2 * std::sqrt(static_cast<double>(D))) : 2 * u;
    tol.rtol = 2 * u;
    return norm::standalone(std::move(n), std::vector<InputGen>(5, uniform_input(-1, 1)), tol, dev, op);
}

}  // namespace

SFUMATO_REGISTER_OP(
    paged_attention_form,
    OpSpec{"paged_attention",
           "PagedAttention node: prefill, chunked prefill and decode sequences over a paged KV cache (LLM)",
           {{"query_lens", "", "new tokens per sequence a,b,... (1 = decode)"},
            {"context_lens", "", "tokens already cached per sequence"},
            {"heads", "", "query heads"},
            {"kv_heads", "", "key/value heads (GQA: divides heads; 1 = MQA)"},
            {"head_dim", "128", "head size (multiple of 16)"},
            {"block_size", "128", "cache block size (multiple of 64)"},
            {"dtype", "fp16", "fp16 | bf16"}},
           [](const OpArgs& a, const DeviceInfo& d) { return make_paged_form(a, d); }});
SFUMATO_OP_SAMPLE(paged_attention_form, "paged_attention",
                  {{"query_lens", "1,20"},
                   {"context_lens", "70,10"},
                   {"heads", "4"},
                   {"kv_heads", "2"},
                   {"head_dim", "32"},
                   {"block_size", "64"}});

}  // namespace sfumato::ops::llm
