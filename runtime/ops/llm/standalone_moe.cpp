// `sfumato kernel` forms of the mixture-of-experts and W8A8 operators (standalone face,
// runtime/ops/standalone.h):
//   moe            --tokens T --hidden H --inter I --experts E [--top-k k] [--host 0|1] [--dtype]
//                  (MoeFfn: router, permute, gate/up grouped matmul, SwiGlu, down, combine)
//   moe_router     --tokens T --experts E [--top-k k] [--dtype]
//   grouped_matmul --rows R --k K --n N --experts E [--host 0|1] [--dtype]
//   dynamic_quant  --rows T --cols H [--dtype]
//   matmul_w8a8    --m M --k K --n N [--output-dtype fp16|bf16]
// Inputs from fixed seeds. The routing is a property of the inputs: the forms draw the logits
// (uniform, rounded to the dtype) or the rows' experts (skewed towards low experts, so loads are
// ragged and high experts often get none) here, compute the experts on the host with the
// reference's selection, and with --host 1 (default) give them to the node as `host_experts` /
// `host_group_sizes`, so timing mode takes the same cycles as functional mode. Tolerances:
// docs/operators.md ("MoE and W8A8").
#include <cmath>
#include <random>

#include "runtime/ops/norm/standalone_forms.h"
#include "runtime/ref/llm_moe.h"
#include "sim/error.h"

namespace sfumato::ops::llm {

namespace {

using norm::float_dtype_arg;
using norm::output_tolerance;
using norm::standalone;

int64_t moe_dim(const OpArgs& a, const std::string& op, const std::string& key) {
    return static_cast<int64_t>(arg_u64(a, op, key, 1, 1ull << 31));
}

InputGen fixed(std::vector<double> v) {
    return [v](ref::HostTensor& t, std::mt19937&) {
        for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = v.at(i);
    };
}

// Uniform values rounded to t.
std::vector<double> draw(int64_t n, double lo, double hi, ref::ElemType t, uint32_t seed) {
    ref::HostTensor h(t, {n});
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> d(lo, hi);
    for (double& x : h.data) x = d(rng);
    ref::round_to_type(h);
    return h.data;
}

int64_t top_k_arg(const OpArgs& a, const std::string& op, int64_t E) {
    const int64_t k = static_cast<int64_t>(arg_u64(a, op, "top_k", 1, 1024));
    if (k > E)
        throw InputError("operator '" + op + "': argument 'top_k' = " + std::to_string(k) + " exceeds the " +
                         std::to_string(E) + " experts");
    return k;
}

// The experts of each token, as the router selects them.
std::vector<int64_t> route(const std::vector<double>& logits, int64_t T, int64_t E, int64_t k) {
    std::vector<int64_t> ex;
    for (int64_t t = 0; t < T; ++t)
        for (int64_t e : ref::moe_top_k(logits.data() + t * E, E, k)) ex.push_back(e);
    return ex;
}

std::unique_ptr<IOp> make_moe_form(const OpArgs& a, const DeviceInfo& dev) {
    const std::string op = "moe";
    const ref::ElemType t = float_dtype_arg(a, op);
    const int64_t T = moe_dim(a, op, "tokens"), H = moe_dim(a, op, "hidden"), I = moe_dim(a, op, "inter"),
                  E = moe_dim(a, op, "experts"), k = top_k_arg(a, op, E);
    const std::vector<double> logits = draw(T * E, -2, 2, t, 31);
    NodeDesc n;
    n.op_type = "MoeFfn";
    n.attrs.set("top_k", ref::Attr::of_int(k));
    if (arg_u64(a, op, "host", 0, 1)) n.attrs.set("host_experts", ref::Attr::of_ints(route(logits, T, E, k)));
    n.inputs = {make_tensor({T, H}, t), make_tensor({T, E}, t), make_tensor({E, H, 2 * I}, t),
                make_tensor({E, I, H}, t)};
    const double gh = 1.0 / std::sqrt(static_cast<double>(H)), gi = 1.0 / std::sqrt(static_cast<double>(I));
    // Five stages, each rounded to the dtype on both sides: an intermediate that rounds the other
    // way moves the output by up to one ulp of the dtype at the intermediates' scale (about 0.1
    // with these inputs); see docs/operators.md.
    const double ulp = t == ref::ElemType::Float16 ? std::ldexp(1.0, -10) : t == ref::ElemType::Bfloat16 ? std::ldexp(1.0, -7) : 0;
    return standalone(std::move(n), {uniform_input(-1, 1), fixed(logits), uniform_input(-gh, gh), uniform_input(-gi, gi)},
                      output_tolerance(t, 1e-5, 0.1 * ulp + 1e-6), dev, op);
}

std::unique_ptr<IOp> make_router_form(const OpArgs& a, const DeviceInfo& dev) {
    const std::string op = "moe_router";
    const ref::ElemType t = float_dtype_arg(a, op);
    const int64_t T = moe_dim(a, op, "tokens"), E = moe_dim(a, op, "experts"), k = top_k_arg(a, op, E);
    NodeDesc n;
    n.op_type = "MoeRouter";
    n.attrs.set("top_k", ref::Attr::of_int(k));
    n.inputs = {make_tensor({T, E}, t)};
    return standalone(std::move(n), {fixed(draw(T * E, -4, 4, t, 37))}, output_tolerance(t, 1e-5, 1e-6), dev, op);
}

std::unique_ptr<IOp> make_gmm_form(const OpArgs& a, const DeviceInfo& dev) {
    const std::string op = "grouped_matmul";
    const ref::ElemType t = float_dtype_arg(a, op);
    const int64_t R = moe_dim(a, op, "rows"), K = moe_dim(a, op, "k"), N = moe_dim(a, op, "n"), E = moe_dim(a, op, "experts");
    std::mt19937 rng(41);
    std::uniform_real_distribution<double> u(0, 1);
    std::vector<int64_t> sizes(static_cast<size_t>(E), 0);
    for (int64_t r = 0; r < R; ++r) ++sizes[static_cast<size_t>(std::min<int64_t>(E - 1, static_cast<int64_t>(E * u(rng) * u(rng))))];
    NodeDesc n;
    n.op_type = "GroupedMatmul";
    if (arg_u64(a, op, "host", 0, 1)) n.attrs.set("host_group_sizes", ref::Attr::of_ints(sizes));
    n.inputs = {make_tensor({R, K}, t), make_tensor({E, K, N}, t), make_tensor({E}, ref::ElemType::Int64)};
    std::vector<double> sz(sizes.begin(), sizes.end());
    // fp32 accumulation of K products: relative error about K 2^-24 of the sum of |products|,
    // inputs in [-1, 1].
    const double acc = static_cast<double>(K) * std::ldexp(1.0, -24);
    return standalone(std::move(n), {uniform_input(-1, 1), uniform_input(-1, 1), fixed(sz)}, output_tolerance(t, 1e-6, acc),
                      dev, op);
}

std::unique_ptr<IOp> make_quant_form(const OpArgs& a, const DeviceInfo& dev) {
    const std::string op = "dynamic_quant";
    const ref::ElemType t = float_dtype_arg(a, op);
    NodeDesc n;
    n.op_type = "DynamicQuant";
    n.inputs = {make_tensor({moe_dim(a, op, "rows"), moe_dim(a, op, "cols")}, t)};
    return standalone(std::move(n), {uniform_input(-8, 8)}, {0, 0}, dev, op);  // bit-exact
}

std::unique_ptr<IOp> make_w8a8_form(const OpArgs& a, const DeviceInfo& dev) {
    const std::string op = "matmul_w8a8";
    const std::string out = arg_str(a, "output_dtype");
    if (out != "fp16" && out != "bf16")
        throw InputError("operator '" + op + "': argument 'output_dtype' = '" + out + "' (valid: fp16, bf16)");
    const int64_t M = moe_dim(a, op, "m"), K = moe_dim(a, op, "k"), N = moe_dim(a, op, "n");
    NodeDesc n;
    n.op_type = "QuantMatMul";
    n.attrs.set("output_dtype", ref::Attr::of_string(out));
    n.inputs = {make_tensor({M, K}, ref::ElemType::Int8), make_tensor({K, N}, ref::ElemType::Int8),
                make_tensor({N}, ref::ElemType::Float), make_tensor({M}, ref::ElemType::Float)};
    // Per-channel and per-token scales of int8 quantisation of unit-sized values.
    return standalone(std::move(n),
                      {integer_input(-128, 127), integer_input(-128, 127), uniform_input(1e-3, 2e-2), uniform_input(1e-3, 2e-2)},
                      {0, 0}, dev, op);  // bit-exact (docs/operators.md)
}

const char* kMoeDtype = "fp16 | bf16 | fp32";

}  // namespace

SFUMATO_REGISTER_OP(moe_form,
                    OpSpec{"moe",
                           "Mixture-of-experts MLP (MoeFfn): router top-k, permute, grouped gate/up matmul, SwiGlu, "
                           "grouped down matmul, weighted combine (LLM)",
                           {{"tokens", "", "tokens T"},
                            {"hidden", "", "hidden size H"},
                            {"inter", "", "expert intermediate size I"},
                            {"experts", "", "experts E"},
                            {"top_k", "2", "experts per token k"},
                            {"host", "1", "1: routing also known on the host (attribute host_experts)"},
                            {"dtype", "fp16", kMoeDtype}},
                           [](const OpArgs& a, const DeviceInfo& d) { return make_moe_form(a, d); }});
SFUMATO_REGISTER_OP(moe_router_form,
                    OpSpec{"moe_router",
                           "MoE router: top-k experts of logits [tokens, experts] with renormalised softmax weights (LLM)",
                           {{"tokens", "", "tokens T"},
                            {"experts", "", "experts E"},
                            {"top_k", "2", "experts per token k"},
                            {"dtype", "fp16", kMoeDtype}},
                           [](const OpArgs& a, const DeviceInfo& d) { return make_router_form(a, d); }});
SFUMATO_REGISTER_OP(gmm_form,
                    OpSpec{"grouped_matmul",
                           "Grouped matmul over experts: rows [R, K] grouped by expert times weight [E, K, N] (LLM MoE)",
                           {{"rows", "", "rows R (all experts)"},
                            {"k", "", "K"},
                            {"n", "", "N"},
                            {"experts", "", "experts E (ragged sizes drawn from a seed)"},
                            {"host", "1", "1: group sizes also known on the host (attribute host_group_sizes)"},
                            {"dtype", "fp16", kMoeDtype}},
                           [](const OpArgs& a, const DeviceInfo& d) { return make_gmm_form(a, d); }});
SFUMATO_REGISTER_OP(dynamic_quant_form,
                    OpSpec{"dynamic_quant",
                           "Per-token dynamic int8 quantisation of [rows, cols] with fp32 scales (LLM W8A8)",
                           {{"rows", "", "tokens T"}, {"cols", "", "hidden size H"}, {"dtype", "fp16", kMoeDtype}},
                           [](const OpArgs& a, const DeviceInfo& d) { return make_quant_form(a, d); }});
SFUMATO_REGISTER_OP(w8a8_form,
                    OpSpec{"matmul_w8a8",
                           "W8A8 matmul: int8 [M, K] x int8 [K, N], int32 accumulate, per-channel and per-token "
                           "dequant to fp16/bf16 (LLM)",
                           {{"m", "", "M (tokens)"}, {"k", "", "K"}, {"n", "", "N"}, {"output_dtype", "fp16", "fp16 | bf16"}},
                           [](const OpArgs& a, const DeviceInfo& d) { return make_w8a8_form(a, d); }});

SFUMATO_OP_SAMPLE(moe_form, "moe", {{"tokens", "6"}, {"hidden", "64"}, {"inter", "32"}, {"experts", "4"}});
SFUMATO_OP_SAMPLE(moe_router_form, "moe_router", {{"tokens", "7"}, {"experts", "8"}});
SFUMATO_OP_SAMPLE(gmm_form, "grouped_matmul", {{"rows", "20"}, {"k", "64"}, {"n", "48"}, {"experts", "4"}});
SFUMATO_OP_SAMPLE(dynamic_quant_form, "dynamic_quant", {{"rows", "5"}, {"cols", "100"}});
SFUMATO_OP_SAMPLE(w8a8_form, "matmul_w8a8", {{"m", "5"}, {"k", "64"}, {"n", "40"}});

}  // namespace sfumato::ops::llm
