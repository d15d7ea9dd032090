// The operator project's tiling-data macros (BEGIN_TILING_DATA_DEF ...), for host tiling code.
#pragma once
#include "sfumato_ascendc/tiling.h"
