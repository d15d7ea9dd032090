// AscendC::Std math helpers (ceil_div, min, max): part of kernel_operator.h here.
#pragma once
#include "kernel_operator.h"
