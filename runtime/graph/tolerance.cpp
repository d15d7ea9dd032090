// Per-op tolerances (see tolerance.h). Operator helpers: add a line for an op
// whose kernel is less exact than the fp32 default, with the reason.
#include "runtime/graph/tolerance.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace sfumato::graph {

namespace {

// fp32 graphs. The Cube multiplies fp16 (or bf16) operands with fp32
// accumulation, so an fp32 MatMul/Conv rounds its inputs to fp16 first: 11-bit
// mantissas, about 5e-4 relative per input.
const std::map<std::string, Tol>& fp32_table() {
    static const std::map<std::string, Tol> t = {
        {"MatMul", {1e-2, 1e-2, "operands rounded to fp16 for the Cube (fp32 accumulation)"}},
        {"Gemm", {1e-2, 1e-2, "operands rounded to fp16 for the Cube (fp32 accumulation)"}},
        {"Conv", {1e-2, 1e-2, "operands rounded to fp16 for the Cube (fp32 accumulation)"}},
        {"ConvTranspose", {1e-2, 1e-2, "operands rounded to fp16 for the Cube (fp32 accumulation)"}},
        {"FusedAttention", {1e-2, 1e-2, "Q, K, V and P rounded to fp16 for the Cube"}},
    };
    return t;
}

}  // namespace

Tol op_tolerance(const std::string& op_type, ref::ElemType elem) {
    if (elem == ref::ElemType::Float16) return {1e-3, 1e-2, "fp16 results (11-bit mantissa)"};
    if (elem == ref::ElemType::Bfloat16) return {1e-2, 2e-2, "bf16 results (8-bit mantissa)"};
    auto it = fp32_table().find(op_type);
    if (it != fp32_table().end()) return it->second;
    return {};
}

Tol model_tolerance(const std::vector<std::string>& op_types, ref::ElemType elem) {
    Tol r = op_tolerance("", elem);
    for (const auto& op : op_types) {
        const Tol t = op_tolerance(op, elem);
        if (t.atol > r.atol || t.rtol > r.rtol) {
            r.atol = std::max(r.atol, t.atol);
            r.rtol = std::max(r.rtol, t.rtol);
            r.why = op + ": " + t.why;
        }
    }
    return r;
}

double unit_roundoff(isa::DType t) {
    switch (t) {
        case isa::DType::FP16: return std::ldexp(1.0, -11);
        case isa::DType::BF16: return std::ldexp(1.0, -8);
        case isa::DType::FP32: return std::ldexp(1.0, -24);
        default: return 0.0;
    }
}

namespace {

// Results that are one of their inputs' values (moved, selected or sign-flipped): no rounding
// when the output type is the input's.
bool is_exact(const std::string& op) {
    static const char* const kExact[] = {"Relu", "MaxPool", "GlobalMaxPool", "ReduceMax", "ReduceMin", "Max", "Min",
                                         "Neg", "Abs", "Transpose", "Concat", "Split", "Slice", "Gather", "Pad",
                                         "Expand", "Tile", "Reshape", "Flatten", "Squeeze", "Unsqueeze",
                                         "Identity", "Copy", "Where", "TransData"};
    for (const char* e : kExact)
        if (op == e) return true;
    return false;
}

bool is_cube(const std::string& op) {
    return op == "Conv" || op == "ConvTranspose" || op == "MatMul" || op == "Gemm" || op == "FusedAttention";
}

int64_t numel(const std::vector<int64_t>& s) {
    int64_t n = 1;
    for (int64_t d : s) n *= d;
    return n;
}

// The reduction length behind one output element: the Cube's K, or the terms a vector
// reduction folds (1 for elementwise ops).
int64_t reduction_length(const PlanStep& st, const std::vector<int64_t>* out) {
    const ops::NodeDesc& d = st.desc;
    const std::string& op = st.op_type;
    if (d.inputs.empty()) return 1;
    const std::vector<int64_t>& a = d.inputs[0].shape;
    if (op == "Conv" || op == "ConvTranspose") {
        if (d.inputs.size() < 2) return 1;
        const std::vector<int64_t>& w = d.inputs[1].shape;
        int64_t k = op == "Conv" && w.size() > 1 ? w[1] : (a.size() > 1 ? a[1] : 1);
        if (d.attrs.get_int("diagonal", 0) != 0) k = 1;  // a block-diagonal depthwise W (pass_depthwise)
        for (size_t i = 2; i < w.size(); ++i) k *= w[i];
        return k;
    }
    if (op == "MatMul" || op == "FusedAttention") return a.empty() ? 1 : a.back();
    if (op == "Gemm") {
        const bool ta = d.attrs.get_int("transA", 0) != 0;
        return a.size() < 2 ? 1 : ta ? a[0] : a[1];
    }
    if (op == "Softmax" || op == "LogSoftmax" || op == "LayerNormalization") return a.empty() ? 1 : a.back();
    if (op.rfind("Reduce", 0) == 0 || op.rfind("Global", 0) == 0 || op == "AveragePool" ||
        op == "InstanceNormalization") {
        // Terms per output element: the input's elements over the output's.
        if (st.out.empty() || st.out[0] < 0 || !out) return 1;
        return std::max<int64_t>(1, numel(a) / std::max<int64_t>(1, numel(*out)));
    }
    return 1;
}

}  // namespace

std::vector<double> plan_error_sigma(const Plan& plan) {
    // Variances in units of u^2 / 3 (one rounding of relative size u, uniformly distributed).
    std::vector<double> var(plan.tensors.size(), 0.0);
    const double u32 = unit_roundoff(isa::DType::FP32), u16 = unit_roundoff(isa::DType::FP16);
    for (const PlanStep& st : plan.steps) {
        double in_var = 0, local = 0;
        for (size_t i = 0; i < st.in.size(); ++i) {
            const int t = st.in[i];
            if (t < 0) continue;
            const PlanTensor& pt = plan.tensors[static_cast<size_t>(t)];
            const double u = unit_roundoff(pt.ref.dtype);
            if (pt.kind == PlanTensor::Kind::Weight) {
                // A weight held in a narrower type than fp32 was rounded once to it (a model's
                // fp32 weights rarely are fp16 values).
                if (u > u32) local += u * u;
            } else {
                // A view holds its base's values (some, the layout pass's way back to ND, have no
                // step of their own).
                int r = t;
                while (plan.tensors[static_cast<size_t>(r)].kind == PlanTensor::Kind::View)
                    r = plan.tensors[static_cast<size_t>(r)].base;
                in_var = std::max(in_var, var[static_cast<size_t>(r)]);
            }
            // The Cube multiplies fp16 (bf16) operands: an fp32 operand is rounded on the way.
            if (is_cube(st.op_type) && pt.ref.dtype == isa::DType::FP32) local += u16 * u16;
        }
        if (!st.view) {
            const std::vector<int64_t>* out =
                !st.out.empty() && st.out[0] >= 0 ? &plan.tensors[static_cast<size_t>(st.out[0])].ref.shape : nullptr;
            const int64_t k = reduction_length(st, out);
            // fp32 accumulation: the Cube rounds once per 16-deep mad, a vector fold once per
            // halving (log2 K partial sums on an element's path).
            const double acc = is_cube(st.op_type) ? std::ceil(static_cast<double>(k) / 16.0)
                                                   : std::ceil(std::log2(static_cast<double>(std::max<int64_t>(k, 1))));
            local += acc * u32 * u32;
        }
        isa::DType in_type = isa::DType::FP32;
        for (const int t : st.in)
            if (t >= 0) in_type = plan.tensors[static_cast<size_t>(t)].ref.dtype;
        for (const int o : st.out) {
            if (o < 0) continue;
            const PlanTensor& pt = plan.tensors[static_cast<size_t>(o)];
            const bool exact = st.view || (is_exact(st.op_type) && pt.ref.dtype == in_type);
            const double u = exact ? 0.0 : unit_roundoff(pt.ref.dtype);
            var[static_cast<size_t>(o)] = in_var + local + u * u;
        }
    }
    std::vector<double> sigma(var.size());
    for (size_t i = 0; i < var.size(); ++i) sigma[i] = std::sqrt(var[i] / 3.0);
    return sigma;
}

Tol network_tolerance(double sigma, double rms_want, isa::DType out) {
    Tol t;
    t.rtol = unit_roundoff(out);
    t.atol = kNetworkSigmas * sigma * rms_want;
    char buf[160];
    std::snprintf(buf, sizeof buf, "rounding budget: sigma %.3g of rms %.3g (%d sigmas), rtol = u of the output",
                  sigma, rms_want, static_cast<int>(kNetworkSigmas));
    t.why = buf;
    return t;
}

}  // namespace sfumato::graph
