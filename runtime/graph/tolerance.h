// Tolerances for comparing a model's device outputs with expected values: |got
// - want| <= atol + rtol * |want|. The ONNX backend tests use rtol 1e-3, atol
// 1e-7 for fp32 (VALIDATION.md); operators the chip computes in lower precision
// get looser values, stated per op type with the reason (docs/operators.md
// lists them). A model's tolerance is the loosest of its executed operators;
// integer and bool outputs compare exactly.
#pragma once
#include <string>
#include <vector>

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

}  // namespace sfumato::graph
