// Timing re-use's error bound on a multi-chip host program's step times, propagated along the
// critical path (issue 29). The re-use service bounds each launch's error (reuse::LaunchBounds:
// the parts of ReuseCounters::error_bound_cycles); a step's time is not a sum of kernel spans but
// the longest path through every chip's kernels, copies and waits, from the step's first start to
// its last end. Every duration enters that path with the sign +, and the path is a maximum of
// sums (max-plus), so a change of each kernel by at most b_k moves any path's end by at most the
// largest sum of b_k along one path. Where the chips meet only at all-chip exchanges (EP's
// dispatch and combine: each chip's stream waits for every peer's notify; TP's all-reduce), the
// part of a path between two consecutive exchanges stays on one chip, so the largest sum is
//   sum over the segments g between exchanges of max over chips r of B(g, r),
// B(g, r) the bounds of chip r's launches in segment g; the kernels of an exchange itself (TP's
// all-reduce: a ring's steps run on every chip in turn) add up over the chips instead. A step's time T =
// max_r end_r - min_r begin_r is measured from its own begin, which the previous step moved: against the last
// exchange X before the step, end - X moves by at most the sum above over the segments from X to the step's
// end, and begin - X by at most the largest B of one chip's launches after X and before the step, so
//   bound(step) = sum over g from X's segment to the step's last of max_r B(g, r, up to the
//                 step's end) + max_r B(X's segment, r, before the step).
// Each chip's host synchronises at the end of a step (it reads the tokens back), so on one chip a
// step's time holds only its own launches: the bound is their sum.
// What it inherits: each launch's bound is the re-use service's estimate (timing_reuse.h says
// what that cannot see); host time between launches is the same in both runs.
#pragma once
#include <cstddef>
#include <vector>

#include "runtime/llm/engine.h"
#include "runtime/reuse/timing_reuse.h"
#include "runtime/rt/context.h"

namespace sfumato::llm {

// One chip's launches as its host program ran them, in ps.
struct ChipLaunches {
    struct Step {
        bool prefill = false;
        uint64_t begin = 0, end = 0;
    };
    struct Launch {
        uint64_t start = 0;   // its task's start
        size_t exchange = 0;  // exchanges launched before it
        double bound = 0;     // its part of the bound
        // Part of an exchange (a collective's copy and reduce kernels): a path through the
        // exchange may visit every chip's part (a ring's steps), so these add up over the chips.
        bool in_exchange = false;
    };
    std::vector<Step> steps;                // every chip the same number
    std::vector<uint64_t> exchange_starts;  // each all-chip exchange's start, in launch order
    std::vector<Launch> launches;
    bool known = true;  // reuse::LaunchBounds::known
};

// A chip's launches from its context's task records: its steps, each all-chip exchange's tasks
// [first, last) (ascending), its re-use service's bounds and its clock.
ChipLaunches chip_launches(const rt::Context& ctx, const std::vector<StepRecord>& steps,
                           const std::vector<std::pair<size_t, size_t>>& exchanges,
                           const reuse::LaunchBounds& bounds, double ps_per_cycle);

struct PathBound {
    bool known = true;            // false: some launch's bound unknown (ReuseCounters::error_bound_known)
    std::vector<double> step_ps;  // per step, as above
    double ttft_ps = 0;           // the prefill steps' bounds summed (TTFT is their time)
    double tpot_ps = 0;           // the decode steps' mean (TPOT is their mean time)
};

// Several chips must depend on each other only at their exchanges (every chip the same number,
// in the same order; SimError otherwise): not a pipeline's stages, which hand over without
// meeting.
PathBound path_bound(const std::vector<ChipLaunches>& chips);

}  // namespace sfumato::llm
