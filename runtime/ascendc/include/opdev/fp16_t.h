// The CANN host library's half-precision value type (op::fp16_t), as host programs (the catlass examples'
// helpers) use it: the Ascend C layer's host half (sfumato_ascendc/scalar_types.h), which converts to and
// from float as the device does.
#pragma once
#include "sfumato_ascendc/scalar_types.h"

namespace op {
using fp16_t = ::half;
}  // namespace op
