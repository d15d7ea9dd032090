// A benchmark loop over one operator, as published kernel figures are measured: the op's inputs
// are prepared once, the L2 optionally written back and invalidated (cold start), and the same
// launch (all of the op's kernels, in order, on one stream) is issued `repeat` times back to
// back before one synchronisation. Each launch after the first therefore pays for writing back
// the dirty L2 lines the previous one left and finds whatever that one left in L2: the steady
// state. The first launch is reported apart (cold, or warm as the upload left the inputs); the
// steady state is the mean over launches 2..repeat. The check runs once, on the last launch's
// output (every launch computes the same result from the same inputs). Simplified: the host
// issues the launches without waiting in between, as a profiler's loop does once its queue
// is full; there is no per-iteration host work (no input re-upload, no cache flush).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/ops/i_op.h"

namespace sfumato::ops {

struct BenchLoop {
    // Each launch's tasks (the op's kernels, in order).
    std::vector<std::vector<std::shared_ptr<Task>>> launches;
    CheckResult check;
    // Execution spans (device cycles) summed over a launch's kernels.
    uint64_t first_cycles() const;
    // Mean over launches 2..N (the first launch's when there is only one).
    double steady_cycles() const;
    // Of launch i (0-based).
    uint64_t launch_cycles(size_t i) const;
};

// Runs op.prepare, an L2 flush when `cold`, `repeat` (>= 1) launches, one synchronisation,
// op.check and op.release on `rt` (call from the host program).
BenchLoop run_bench_loop(rt::Runtime& rt, IOp& op, uint32_t repeat, bool cold);

}  // namespace sfumato::ops
