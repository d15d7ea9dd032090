// `--simulate auto|all|one` of the multi-chip commands whose ranks run one plan on identical chips
// (train-step's data parallelism, llm and serve's tensor-parallel ranks): whether only rank 0
// simulates its kernels and the other ranks follow it ("mirror": they wait for a notify from rank 0
// where their own kernels would have ended, and run their part of every collective).
//
// The mirror is an approximation, not an exact shortcut: a follower meets rank 0 a notify's link
// latency late at every collective, its chip's memory serves the collective's copies without the
// kernels' traffic that contends with them on a simulated chip, and the ranks' collective parts
// are not exact images of one another (each rank owns other blocks, at other addresses). So
// `auto` is `all` in both modes (every rank's kernels simulated: timing mode takes functional
// mode's cycles) and `one` is an explicit, reported approximation in timing mode only.
#pragma once
#include <string>

namespace sfumato::sys {

// True when only rank 0 simulates kernels. InputError for a value other than auto, all or one
// (naming --simulate), and for `one` in functional mode (which computes every rank's values).
bool mirror_ranks(const std::string& simulate, bool functional);

}  // namespace sfumato::sys
