// Tolerances for comparing a model's device outputs with expected values: |got
// - want| <= atol + rtol * |want|. The ONNX backend tests use rtol 1e-3, atol
// 1e-7 for fp32 (VALIDATION.md); operators the chip computes in lower precision
// get looser values, stated per op type with the reason (docs/operators.md
// lists them). A model's tolerance is the loosest of its executed operators (onnx-test);
// `sfumato run` judges whole networks by the plan's rounding budget (plan_error_sigma);
// integer and bool outputs compare exactly.
#pragma once
#include <string>
#include <vector>

#include "runtime/graph/plan.h"
#include "runtime/ref/host_tensor.h"

namespace sfumato::graph {

struct Tol {
    double atol = 1e-7;
    double rtol = 1e-3;
    std::string why;
};
// The tolerance of one op type computing in element type `elem`.
Tol op_tolerance(const std::string& op_type, ref::ElemType elem);
// The loosest over a set of op types.
Tol model_tolerance(const std::vector<std::string>& op_types, ref::ElemType elem);

// Whole networks (docs/graph.md, "Checking results"): the rounding-error budget of a compiled
// plan. Every rounding the device makes (a result stored in its dtype, a weight or an fp32
// operand rounded for the Cube, the fp32 accumulator rounded per 16-deep mad or per fold of a
// reduction) is an independent error of relative standard deviation u / sqrt(3) (u = 2^-11
// fp16, 2^-8 bf16, 2^-24 fp32); a step passes on the largest budget of its data inputs with
// unit gain and adds its own roundings in quadrature. Returns, per plan tensor, that standard
// deviation relative to the tensor's rms.
std::vector<double> plan_error_sigma(const Plan& plan);
// Unit roundoff of a device dtype (0 for integers).
double unit_roundoff(isa::DType t);
// The check of a network output against an exact reference: |got - want| <= atol + rtol |want|
// with atol = kNetworkSigmas x sigma x rms(want) and rtol = u of the output (its last rounding).
constexpr double kNetworkSigmas = 6.0;
Tol network_tolerance(double sigma, double rms_want, isa::DType out);

}  // namespace sfumato::graph
