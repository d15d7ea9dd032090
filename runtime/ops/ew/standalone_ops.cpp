// `sfumato kernel` forms of the elementwise operators: each is the graph-node op on random
// inputs from a fixed seed, checked against the host reference (runtime/ops/standalone.h).
// Shapes are `--n N` (1-D) or `--shape-a 4096x1024 --shape-b 1x1024` (numpy broadcasting;
// `--shape` for unary ops); `--dtype` picks the element type. Inputs avoid the points where an
// op is undefined (log/sqrt of negatives, division by ~0). Tolerances are per op class and
// type, as docs/operators.md lists them.
#include <algorithm>
#include <cmath>

#include "runtime/ops/ew/onnx_ew.h"
#include "runtime/ops/ew/standalone_ops.h"
#include "runtime/ops/standalone.h"
#include "runtime/ref/broadcast.h"
#include "sim/error.h"

namespace sfumato::ops::ew {

using ref::ElemType;

std::vector<int64_t> parse_shape(const std::string& op, const std::string& arg, const std::string& shape) {
    std::vector<int64_t> v;
    if (shape == "scalar" || shape == "[]") return v;
    // One spelling everywhere: dims joined by x; the comma form (4,128,64) is accepted too.
    std::string s = shape;
    std::replace(s.begin(), s.end(), ',', 'x');
    size_t pos = 0;
    while (pos <= s.size()) {
        const size_t x = s.find('x', pos);
        const std::string tok = s.substr(pos, x == std::string::npos ? std::string::npos : x - pos);
        char* end = nullptr;
        const long long d = std::strtoll(tok.c_str(), &end, 10);
        if (tok.empty() || !end || *end || d < 0 || d > (1ll << 40))
            throw InputError("operator '" + op + "': argument '" + arg + "' = '" + shape +
                             "' is not a shape (dims joined by x, e.g. 4096x1024, or 'scalar')");
        v.push_back(d);
        if (x == std::string::npos) break;
        pos = x + 1;
    }
    return v;
}

ElemType parse_elem(const std::string& op, const std::string& arg, const std::string& s, const std::vector<ElemType>& allowed) {
    static const std::vector<std::pair<const char*, ElemType>> names = {
        {"fp16", ElemType::Float16}, {"bf16", ElemType::Bfloat16}, {"fp32", ElemType::Float}, {"int32", ElemType::Int32},
        {"int64", ElemType::Int64},  {"int16", ElemType::Int16},   {"int8", ElemType::Int8},  {"uint8", ElemType::Uint8},
        {"bool", ElemType::Bool}};
    std::string valid;
    for (const auto& [n, t] : names) {
        bool ok = false;
        for (ElemType a : allowed) ok = ok || a == t;
        if (!ok) continue;
        if (s == n) return t;
        valid += (valid.empty() ? "" : ", ") + std::string(n);
    }
    throw InputError("operator '" + op + "': argument '" + arg + "' = '" + s + "' (valid: " + valid + ")");
}

const std::vector<ElemType>& float_types() {
    static const std::vector<ElemType> v = {ElemType::Float16, ElemType::Bfloat16, ElemType::Float};
    return v;
}
const std::vector<ElemType>& numeric_types() {
    static const std::vector<ElemType> v = {ElemType::Float16, ElemType::Bfloat16, ElemType::Float, ElemType::Int32,
                                            ElemType::Int8,    ElemType::Uint8,    ElemType::Int16};
    return v;
}

Tolerance ew_tolerance(const std::string& op, ElemType t) {
    const bool composite = ew_precise(op) || op == "HardSigmoid" || op == "HardSwish" || op == "Softsign" ||
                           op == "Mean" || op == "ElementwiseChain" ||
                           // two rounded steps whose difference may cancel (w - lr g, (y - t) s)
                           op == "SgdUpdate" || op == "LossGrad" || op == "MovingAverage" || op == "GeluGrad" ||
                           op == "ActivationGrad";
    switch (t) {
        case ElemType::Float: return composite ? Tolerance{1e-6, 1e-5} : Tolerance{0, 1e-6};
        case ElemType::Float16: return composite ? Tolerance{1e-4, 1e-3} : Tolerance{1e-3, 2e-3};
        case ElemType::Bfloat16: return Tolerance{1e-3, 8e-3};
        default: return Tolerance{0, 0};
    }
}

namespace {

// Shape arguments: --n or --shape-* (exactly one way).
std::vector<int64_t> shape_arg(const std::string& op, const OpArgs& a, const std::string& key) {
    const std::string s = a.count(key) ? a.at(key) : "-";
    const uint64_t n = arg_u64(a, op, "n", 0, 1ull << 34);
    if (s != "-") {
        if (n != 0) throw InputError("operator '" + op + "': give either --n or --" + key.substr(0, key.find('_')) + "-... shapes, not both");
        std::string arg = key;
        for (char& c : arg)
            if (c == '_') c = '-';
        return parse_shape(op, arg, s);
    }
    if (n == 0) throw InputError("operator '" + op + "': missing argument 'n' (or --" + key.substr(0, key.find('_')) + " shapes)");
    return {static_cast<int64_t>(n)};
}

struct KernelForm {
    const char* name;   // sfumato kernel NAME
    const char* onnx;   // ONNX op type
    int arity;          // tensor inputs
    const char* summary;
    std::vector<OpArgSpec> attrs;  // extra arguments (attribute name = argument name)
    bool ints = false;             // integer dtypes allowed
};

InputGen gen_for(const std::string& op, int input, ElemType t) {
    if (t == ElemType::Bool) return integer_input(0, 1);
    if (!ref::is_float(t)) {
        if (op == "Div" && input == 1) return integer_input(1, 9);
        if (op == "Pow") return input == 0 ? integer_input(-3, 3) : integer_input(0, 4);
        return integer_input(-50, 50);
    }
    if (op == "Log" || op == "Sqrt") return uniform_input(0.05, 8);
    if (op == "Pow") return input == 0 ? uniform_input(0.25, 3) : uniform_input(-2, 2);
    if ((op == "Div" && input == 1) || op == "Reciprocal")
        return [](ref::HostTensor& h, std::mt19937& rng) {
            std::uniform_real_distribution<double> d(0.25, 4);
            std::bernoulli_distribution s(0.5);
            for (double& v : h.data) v = s(rng) ? d(rng) : -d(rng);
        };
    return uniform_input(-4, 4);
}

std::unique_ptr<IOp> make_form(const KernelForm& f, const OpArgs& a, const DeviceInfo& dev) {
    StandaloneSpec s;
    s.node.name = f.name;
    s.node.op_type = f.onnx;
    s.node.attrs.set_owner(f.name);
    const std::string op = f.name;
    const ElemType t = parse_elem(op, "dtype", arg_str(a, "dtype"), f.ints ? numeric_types() : float_types());
    std::vector<std::vector<int64_t>> shapes;
    if (f.arity == 1) {
        shapes.push_back(shape_arg(op, a, "shape"));
    } else {
        const auto sa = shape_arg(op, a, "shape_a");
        const std::string sb = a.at("shape_b");
        shapes.push_back(sa);
        shapes.push_back(sb == "-" ? sa : parse_shape(op, "shape-b", sb));
        if (f.arity == 3) {
            const std::string sc = a.at("shape_c");
            shapes.insert(shapes.begin(), sc == "-" ? sa : parse_shape(op, "shape-c", sc));
        }
        std::vector<std::vector<int64_t>> bs = shapes;
        try {
            (void)ref::broadcast_shapes(op, bs);
        } catch (const InputError& e) {
            throw InputError("operator '" + op + "': arguments 'shape-a'/'shape-b': " + std::string(e.what()));
        }
    }
    for (size_t i = 0; i < shapes.size(); ++i) {
        ElemType ti = t;
        if (f.arity == 3 && i == 0) ti = ElemType::Bool;  // Where's condition
        s.node.inputs.push_back(make_tensor(shapes[i], ti));
        s.gens.push_back(gen_for(f.onnx, static_cast<int>(f.arity == 3 ? i - 1 : i), ti));
    }
    for (const OpArgSpec& x : f.attrs) {
        const std::string v = a.at(x.name);
        if (x.name == "approximate") {
            s.node.attrs.set(x.name, ref::Attr::of_string(v));
            continue;
        }
        char* end = nullptr;
        const double d = std::strtod(v.c_str(), &end);
        if (v.empty() || !end || *end) throw InputError("operator '" + op + "': argument '" + x.name + "' = '" + v + "' is not a number");
        s.node.attrs.set(x.name, ref::Attr::of_float(d));
    }
    if (std::string(f.onnx) == "Clip") s.node.opset = 6;  // bounds as attributes
    s.tol = ew_tolerance(f.onnx, t);
    return make_standalone(std::move(s), dev);
}

const std::vector<KernelForm>& forms() {
    static const std::vector<KernelForm> v = {
        {"sub", "Sub", 2, "elementwise z = a - b with numpy broadcasting", {}, true},
        {"mul", "Mul", 2, "elementwise z = a * b with numpy broadcasting", {}, true},
        {"div", "Div", 2, "elementwise z = a / b with numpy broadcasting", {}, true},
        {"pow", "Pow", 2, "elementwise z = a ^ b with numpy broadcasting", {}},
        {"max", "Max", 2, "elementwise z = max(a, b) with numpy broadcasting", {}, true},
        {"min", "Min", 2, "elementwise z = min(a, b) with numpy broadcasting", {}, true},
        {"equal", "Equal", 2, "elementwise a == b (bool output)", {}, true},
        {"less", "Less", 2, "elementwise a < b (bool output)", {}, true},
        {"greater", "Greater", 2, "elementwise a > b (bool output)", {}, true},
        {"prelu", "PRelu", 2, "PRelu(x = a, slope = b)", {}},
        {"where", "Where", 3, "Where(condition, a, b) with a random bool condition", {}, true},
        {"relu", "Relu", 1, "max(x, 0)", {}, true},
        {"leakyrelu", "LeakyRelu", 1, "x >= 0 ? x : alpha x", {{"alpha", "0.01", "negative slope"}}},
        {"clip", "Clip", 1, "min(max(x, min), max)", {{"min", "-1", "lower bound"}, {"max", "1", "upper bound"}}, true},
        {"sigmoid", "Sigmoid", 1, "1 / (1 + exp(-x))", {}},
        {"tanh", "Tanh", 1, "tanh(x)", {}},
        {"gelu", "Gelu", 1, "x Phi(x) (erf form, or approximate=tanh)", {{"approximate", "none", "none | tanh"}}},
        {"erf", "Erf", 1, "erf(x)", {}},
        {"exp", "Exp", 1, "exp(x)", {}},
        {"log", "Log", 1, "ln(x) (inputs in (0.05, 8))", {}},
        {"sqrt", "Sqrt", 1, "sqrt(x) (inputs in (0.05, 8))", {}},
        {"reciprocal", "Reciprocal", 1, "1 / x", {}},
        {"neg", "Neg", 1, "-x", {}, true},
        {"abs", "Abs", 1, "|x|", {}, true},
        {"hardsigmoid", "HardSigmoid", 1, "max(0, min(1, alpha x + beta))", {{"alpha", "0.2", "slope"}, {"beta", "0.5", "offset"}}},
        {"hardswish", "HardSwish", 1, "x HardSigmoid(x, 1/6, 1/2)", {}},
        {"elu", "Elu", 1, "x < 0 ? alpha (exp(x) - 1) : x", {{"alpha", "1", "scale of the negative part"}}},
        {"softplus", "Softplus", 1, "ln(1 + exp(x))", {}},
    };
    return v;
}

struct RegisterForms {
    RegisterForms() {
        for (const KernelForm& f : forms()) {
            OpSpec s;
            s.name = f.name;
            s.summary = f.summary;
            s.args.push_back({"n", "0", "elements of a 1-D input (or give shapes)"});
            if (f.arity == 1) {
                s.args.push_back({"shape", "-", "input shape, dims joined by x (e.g. 4096x1024)"});
            } else {
                s.args.push_back({"shape_a", "-", "shape of A, dims joined by x (e.g. 4096x1024)"});
                s.args.push_back({"shape_b", "-", "shape of B (numpy broadcasting; default: A's)"});
                if (f.arity == 3) s.args.push_back({"shape_c", "-", "shape of the condition (default: A's)"});
            }
            s.args.push_back({"dtype", "fp16", f.ints ? "fp16 | bf16 | fp32 | int32 | int16 | int8 | uint8" : "fp16 | bf16 | fp32"});
            for (const OpArgSpec& x : f.attrs) s.args.push_back(x);
            register_op_sample(f.name, f.arity == 1 ? OpArgs{{"shape", "3x5x37"}} : OpArgs{{"shape_a", "3x5x37"}, {"shape_b", "37"}});
            const KernelForm ff = f;
            s.make = [ff](const OpArgs& a, const DeviceInfo& d) { return make_form(ff, a, d); };
            register_op(std::move(s));
        }
        OpSpec c;
        c.name = "cast";
        c.summary = "Cast between element types";
        c.args = {{"n", "0", "elements of a 1-D input (or give --shape)"},
                  {"shape", "-", "input shape, dims joined by x"},
                  {"dtype", "fp32", "input type: fp16 | bf16 | fp32 | int32 | int16 | int8 | uint8 | bool"},
                  {"to", "fp16", "output type (same choices)"}};
        register_op_sample("cast", {{"shape", "4x33"}});
        c.make = [](const OpArgs& a, const DeviceInfo& d) {
            StandaloneSpec s;
            s.node.name = "cast";
            s.node.op_type = "Cast";
            std::vector<ElemType> all = numeric_types();
            all.push_back(ElemType::Bool);
            const ElemType from = parse_elem("cast", "dtype", arg_str(a, "dtype"), all);
            const ElemType to = parse_elem("cast", "to", arg_str(a, "to"), all);
            s.node.inputs.push_back(make_tensor(shape_arg("cast", a, "shape"), from));
            s.gens.push_back(from == ElemType::Bool ? integer_input(0, 1) : ref::is_float(from) ? uniform_input(-100, 100) : integer_input(-100, 100));
            s.node.attrs.set("to", ref::Attr::of_int(static_cast<int64_t>(to)));
            s.tol = Tolerance{0, 0};
            return make_standalone(std::move(s), d);
        };
        register_op(std::move(c));
    }
} register_forms;

}  // namespace

std::unique_ptr<IOp> make_binary_standalone(const std::string& onnx, const std::string& name, const OpArgs& a,
                                            const DeviceInfo& dev) {
    KernelForm f{name.c_str(), onnx.c_str(), 2, "", {}, true};
    return make_form(f, a, dev);
}

}  // namespace sfumato::ops::ew
