// Argument helpers shared by the `sfumato kernel` forms of the normalisation, reduction and
// pooling families (errors name the operator and the argument), and the tolerance rule: one
// unit in the last place of the output type plus the fp32 computation's own relative error.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "runtime/ops/i_op.h"
#include "runtime/ops/standalone.h"

namespace sfumato::ops::norm {

ref::ElemType float_dtype_arg(const OpArgs& a, const std::string& op);
std::vector<int64_t> shape_arg(const OpArgs& a, const std::string& op, const std::string& key);
std::vector<int64_t> ints_arg(const OpArgs& a, const std::string& op, const std::string& key);
int64_t int_arg(const OpArgs& a, const std::string& op, const std::string& key);
double float_arg(const OpArgs& a, const std::string& op, const std::string& key, double lo, double hi);
Tolerance output_tolerance(ref::ElemType out, double fp32_rel, double atol);
// make_standalone with the node named after the operator; an UnsupportedError becomes an
// InputError naming the operator.
std::unique_ptr<IOp> standalone(NodeDesc n, const std::vector<InputGen>& gens, Tolerance tol, const DeviceInfo& dev,
                                const std::string& op);

}  // namespace sfumato::ops::norm
