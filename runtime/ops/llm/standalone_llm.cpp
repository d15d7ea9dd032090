// `sfumato kernel` forms of the LLM operators (standalone face,
// runtime/ops/standalone.h):
//   rmsnorm   --rows T --cols H [--residual 0|1] [--eps E] [--dtype]
//   rope      --tokens T --heads N --head_dim D [--rotary_dim R] [--style
//   half|interleaved]
//             [--positions P] [--host 0|1] [--dtype]
//   swiglu    --rows T --inter I [--dtype]
//   embedding --vocab V --hidden H --tokens T [--host 0|1] [--dtype]  (Gather
//   axis 0, run-time ids)
// --host 1 (default) also gives the drawn positions / ids to the node as its
// host-known attribute, so both modes take the same cycles; --host 0 leaves the
// kernel to read them. Random inputs from a fixed seed (positions and ids
// uniform over the table), checked against the host reference in functional
// mode: one unit in the last place of the output type plus 1e-5 relative (fp32
// arithmetic) and 1e-5 absolute (results that cancel); the embedding is a copy
// and must match exactly.
#include <random>

#include "runtime/ops/norm/standalone_forms.h"
#include "sim/error.h"

namespace sfumato::ops::llm {

namespace {

using norm::float_arg;
using norm::float_dtype_arg;
using norm::output_tolerance;
using norm::standalone;

// Values drawn here from a fixed seed, so that the same ones can be given to
// the node as a host-known attribute and to the standalone face as the input's
// contents.
std::vector<int64_t> draw(int64_t n, int64_t lo, int64_t hi, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int64_t> d(lo, hi);
    std::vector<int64_t> v(static_cast<size_t>(n));
    for (int64_t& x : v) x = d(rng);
    return v;
}
InputGen fixed_input(std::vector<int64_t> v) {
    return [v](ref::HostTensor& t, std::mt19937&) {
        for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = static_cast<double>(v.at(i));
    };
}

int64_t dim(const OpArgs& a, const std::string& op, const std::string& key) {
    return static_cast<int64_t>(arg_u64(a, op, key, 1, 1ull << 31));
}

std::unique_ptr<IOp> make_rmsnorm_form(const OpArgs& a, const DeviceInfo& dev) {
    const std::string op = "rmsnorm";
    const ref::ElemType t = float_dtype_arg(a, op);
    const int64_t T = dim(a, op, "rows"), H = dim(a, op, "cols");
    NodeDesc n;
    n.op_type = "RmsNorm";
    n.attrs.set("epsilon", ref::Attr::of_float(float_arg(a, op, "eps", 0, 1)));
    n.inputs = {make_tensor({T, H}, t), make_tensor({H}, t)};
    if (arg_u64(a, op, "residual", 0, 1)) {
        n.inputs.push_back(make_tensor({T, H}, t));
        n.num_outputs = 2;
    }
    return standalone(std::move(n), {}, output_tolerance(t, 1e-5, 1e-5), dev, op);
}

std::unique_ptr<IOp> make_rope_form(const OpArgs& a, const DeviceInfo& dev) {
    const std::string op = "rope";
    const ref::ElemType t = float_dtype_arg(a, op);
    const int64_t T = dim(a, op, "tokens"), N = dim(a, op, "heads"), D = dim(a, op, "head_dim");
    const int64_t R = arg_str(a, "rotary_dim") == "0" ? D : dim(a, op, "rotary_dim");
    const int64_t P = dim(a, op, "positions");
    const std::string style = arg_str(a, "style");
    if (style != "half" && style != "interleaved")
        throw InputError("operator 'rope': argument 'style' = '" + style + "' (valid: half, interleaved)");
    NodeDesc n;
    n.op_type = "Rope";
    n.attrs.set("style", ref::Attr::of_string(style));
    n.attrs.set("rotary_dim", ref::Attr::of_int(R));
    n.inputs = {make_tensor({T, N, D}, t), make_tensor({T}, ref::ElemType::Int64), make_tensor({P, R}, t)};
    const std::vector<int64_t> pos = draw(T, 0, P - 1, 99);
    if (arg_u64(a, op, "host", 0, 1)) n.attrs.set("host_positions", ref::Attr::of_ints(pos));
    return standalone(std::move(n), {nullptr, fixed_input(pos), uniform_input(-1, 1)},
                      output_tolerance(t, 1e-5, 1e-5), dev, op);
}

std::unique_ptr<IOp> make_swiglu_form(const OpArgs& a, const DeviceInfo& dev) {
    const std::string op = "swiglu";
    const ref::ElemType t = float_dtype_arg(a, op);
    NodeDesc n;
    n.op_type = "SwiGlu";
    n.inputs = {make_tensor({dim(a, op, "rows"), 2 * dim(a, op, "inter")}, t)};
    return standalone(std::move(n), {uniform_input(-6, 6)}, output_tolerance(t, 1e-5, 1e-5), dev, op);
}

std::unique_ptr<IOp> make_embedding_form(const OpArgs& a, const DeviceInfo& dev) {
    const std::string op = "embedding";
    const ref::ElemType t = float_dtype_arg(a, op);
    const int64_t V = dim(a, op, "vocab");
    NodeDesc n;
    n.op_type = "Gather";
    n.opset = 13;
    n.attrs.set("axis", ref::Attr::of_int(0));
    const int64_t T = dim(a, op, "tokens");
    n.inputs = {make_tensor({V, dim(a, op, "hidden")}, t), make_tensor({T}, ref::ElemType::Int64)};
    const std::vector<int64_t> ids = draw(T, 0, V - 1, 77);
    if (arg_u64(a, op, "host", 0, 1)) n.attrs.set("host_ids", ref::Attr::of_ints(ids));
    return standalone(std::move(n), {nullptr, fixed_input(ids)}, {0, 0}, dev, op);
}

std::unique_ptr<IOp> make_sample_form(const OpArgs& a, const DeviceInfo& dev) {
    const std::string op = "sample";
    const ref::ElemType t = float_dtype_arg(a, op);
    NodeDesc n;
    n.op_type = "Sample";
    n.attrs.set("top_k", ref::Attr::of_int(static_cast<int64_t>(arg_u64(a, op, "top_k", 1, 1024))));
    n.attrs.set("temperature", ref::Attr::of_float(float_arg(a, op, "temperature", 1e-3, 1e3)));
    n.attrs.set("seed", ref::Attr::of_int(static_cast<int64_t>(arg_u64(a, op, "seed", 0, 1ull << 62))));
    n.inputs = {make_tensor({dim(a, op, "rows"), dim(a, op, "vocab")}, t)};
    return standalone(std::move(n), {uniform_input(-8, 8)}, {0, 0}, dev, op);
}

const char* kDtype = "fp16 | bf16 | fp32";

}  // namespace

SFUMATO_REGISTER_OP(rmsnorm_form,
                    OpSpec{"rmsnorm",
                           "RmsNorm of [rows, cols], optionally fused with the residual add (LLM)",
                           {{"rows", "", "tokens T"},
                            {"cols", "", "hidden size H"},
                            {"residual", "0", "1: add a residual first and write the sum too"},
                            {"eps", "1e-5", "epsilon"},
                            {"dtype", "fp16", kDtype}},
                           [](const OpArgs& a, const DeviceInfo& d) { return make_rmsnorm_form(a, d); }});
SFUMATO_REGISTER_OP(rope_form,
                    OpSpec{"rope",
                           "Rope of [tokens, heads, head_dim] with a cos/sin table (LLM)",
                           {{"tokens", "", "tokens T"},
                            {"heads", "", "heads N"},
                            {"head_dim", "", "head size D"},
                            {"rotary_dim", "0", "rotated dims R (0 = D)"},
                            {"style", "half", "half | interleaved"},
                            {"positions", "4096", "rows P of the cos/sin table"},
                            {"host", "1", "1: positions also known on the host (attribute host_positions)"},
                            {"dtype", "fp16", kDtype}},
                           [](const OpArgs& a, const DeviceInfo& d) { return make_rope_form(a, d); }});
SFUMATO_REGISTER_OP(
    swiglu_form,
    OpSpec{"swiglu",
           "SwiGlu: silu(gate) * up of a fused [rows, 2 * inter] projection (LLM)",
           {{"rows", "", "tokens T"}, {"inter", "", "intermediate size I"}, {"dtype", "fp16", kDtype}},
           [](const OpArgs& a, const DeviceInfo& d) { return make_swiglu_form(a, d); }});
SFUMATO_REGISTER_OP(embedding_form,
                    OpSpec{"embedding",
                           "Embedding lookup: Gather(table [vocab, hidden], ids [tokens], axis 0) (LLM)",
                           {{"vocab", "", "table rows V"},
                            {"hidden", "", "row size H"},
                            {"tokens", "", "ids T"},
                            {"host", "1", "1: ids also known on the host (attribute host_ids)"},
                            {"dtype", "fp16", kDtype}},
                           [](const OpArgs& a, const DeviceInfo& d) { return make_embedding_form(a, d); }});

SFUMATO_REGISTER_OP(
    sample_form,
    OpSpec{"sample",
           "Sample next-token ids from logits [rows, vocab]: greedy or top-k with temperature (LLM)",
           {{"rows", "", "rows B"},
            {"vocab", "", "vocabulary V"},
            {"top_k", "1", "1 = greedy argmax; k > 1: draw among the top k"},
            {"temperature", "1", "temperature of the draw"},
            {"seed", "0", "seed of the counter-based generator"},
            {"dtype", "fp16", kDtype}},
           [](const OpArgs& a, const DeviceInfo& d) { return make_sample_form(a, d); }});

SFUMATO_OP_SAMPLE(sample_form, "sample", {{"rows", "3"}, {"vocab", "300"}, {"top_k", "5"}});
SFUMATO_OP_SAMPLE(rmsnorm_form, "rmsnorm", {{"rows", "6"}, {"cols", "80"}, {"residual", "1"}});
SFUMATO_OP_SAMPLE(swiglu_form, "swiglu", {{"rows", "5"}, {"inter", "70"}});
SFUMATO_OP_SAMPLE(rope_form, "rope",
                  {{"tokens", "6"}, {"heads", "2"}, {"head_dim", "64"}, {"positions", "40"}});
SFUMATO_OP_SAMPLE(embedding_form, "embedding", {{"vocab", "300"}, {"hidden", "64"}, {"tokens", "9"}});

}  // namespace sfumato::ops::llm
