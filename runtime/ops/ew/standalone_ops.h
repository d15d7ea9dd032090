// Helpers shared by the `sfumato kernel` forms of the operator library's vector families:
// shape and element-type arguments, per-op tolerances, and the broadcast form of a binary op
// (used by `kernel add --shape-a A --shape-b B`).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "runtime/ops/i_op.h"
#include "runtime/ops/standalone.h"
#include "runtime/ref/host_tensor.h"

namespace sfumato::ops::ew {

// "4096x1024" -> {4096, 1024}; "scalar" -> {} (errors name the op and argument).
std::vector<int64_t> parse_shape(const std::string& op, const std::string& arg, const std::string& s);
// fp16, bf16, fp32, int32, int64, int16, int8, uint8, bool (limited to `allowed`).
ref::ElemType parse_elem(const std::string& op, const std::string& arg, const std::string& s,
                         const std::vector<ref::ElemType>& allowed);
const std::vector<ref::ElemType>& float_types();
const std::vector<ref::ElemType>& numeric_types();
// The standalone check's tolerance for an elementwise op on type t (docs/operators.md).
Tolerance ew_tolerance(const std::string& onnx_op, ref::ElemType t);
// A binary op's standalone form from arguments n / shape_a / shape_b / dtype.
std::unique_ptr<IOp> make_binary_standalone(const std::string& onnx_op, const std::string& name, const OpArgs& a,
                                            const DeviceInfo& dev);

}  // namespace sfumato::ops::ew
