// The CANN host library's bfloat16 value type (op::bfloat16): the Ascend C layer's host bfloat16_t
// (sfumato_ascendc/scalar_types.h).
#pragma once
#include "sfumato_ascendc/scalar_types.h"

namespace op {
using bfloat16 = ::bfloat16_t;
}  // namespace op
