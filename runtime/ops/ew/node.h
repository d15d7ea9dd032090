// Access to the elementwise node ops' plans (tests and reports): the plan behind an INodeOp
// made for an elementwise op type, or null for other ops.
#pragma once
#include "runtime/ops/ew/plan.h"
#include "runtime/ops/node_op.h"

namespace sfumato::ops::ew {

const Plan* ew_plan_of(const INodeOp& op);

}  // namespace sfumato::ops::ew
