// `sfumato kernel gemm` and `sfumato kernel bmatmul`: the Gemm and MatMul graph
// nodes (matmul_node.h) run standalone on random inputs and checked against the
// host references.
//
// Tolerance, derived for inputs in [-1, 1] (so every |a b| <= 1 and S = sum_k
// |a b| <= k): the cube rounds its fp32 accumulator once per mad, at least
// every 16 of k, each time by at most 2^-24 of a partial sum bounded by S, so
// |error| <= 2 ceil(k / 16) 2^-24 k |alpha| (factor 2 for slack); a bias mad
// adds s c with s = beta / alpha rounded to the input type
// (|beta| u_in more); the output cast adds one unit in the last place of the
// output type (rtol: the check rounds the reference to the output type first,
// and the two roundings may straddle). Activations from the vector epilogue
// compute in fp32 (a few fp32 roundings of values up to |alpha| k + |beta|, and
// Gelu's erf approximation, 1.5e-7): atol grows by 2^-20 (1 + |alpha| k +
// |beta|).
#include <algorithm>
#include <cmath>
#include <sstream>

#include "runtime/ops/i_op.h"
#include "runtime/ops/standalone.h"
#include "runtime/ref/activation.h"
#include "sim/error.h"

namespace sfumato::ops {

namespace {

double arg_f64(const OpArgs& a, const std::string& op, const std::string& key) {
    const std::string& s = a.at(key);
    size_t pos = 0;
    double v = 0;
    try {
        v = std::stod(s, &pos);
    } catch (...) {
        pos = 0;
    }
    if (pos != s.size() || s.empty() || !std::isfinite(v))
        throw InputError("operator '" + op + "': argument '" + key + "' = '" + s +
                         "' is not a finite number");
    return v;
}

std::string dashed_key(std::string k) {
    std::replace(k.begin(), k.end(), '_', '-');
    return k;
}

std::vector<int64_t> arg_shape(const OpArgs& a, const std::string& op, const std::string& key) {
    std::vector<int64_t> shape;
    // Dims joined by x (4x128x64), as every shape argument; the comma form is accepted too.
    std::string dims = a.at(key);
    std::replace(dims.begin(), dims.end(), 'x', ',');
    std::stringstream ss(dims);
    std::string item;
    while (std::getline(ss, item, ',')) {
        size_t pos = 0;
        long long v = -1;
        try {
            v = std::stoll(item, &pos);
        } catch (...) {
            pos = 0;
        }
        if (pos != item.size() || v < 1 || v > (1ll << 24))
            throw InputError("operator '" + op + "': argument '" + key + "' = '" + a.at(key) +
                             "' is not a shape of positive dimensions (e.g. 2x64x128)");
        shape.push_back(v);
    }
    if (shape.empty() || shape.size() > 6)
        throw InputError("operator '" + op + "': argument '" + key + "' needs 1 to 6 dimensions");
    return shape;
}

ref::ElemType float_type(const OpArgs& a, const std::string& op, bool allow_int8) {
    const std::string d = a.at("dtype");
    if (d == "fp16") return ref::ElemType::Float16;
    if (d == "bf16") return ref::ElemType::Bfloat16;
    if (d == "fp32") return ref::ElemType::Float;
    if (allow_int8 && d == "int8") return ref::ElemType::Int8;
    throw InputError("operator '" + op + "': argument 'dtype' = '" + d + "' (valid: fp16, bf16, fp32" +
                     (allow_int8 ? ", int8)" : ")"));
}

void set_activation(NodeDesc& n, const OpArgs& a, const std::string& op) {
    const std::string act = a.at("activation");
    if (act == "none") return;
    n.attrs.set("activation", ref::Attr::of_string(act));
    ref::activation_of(n.attrs);  // validates the name
    (void)op;
}

// Unit in the last place (relative) and unit roundoff of an element type.
double ulp_of(ref::ElemType t) {
    return t == ref::ElemType::Float16 ? 0x1p-10 : t == ref::ElemType::Bfloat16 ? 0x1p-7 : 0x1p-23;
}
double unit_of(ref::ElemType t) { return ulp_of(t) / 2; }

Tolerance matmul_tolerance(ref::ElemType t, uint64_t k, double alpha, double beta, bool act) {
    Tolerance tol;
    if (t == ref::ElemType::Int8) return tol;  // exact in int32
    const double kk = static_cast<double>(k);
    tol.atol =
        2.0 * std::ceil(kk / 16) * 0x1p-24 * kk * std::fabs(alpha) + std::fabs(beta) * unit_of(t) + 0x1p-24;
    if (act) tol.atol = 1.2 * tol.atol + 0x1p-20 * (1 + std::fabs(alpha) * kk + std::fabs(beta));
    tol.rtol = ulp_of(t);
    return tol;
}

std::unique_ptr<IOp> make_gemm(const OpArgs& a, const DeviceInfo& dev) {
    const std::string op = "gemm";
    const int64_t m = static_cast<int64_t>(arg_u64(a, op, "m", 1, 1 << 20));
    const int64_t n = static_cast<int64_t>(arg_u64(a, op, "n", 1, 1 << 20));
    const int64_t k = static_cast<int64_t>(arg_u64(a, op, "k", 1, 1 << 20));
    const bool ta = arg_u64(a, op, "trans_a", 0, 1) != 0, tb = arg_u64(a, op, "trans_b", 0, 1) != 0;
    const double alpha = arg_f64(a, op, "alpha"), beta = arg_f64(a, op, "beta");
    const ref::ElemType t = float_type(a, op, false);
    StandaloneSpec spec;
    NodeDesc& node = spec.node;
    node.name = "gemm";
    node.op_type = "Gemm";
    node.attrs.set_owner(node.name);
    node.attrs.set("transA", ref::Attr::of_int(ta));
    node.attrs.set("transB", ref::Attr::of_int(tb));
    node.attrs.set("alpha", ref::Attr::of_float(alpha));
    node.attrs.set("beta", ref::Attr::of_float(beta));
    node.attrs.set("split_k_mode", ref::Attr::of_string(a.at("split_k_mode")));
    set_activation(node, a, op);
    node.inputs.push_back(make_tensor(ta ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k}, t));
    node.inputs.push_back(make_tensor(tb ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n}, t));
    const std::string bias = a.at("bias");
    if (bias == "row")
        node.inputs.push_back(make_tensor({n}, t));
    else if (bias == "col")
        node.inputs.push_back(make_tensor({m, 1}, t));
    else if (bias == "scalar")
        node.inputs.push_back(make_tensor({1}, t));
    else if (bias == "full")
        node.inputs.push_back(make_tensor({m, n}, t));
    else if (bias != "none")
        throw InputError("operator 'gemm': argument 'bias' = '" + bias +
                         "' (valid: none, row, col, scalar, full)");
    spec.gens.assign(node.inputs.size(), uniform_input(-1, 1));
    spec.tol = matmul_tolerance(t, static_cast<uint64_t>(k), alpha, bias == "none" ? 0.0 : beta,
                                a.at("activation") != "none" && a.at("activation") != "Relu");
    return make_standalone(std::move(spec), dev);
}

std::unique_ptr<IOp> make_bmatmul(const OpArgs& a, const DeviceInfo& dev) {
    const std::string op = "bmatmul";
    const ref::ElemType t = float_type(a, op, true);
    StandaloneSpec spec;
    NodeDesc& node = spec.node;
    node.name = "bmatmul";
    node.op_type = t == ref::ElemType::Int8 ? "MatMulInteger" : "MatMul";
    node.attrs.set_owner(node.name);
    if (t != ref::ElemType::Int8)
        set_activation(node, a, op);
    else if (a.at("activation") != "none")
        throw InputError("operator 'bmatmul': argument 'activation' needs a float dtype");
    // --shape-a/--shape-b, as every shape argument is named; --a-shape/--b-shape, the older
    // spelling, still work.
    auto pick = [&](const char* key, const char* old_key) {
        const bool has_new = a.at(key) != "-", has_old = a.at(old_key) != "-";
        if (has_new && has_old) throw InputError("operator 'bmatmul': give --" + dashed_key(key) + " or --" + dashed_key(old_key) + ", not both");
        if (!has_new && !has_old) throw InputError("operator 'bmatmul': missing argument '" + dashed_key(key) + "'");
        return arg_shape(a, op, has_new ? key : old_key);
    };
    const std::vector<int64_t> as = pick("shape_a", "a_shape"), bs = pick("shape_b", "b_shape");
    node.inputs.push_back(make_tensor(as, t));
    node.inputs.push_back(make_tensor(bs, t));
    if (t == ref::ElemType::Int8)
        spec.gens.assign(2, integer_input(-128, 127));
    else
        spec.gens.assign(2, uniform_input(-1, 1));
    spec.tol = matmul_tolerance(t, static_cast<uint64_t>(as.back()), 1.0, 0.0,
                                a.at("activation") != "none" && a.at("activation") != "Relu");
    return make_standalone(std::move(spec), dev);
}

const char* kActivations =
    "none | Relu | LeakyRelu | Sigmoid | Tanh | Gelu | "
    "Clip | HardSigmoid | HardSwish";

}  // namespace

SFUMATO_REGISTER_OP(gemm, OpSpec{"gemm",
                                 "ONNX Gemm node: Y = alpha A' B' + beta C [+ fused "
                                 "activation] on the cube",
                                 {{"m", "", "rows of A' and Y"},
                                  {"n", "", "columns of B' and Y"},
                                  {"k", "", "columns of A', rows of B'"},
                                  {"trans_a", "0", "transA: A stored k x m"},
                                  {"trans_b", "0", "transB: B stored n x k"},
                                  {"alpha", "1", "alpha"},
                                  {"beta", "1", "beta"},
                                  {"bias", "row", "C: none | row (N) | col (M x 1) | scalar | full (M x N)"},
                                  {"activation", "none", kActivations},
                                  {"split_k_mode", "atomic",
                                   "split-K parts combine by atomic (FixPipe atomic add) | two-pass (workspace "
                                   "slices, vector reduction in part order); the node attribute split_k_mode"},
                                  {"dtype", "fp16", "fp16 | bf16 | fp32"}},
                                 make_gemm});

SFUMATO_REGISTER_OP(bmatmul, OpSpec{"bmatmul",
                                    "ONNX MatMul node (numpy batching and broadcasting; int8: "
                                    "MatMulInteger)",
                                    {{"shape_a", "-", "shape of A, dims joined by x, e.g. 4x128x64 (1-D allowed)"},
                                     {"shape_b", "-", "shape of B, e.g. 64x96"},
                                     {"a_shape", "-", "older spelling of --shape-a"},
                                     {"b_shape", "-", "older spelling of --shape-b"},
                                     {"activation", "none", kActivations},
                                     {"dtype", "fp16", "fp16 | bf16 | fp32 | int8"}},
                                    make_bmatmul});

}  // namespace sfumato::ops

namespace sfumato::ops {
SFUMATO_OP_SAMPLE(gemm, "gemm", {{"m", "40"}, {"n", "48"}, {"k", "64"}});
SFUMATO_OP_SAMPLE(bmatmul, "bmatmul", {{"shape_a", "2x40x64"}, {"shape_b", "64x48"}});
}  // namespace sfumato::ops
