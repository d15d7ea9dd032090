// The vendor's printf header of the kernel API (its introduction examples include it alone): printf in a kernel
// prints with the block in front (kernel_operator.h).
#pragma once
#include "kernel_operator.h"
