// Per-op tolerances (see tolerance.h). Operator helpers: add a line for an op
// whose kernel is less exact than the fp32 default, with the reason.
#include "runtime/graph/tolerance.h"

#include <algorithm>
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

}  // namespace sfumato::graph
