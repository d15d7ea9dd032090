// `sfumato kernel conv2d` and `sfumato kernel conv_transpose2d`: the Conv and ConvTranspose
// graph nodes (conv_node.cpp) on random inputs in [-1, 1], checked against the host reference.
// Tolerance (derivation as for the matmul, docs/operators.md): each output sums at most
// T = C/groups x r x s products of magnitude <= 1, the accumulator is rounded once per mad (at
// least every 16 of K), so |error| <= 2 ceil(T / 16) 2^-24 T, plus one unit in the last place
// of the output type; a fused activation other than ReLU adds the epilogue's 2^-20 (1 + T + 1).
#include <cmath>

#include "runtime/ops/i_op.h"
#include "runtime/ops/standalone.h"
#include "runtime/ref/activation.h"
#include "sim/error.h"

namespace sfumato::ops {

namespace {

ref::ElemType conv_type(const OpArgs& a, const std::string& op) {
    const std::string d = a.at("dtype");
    if (d == "fp16") return ref::ElemType::Float16;
    if (d == "bf16") return ref::ElemType::Bfloat16;
    if (d == "fp32") return ref::ElemType::Float;
    throw InputError("operator '" + op + "': argument 'dtype' = '" + d + "' (valid: fp16, bf16, fp32)");
}

std::unique_ptr<IOp> make_conv_op(const OpArgs& a, const DeviceInfo& dev, bool transpose) {
    const std::string op = transpose ? "conv_transpose2d" : "conv2d";
    auto u = [&](const char* k, uint64_t lo, uint64_t hi) {
        return static_cast<int64_t>(arg_u64(a, op, k, lo, hi));
    };
    const int64_t n = u("n", 1, 4096), c = u("c", 1, 65535), h = u("h", 1, 65535), w = u("w", 1, 65535);
    const int64_t k = u("k", 1, 65535), r = u("r", 1, 255), s = u("s", 1, 255);
    const int64_t stride = u("stride", 1, 255), pad = u("pad", 0, 255), groups = u("groups", 1, 65535);
    const int64_t dil = u("dilation", 1, 255);
    if (c % groups || k % groups)
        throw InputError("operator '" + op + "': argument 'groups' = " + std::to_string(groups) +
                         " must divide c and k");
    const ref::ElemType t = conv_type(a, op);
    StandaloneSpec spec;
    NodeDesc& node = spec.node;
    node.name = op;
    node.op_type = transpose ? "ConvTranspose" : "Conv";
    node.attrs.set_owner(node.name);
    node.attrs.set("strides", ref::Attr::of_ints({stride, stride}));
    node.attrs.set("dilations", ref::Attr::of_ints({dil, dil}));
    node.attrs.set("group", ref::Attr::of_int(groups));
    const std::string auto_pad = a.at("auto_pad");
    if (auto_pad != "NOTSET")
        node.attrs.set("auto_pad", ref::Attr::of_string(auto_pad));
    else
        node.attrs.set("pads", ref::Attr::of_ints({pad, pad, pad, pad}));
    if (transpose) {
        const int64_t op_pad = u("output_padding", 0, 255);
        node.attrs.set("output_padding", ref::Attr::of_ints({op_pad, op_pad}));
    }
    const std::string act = a.at("activation");
    if (act != "none") {
        node.attrs.set("activation", ref::Attr::of_string(act));
        ref::activation_of(node.attrs);  // validates the name
    }
    node.inputs.push_back(make_tensor({n, c, h, w}, t));
    const std::string fmt = a.at("format");
    if (fmt == "nc1hwc0") {
        node.inputs.back().format = Format::NC1HWC0;
        node.attrs.set("y_format", ref::Attr::of_string("NC1HWC0"));
    } else if (fmt != "nd") {
        throw InputError("operator '" + op + "': argument 'format' = '" + fmt + "' (valid: nd, nc1hwc0)");
    }
    node.inputs.push_back(make_tensor(
        transpose ? std::vector<int64_t>{c, k / groups, r, s} : std::vector<int64_t>{k, c / groups, r, s},
        t));
    if (arg_u64(a, op, "bias", 0, 1)) node.inputs.push_back(make_tensor({k}, t));
    spec.gens.assign(node.inputs.size(), uniform_input(-1, 1));
    const double taps = double(c / groups) * r * s;
    spec.tol.atol = 2.0 * std::ceil(taps / 16) * 0x1p-24 * taps + 0x1p-24;
    if (act != "none" && act != "Relu") spec.tol.atol = 1.2 * spec.tol.atol + 0x1p-20 * (2 + taps);
    spec.tol.rtol = t == ref::ElemType::Float16 ? 0x1p-10 : t == ref::ElemType::Bfloat16 ? 0x1p-7 : 0x1p-23;
    return make_standalone(std::move(spec), dev);
}

std::vector<OpArgSpec> conv_args(bool transpose) {
    std::vector<OpArgSpec> v = {
        {"n", "1", "batch"},
        {"c", "", "input channels"},
        {"h", "", "input height"},
        {"w", "", "input width"},
        {"k", "", "output channels"},
        {"r", "3", "kernel height"},
        {"s", "3", "kernel width"},
        {"stride", "1", "stride (both dimensions)"},
        {"pad", "1", "pads (all four sides)"},
        {"auto_pad", "NOTSET", "NOTSET | VALID | SAME_UPPER | SAME_LOWER (replaces pad)"},
        {"groups", "1", "groups (c = k = groups: depthwise)"},
        {"dilation", "1", "dilation (both dimensions)"},
        {"bias", "1", "1 = with bias B (k values)"},
        {"activation", "none",
         "fused activation: none | Relu | LeakyRelu | Sigmoid | Tanh | "
         "Gelu | Clip | HardSigmoid | HardSwish"},
        {"dtype", "fp16", "fp16 | bf16 | fp32"},
        {"format", "nd", "nd | nc1hwc0 (X and Y in NC1HWC0, a training step's layout)"}};
    if (transpose) v.push_back({"output_padding", "0", "output_padding (both dimensions)"});
    return v;
}

}  // namespace

SFUMATO_REGISTER_OP(conv2d,
                    OpSpec{"conv2d", "ONNX Conv node (2-D, NCHW): img2col on the cube", conv_args(false),
                           [](const OpArgs& a, const DeviceInfo& d) { return make_conv_op(a, d, false); }});
SFUMATO_REGISTER_OP(conv_transpose2d,
                    OpSpec{"conv_transpose2d",
                           "ONNX ConvTranspose node (2-D, NCHW) as a stride-1 conv over the spread input (NC1HWC0 on a coupled part: per stride phase)",
                           conv_args(true),
                           [](const OpArgs& a, const DeviceInfo& d) { return make_conv_op(a, d, true); }});

}  // namespace sfumato::ops

namespace sfumato::ops {
SFUMATO_OP_SAMPLE(conv2d_sample, "conv2d", {{"c", "5"}, {"h", "9"}, {"w", "7"}, {"k", "6"}, {"stride", "2"}});
SFUMATO_OP_SAMPLE(conv_transpose2d_sample, "conv_transpose2d",
                  {{"c", "4"}, {"h", "5"}, {"w", "6"}, {"k", "3"}, {"stride", "2"}, {"output_padding", "1"}});
}  // namespace sfumato::ops
