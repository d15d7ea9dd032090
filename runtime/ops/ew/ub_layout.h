// Placement of an elementwise plan's UB buffers under the 220x bank rules
// (runtime/ops/ew/ub_layout.cpp).
#pragma once
#include <cstdint>
#include <vector>

#include "runtime/ops/ew/plan.h"

namespace sfumato::ops::ew {

// Phase (address modulo 512) each temporary slot of the plan's program starts at, then the
// operands' staging area's: two tile sources of one step in different halves of the bank groups.
std::vector<uint32_t> phase_vars(const Plan& p);

// Places the plan's laid-out buffers (lay_out's sizes) whole inside the UB's bank spans; false
// (the plan unchanged, its sequential layout kept) when they do not fit that way.
bool place_ub(Plan& p, uint64_t ub);

}  // namespace sfumato::ops::ew
