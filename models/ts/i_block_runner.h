// Contract: what the task scheduler drives to run one block of a kernel on the cores it chose.
// run_block() is called at the simulated time the block starts and never blocks; the runner
// calls IBlockDone::block_done(cookie) exactly once, at the simulated time the block finished
// (possibly from another process, never re-entrantly from inside run_block()). The chip adapts
// its AI cores to this interface; tests use a runner with arithmetic block times.
#pragma once
#include <cstdint>

#include "sim/device_if.h"

namespace sfumato::ts {

// The cores one block occupies: one cube (or coupled) core and/or a range of vector cores.
struct CoreSlot {
    int32_t cube = -1;       // AIC index (or coupled core), -1 if none
    int32_t vec_first = -1;  // first AIV index, -1 if none
    uint32_t vec_count = 0;
};

class IBlockDone {
public:
    virtual ~IBlockDone() = default;
    virtual void block_done(uint64_t cookie) = 0;
};

class IBlockRunner {
public:
    virtual ~IBlockRunner() = default;
    virtual void run_block(const CoreSlot& slot, Task& task, uint32_t block_idx, IBlockDone& done,
                           uint64_t cookie) = 0;
};

}  // namespace sfumato::ts
