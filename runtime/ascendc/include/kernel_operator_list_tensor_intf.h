// ListTensorDesc/TensorDesc of the public Ascend C API (sfumato_ascendc/list_tensor.h).
#pragma once
#include "kernel_operator.h"
#include "sfumato_ascendc/list_tensor.h"
