// `sfumato kernel` forms of the normalisation and reduction families (standalone face,
// runtime/ops/standalone.h):
//   softmax | logsoftmax  --rows R --cols C [--shape d0,d1,... --axis A] [--dtype]
//   layernorm             --rows R --cols C [--stats 0|1|2] [--eps E] [--dtype]
//   instancenorm | batchnorm  --n --c --h --w [--eps E] [--dtype]
//   reduce --op sum|mean|... --shape d0,d1,... [--axes a,b|all] [--keepdims]
//   argmax --shape d0,d1,... [--axis] [--keepdims] [--select-last] [--min]
//   maxpool | avgpool --n --c --h --w [--kernel --stride --pad --dilation --ceil --count-include-pad]
// Random inputs from a fixed seed, checked against the host reference with the tolerances
// derived in docs/operators.md. Arguments that do not make a valid node (axis out of range,
// unsupported dtype) are errors naming the argument.
#include <algorithm>
#include "runtime/ops/norm/standalone_forms.h"

#include <cmath>
#include <map>
#include <sstream>

#include "runtime/ops/standalone.h"
#include "sim/error.h"

namespace sfumato::ops::norm {

ref::ElemType float_dtype_arg(const OpArgs& a, const std::string& op) {
    const std::string s = arg_str(a, "dtype");
    if (s == "fp16") return ref::ElemType::Float16;
    if (s == "bf16") return ref::ElemType::Bfloat16;
    if (s == "fp32") return ref::ElemType::Float;
    throw InputError("operator '" + op + "': argument 'dtype' = '" + s + "' (valid: fp16, bf16, fp32)");
}

std::vector<int64_t> shape_arg(const OpArgs& a, const std::string& op, const std::string& key) {
    std::vector<int64_t> v;
    // Dims joined by x (4096x1024), as every shape argument; the comma form is accepted too.
    std::string dims = arg_str(a, key);
    std::replace(dims.begin(), dims.end(), 'x', ',');
    std::stringstream ss(dims);
    std::string tok;
    while (std::getline(ss, tok, ',')) {
        try {
            size_t pos = 0;
            const long long x = std::stoll(tok, &pos);
            if (pos != tok.size() || x < 0 || x > (1ll << 32)) throw std::invalid_argument(tok);
            v.push_back(x);
        } catch (...) {
            throw InputError("operator '" + op + "': argument '" + key + "' = '" + arg_str(a, key) +
                             "' is not a shape (dims joined by x, e.g. 4096x1024)");
        }
    }
    if (v.empty()) throw InputError("operator '" + op + "': argument '" + key + "' is empty");
    return v;
}

std::vector<int64_t> ints_arg(const OpArgs& a, const std::string& op, const std::string& key) {
    std::vector<int64_t> v;
    std::stringstream ss(arg_str(a, key));
    std::string tok;
    while (std::getline(ss, tok, ',')) {
        try {
            size_t pos = 0;
            const long long x = std::stoll(tok, &pos);
            if (pos != tok.size()) throw std::invalid_argument(tok);
            v.push_back(x);
        } catch (...) {
            throw InputError("operator '" + op + "': argument '" + key + "' = '" + arg_str(a, key) +
                             "' is not a comma-separated list of integers");
        }
    }
    return v;
}

int64_t int_arg(const OpArgs& a, const std::string& op, const std::string& key) {
    const std::vector<int64_t> v = ints_arg(a, op, key);
    if (v.size() != 1) throw InputError("operator '" + op + "': argument '" + key + "' = '" + arg_str(a, key) + "' is not an integer");
    return v[0];
}

double float_arg(const OpArgs& a, const std::string& op, const std::string& key, double lo, double hi) {
    const std::string& s = arg_str(a, key);
    double v = 0;
    size_t pos = 0;
    try {
        v = std::stod(s, &pos);
    } catch (...) {
        pos = 0;
    }
    if (pos != s.size() || s.empty() || !(v >= lo && v <= hi))
        throw InputError("operator '" + op + "': argument '" + key + "' = '" + s + "' is not a number in [" +
                         std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return v;
}

Tolerance output_tolerance(ref::ElemType out, double fp32_rel, double atol) {
    // One unit in the last place of the output type (the fp32 result may round either way),
    // plus the fp32 arithmetic's own error.
    double ulp = 0;
    switch (out) {
        case ref::ElemType::Float16: ulp = std::ldexp(1.0, -10); break;
        case ref::ElemType::Bfloat16: ulp = std::ldexp(1.0, -7); break;
        default: ulp = 0; break;
    }
    return {atol, ulp + fp32_rel};
}

std::unique_ptr<IOp> standalone(NodeDesc n, const std::vector<InputGen>& gens, Tolerance tol, const DeviceInfo& dev,
                                const std::string& op) {
    n.name = op;
    n.attrs.set_owner(op);
    StandaloneSpec s;
    s.node = std::move(n);
    s.gens = gens;
    s.tol = tol;
    try {
        return make_standalone(std::move(s), dev);
    } catch (const UnsupportedError& e) {
        throw InputError("operator '" + op + "': " + e.what());
    }
}

namespace {

std::unique_ptr<IOp> make_softmax_form(const OpArgs& a, const DeviceInfo& dev, bool log) {
    const std::string op = log ? "logsoftmax" : "softmax";
    const ref::ElemType t = float_dtype_arg(a, op);
    NodeDesc n;
    n.op_type = log ? "LogSoftmax" : "Softmax";
    n.opset = 13;
    std::vector<int64_t> shape;
    if (arg_str(a, "shape") != "-") {
        shape = shape_arg(a, op, "shape");
    } else {
        shape = {static_cast<int64_t>(arg_u64(a, op, "rows", 1, 1ull << 32)),
                 static_cast<int64_t>(arg_u64(a, op, "cols", 1, 1ull << 32))};
    }
    const int64_t axis = int_arg(a, op, "axis");
    if (axis < -static_cast<int64_t>(shape.size()) || axis >= static_cast<int64_t>(shape.size()))
        throw InputError("operator '" + op + "': argument 'axis' = " + std::to_string(axis) + " is out of range for rank " +
                         std::to_string(shape.size()));
    n.attrs.set("axis", ref::Attr::of_int(axis));
    n.inputs.push_back(make_tensor(shape, t));
    // fp32: exp within 0.5 ulp, sums and the reciprocal a few ulps (log2 of the row folds).
    const Tolerance tol = log ? output_tolerance(t, 1e-5, 1e-5) : output_tolerance(t, 2e-6, 1e-7);
    return standalone(std::move(n), {}, tol, dev, op);
}

std::unique_ptr<IOp> make_layernorm_form(const OpArgs& a, const DeviceInfo& dev) {
    const std::string op = "layernorm";
    const ref::ElemType t = float_dtype_arg(a, op);
    const int64_t rows = static_cast<int64_t>(arg_u64(a, op, "rows", 1, 1ull << 32));
    const int64_t cols = static_cast<int64_t>(arg_u64(a, op, "cols", 1, 1ull << 32));
    NodeDesc n;
    n.op_type = "LayerNormalization";
    n.opset = 17;
    n.attrs.set("axis", ref::Attr::of_int(-1));
    n.attrs.set("epsilon", ref::Attr::of_float(float_arg(a, op, "eps", 0, 1)));
    n.inputs = {make_tensor({rows, cols}, t), make_tensor({cols}, t), make_tensor({cols}, t)};
    n.num_outputs = 1 + static_cast<int>(arg_u64(a, op, "stats", 0, 2));
    // (x - mean) * rstd: fp32 cancellation relative to the row's spread (inputs in [-4, 4]).
    return standalone(std::move(n), {}, output_tolerance(t, 1e-5, 1e-5), dev, op);
}

std::unique_ptr<IOp> make_channel_norm_form(const OpArgs& a, const DeviceInfo& dev, bool batch) {
    const std::string op = batch ? "batchnorm" : "instancenorm";
    const ref::ElemType t = float_dtype_arg(a, op);
    const int64_t N = static_cast<int64_t>(arg_u64(a, op, "n", 1, 1ull << 32));
    const int64_t C = static_cast<int64_t>(arg_u64(a, op, "c", 1, 1ull << 32));
    const int64_t H = static_cast<int64_t>(arg_u64(a, op, "h", 1, 1ull << 32));
    const int64_t W = static_cast<int64_t>(arg_u64(a, op, "w", 1, 1ull << 32));
    NodeDesc n;
    n.op_type = batch ? "BatchNormalization" : "InstanceNormalization";
    n.opset = batch ? 15 : 6;
    n.attrs.set("epsilon", ref::Attr::of_float(float_arg(a, op, "eps", 0, 1)));
    std::vector<InputGen> gens;
    n.inputs.push_back(make_tensor({N, C, H, W}, t));
    gens.push_back(nullptr);
    for (int i = 0; i < (batch ? 4 : 2); ++i) {
        n.inputs.push_back(make_tensor({C}, t));
        gens.push_back(batch && i == 3 ? uniform_input(0.25, 4) : uniform_input(-2, 2));  // variances positive
    }
    return standalone(std::move(n), gens, output_tolerance(t, 1e-5, 1e-5), dev, op);
}


std::unique_ptr<IOp> make_reduce_form(const OpArgs& a, const DeviceInfo& dev) {
    const std::string op = "reduce";
    static const std::map<std::string, std::string> kinds = {
        {"sum", "ReduceSum"},   {"mean", "ReduceMean"}, {"max", "ReduceMax"},       {"min", "ReduceMin"},
        {"prod", "ReduceProd"}, {"sumsq", "ReduceSumSquare"}, {"l1", "ReduceL1"}, {"l2", "ReduceL2"},
        {"logsum", "ReduceLogSum"}, {"logsumexp", "ReduceLogSumExp"}};
    const auto k = kinds.find(arg_str(a, "op"));
    if (k == kinds.end())
        throw InputError("operator 'reduce': argument 'op' = '" + arg_str(a, "op") +
                         "' (valid: sum, mean, max, min, prod, sumsq, l1, l2, logsum, logsumexp)");
    const ref::ElemType t = float_dtype_arg(a, op);
    const std::vector<int64_t> shape = shape_arg(a, op, "shape");
    NodeDesc n;
    n.op_type = k->second;
    n.opset = 13;
    std::vector<int64_t> axes = arg_str(a, "axes") == "all" ? std::vector<int64_t>{} : ints_arg(a, op, "axes");
    for (int64_t ax : axes)
        if (ax < -static_cast<int64_t>(shape.size()) || ax >= static_cast<int64_t>(shape.size()))
            throw InputError("operator 'reduce': argument 'axes' value " + std::to_string(ax) +
                             " is out of range for rank " + std::to_string(shape.size()));
    n.attrs.set("keepdims", ref::Attr::of_int(static_cast<int64_t>(arg_u64(a, op, "keepdims", 0, 1))));
    if (n.op_type == "ReduceSum") {
        ref::HostTensor ax(ref::ElemType::Int64, {static_cast<int64_t>(axes.size())});
        for (size_t i = 0; i < axes.size(); ++i) ax.data[i] = static_cast<double>(axes[i]);
        n.inputs = {make_tensor(shape, t), make_tensor(ax.shape, ref::ElemType::Int64)};
        n.constants = {nullptr, std::make_shared<ref::HostTensor>(ax)};
        if (axes.empty()) n.inputs.pop_back(), n.constants.pop_back();
    } else {
        n.inputs = {make_tensor(shape, t)};
        if (!axes.empty()) n.attrs.set("axes", ref::Attr::of_ints(axes));
    }
    const bool pos = n.op_type == "ReduceLogSum", prod = n.op_type == "ReduceProd";
    std::vector<InputGen> gens = {pos ? uniform_input(0.1, 4) : prod ? uniform_input(0.8, 1.25) : uniform_input(-4, 4)};
    return standalone(std::move(n), gens, output_tolerance(t, 1e-5, 1e-4), dev, op);
}

std::unique_ptr<IOp> make_argmax_form(const OpArgs& a, const DeviceInfo& dev) {
    const std::string op = "argmax";
    const ref::ElemType t = float_dtype_arg(a, op);
    const std::vector<int64_t> shape = shape_arg(a, op, "shape");
    const int64_t axis = int_arg(a, op, "axis");
    if (axis < -static_cast<int64_t>(shape.size()) || axis >= static_cast<int64_t>(shape.size()))
        throw InputError("operator 'argmax': argument 'axis' = " + std::to_string(axis) + " is out of range for rank " +
                         std::to_string(shape.size()));
    NodeDesc n;
    n.op_type = arg_u64(a, op, "min", 0, 1) ? "ArgMin" : "ArgMax";
    n.opset = 13;
    n.attrs.set("axis", ref::Attr::of_int(axis));
    n.attrs.set("keepdims", ref::Attr::of_int(static_cast<int64_t>(arg_u64(a, op, "keepdims", 0, 1))));
    n.attrs.set("select_last_index", ref::Attr::of_int(static_cast<int64_t>(arg_u64(a, op, "select_last", 0, 1))));
    n.inputs = {make_tensor(shape, t)};
    return standalone(std::move(n), {}, {0, 0}, dev, op);
}

std::unique_ptr<IOp> make_pool_form(const OpArgs& a, const DeviceInfo& dev, bool is_max) {
    const std::string op = is_max ? "maxpool" : "avgpool";
    const std::string d = arg_str(a, "dtype");
    const ref::ElemType t = is_max && d == "uint8" ? ref::ElemType::Uint8 : float_dtype_arg(a, op);
    const int64_t N = static_cast<int64_t>(arg_u64(a, op, "n", 1, 1ull << 32));
    const int64_t C = static_cast<int64_t>(arg_u64(a, op, "c", 1, 1ull << 32));
    const int64_t H = static_cast<int64_t>(arg_u64(a, op, "h", 1, 1ull << 32));
    const int64_t W = static_cast<int64_t>(arg_u64(a, op, "w", 1, 1ull << 32));
    const int64_t k = static_cast<int64_t>(arg_u64(a, op, "kernel", 1, 1024));
    const int64_t st = static_cast<int64_t>(arg_u64(a, op, "stride", 1, 1024));
    const int64_t pad = static_cast<int64_t>(arg_u64(a, op, "pad", 0, 255));
    if (pad >= k) throw InputError("operator '" + op + "': argument 'pad' = " + std::to_string(pad) + " must be below 'kernel'");
    NodeDesc n;
    n.op_type = is_max ? "MaxPool" : "AveragePool";
    n.opset = is_max ? 12 : 11;
    n.attrs.set("kernel_shape", ref::Attr::of_ints({k, k}));
    n.attrs.set("strides", ref::Attr::of_ints({st, st}));
    n.attrs.set("pads", ref::Attr::of_ints({pad, pad, pad, pad}));
    n.attrs.set("ceil_mode", ref::Attr::of_int(static_cast<int64_t>(arg_u64(a, op, "ceil", 0, 1))));
    if (is_max) n.attrs.set("dilations", ref::Attr::of_ints({static_cast<int64_t>(arg_u64(a, op, "dilation", 1, 64)),
                                                            static_cast<int64_t>(arg_u64(a, op, "dilation", 1, 64))}));
    else n.attrs.set("count_include_pad", ref::Attr::of_int(static_cast<int64_t>(arg_u64(a, op, "count_include_pad", 0, 1))));
    n.inputs = {make_tensor({N, C, H, W}, t)};
    std::vector<InputGen> gens = {t == ref::ElemType::Uint8 ? integer_input(0, 255) : uniform_input(-4, 4)};
    return standalone(std::move(n), gens, output_tolerance(t, 1e-6, 1e-6), dev, op);
}

const std::vector<OpArgSpec> kSoftmaxArgs = {{"rows", "1024", "rows (input [rows, cols])"},
                                             {"cols", "1024", "row length"},
                                             {"shape", "-", "input shape, dims joined by x: d0xd1x... (overrides rows/cols)"},
                                             {"axis", "-1", "softmax axis"},
                                             {"dtype", "fp16", "fp16 | bf16 | fp32"}};
const std::vector<OpArgSpec> kChannelArgs = {{"n", "", "batch"},       {"c", "", "channels"}, {"h", "", "height"},
                                             {"w", "", "width"},       {"eps", "1e-5", "epsilon"},
                                             {"dtype", "fp16", "fp16 | bf16 | fp32"}};

}  // namespace

SFUMATO_REGISTER_OP(softmax_form, OpSpec{"softmax", "Softmax along an axis (ONNX, opset 13)", kSoftmaxArgs,
                                          [](const OpArgs& a, const DeviceInfo& d) { return make_softmax_form(a, d, false); }});
SFUMATO_REGISTER_OP(logsoftmax_form, OpSpec{"logsoftmax", "LogSoftmax along an axis (ONNX, opset 13)", kSoftmaxArgs,
                                             [](const OpArgs& a, const DeviceInfo& d) { return make_softmax_form(a, d, true); }});
SFUMATO_REGISTER_OP(layernorm_form,
                    OpSpec{"layernorm",
                           "LayerNormalization over the last axis, Scale and B (ONNX, opset 17)",
                           {{"rows", "1024", "rows"},
                            {"cols", "1024", "normalised length"},
                            {"eps", "1e-5", "epsilon"},
                            {"stats", "0", "also output Mean (1) and InvStdDev (2)"},
                            {"dtype", "fp16", "fp16 | bf16 | fp32"}},
                           [](const OpArgs& a, const DeviceInfo& d) { return make_layernorm_form(a, d); }});
SFUMATO_REGISTER_OP(instancenorm_form, OpSpec{"instancenorm", "InstanceNormalization of an NCHW tensor", kChannelArgs,
                                               [](const OpArgs& a, const DeviceInfo& d) {
                                                   return make_channel_norm_form(a, d, false);
                                               }});

SFUMATO_REGISTER_OP(batchnorm_form, OpSpec{"batchnorm", "BatchNormalization (inference) of an NCHW tensor", kChannelArgs,
                                            [](const OpArgs& a, const DeviceInfo& d) {
                                                return make_channel_norm_form(a, d, true);
                                            }});

SFUMATO_REGISTER_OP(reduce_form,
                    OpSpec{"reduce",
                           "ONNX Reduce* over axes (opset 13)",
                           {{"op", "sum", "sum | mean | max | min | prod | sumsq | l1 | l2 | logsum | logsumexp"},
                            {"shape", "", "input shape, dims joined by x: d0xd1x..."},
                            {"axes", "-1", "axes a,b,... or 'all'"},
                            {"keepdims", "1", "keep reduced dims as 1"},
                            {"dtype", "fp16", "fp16 | bf16 | fp32"}},
                           [](const OpArgs& a, const DeviceInfo& d) { return make_reduce_form(a, d); }});
SFUMATO_REGISTER_OP(argmax_form, OpSpec{"argmax",
                                        "ArgMax (or ArgMin with --min 1) along an axis (opset 13)",
                                        {{"shape", "", "input shape, dims joined by x: d0xd1x..."},
                                         {"axis", "-1", "axis"},
                                         {"keepdims", "1", "keep the axis as 1"},
                                         {"select_last", "0", "1: last index of the extreme value"},
                                         {"min", "0", "1: ArgMin"},
                                         {"dtype", "fp16", "fp16 | bf16 | fp32"}},
                                        [](const OpArgs& a, const DeviceInfo& d) { return make_argmax_form(a, d); }});

SFUMATO_REGISTER_OP(maxpool_form, OpSpec{"maxpool",
                                         "MaxPool 2-D of an NCHW tensor (square kernel, ONNX opset 12)",
                                         {{"n", "", "batch"}, {"c", "", "channels"}, {"h", "", "height"}, {"w", "", "width"},
                                          {"kernel", "3", "window size"}, {"stride", "1", "stride"},
                                          {"pad", "0", "padding on every side"}, {"dilation", "1", "dilation"},
                                          {"ceil", "0", "ceil mode"}, {"dtype", "fp16", "fp16 | bf16 | fp32 | uint8"}},
                                         [](const OpArgs& a, const DeviceInfo& d) { return make_pool_form(a, d, true); }});
SFUMATO_REGISTER_OP(avgpool_form, OpSpec{"avgpool",
                                         "AveragePool 2-D of an NCHW tensor (square kernel, ONNX opset 11)",
                                         {{"n", "", "batch"}, {"c", "", "channels"}, {"h", "", "height"}, {"w", "", "width"},
                                          {"kernel", "3", "window size"}, {"stride", "1", "stride"},
                                          {"pad", "0", "padding on every side"}, {"ceil", "0", "ceil mode"},
                                          {"count_include_pad", "0", "divide by the padded window size"},
                                          {"dtype", "fp16", "fp16 | bf16 | fp32"}},
                                         [](const OpArgs& a, const DeviceInfo& d) { return make_pool_form(a, d, false); }});

// Small shapes for the functional-vs-timing sweep (tests/regression/op_sweep_test.cpp).
SFUMATO_OP_SAMPLE(softmax_form, "softmax", {{"rows", "5"}, {"cols", "70"}});
SFUMATO_OP_SAMPLE(logsoftmax_form, "logsoftmax", {{"shape", "3,6,5"}, {"axis", "1"}});
SFUMATO_OP_SAMPLE(layernorm_form, "layernorm", {{"rows", "6"}, {"cols", "48"}});
SFUMATO_OP_SAMPLE(instancenorm_form, "instancenorm", {{"n", "2"}, {"c", "3"}, {"h", "5"}, {"w", "7"}});
SFUMATO_OP_SAMPLE(batchnorm_form, "batchnorm", {{"n", "2"}, {"c", "3"}, {"h", "5"}, {"w", "7"}});
SFUMATO_OP_SAMPLE(reduce_form, "reduce", {{"shape", "4,6,9"}, {"axes", "1"}});
SFUMATO_OP_SAMPLE(argmax_form, "argmax", {{"shape", "5,37"}});
SFUMATO_OP_SAMPLE(maxpool_form, "maxpool", {{"n", "1"}, {"c", "3"}, {"h", "9"}, {"w", "9"}, {"stride", "2"}, {"pad", "1"}});
SFUMATO_OP_SAMPLE(avgpool_form, "avgpool", {{"n", "1"}, {"c", "3"}, {"h", "9"}, {"w", "9"}, {"stride", "2"}});

}  // namespace sfumato::ops::norm
