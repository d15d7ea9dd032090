// The planning stages of compile(), after the passes: lowering to
// operator-bound steps (lower.cpp), stream assignment with events
// (stream_plan.cpp) and liveness-based memory placement (memory_plan.cpp).
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "runtime/graph/plan.h"

namespace sfumato::graph {

// Binds every node that must run to its operator; creates plan tensors; applies
// the `views` and `format` passes (their reports are appended to plan.passes).
void lower(Plan& plan, const DeviceInfo& dev, const CompileOptions& opt);
// Assigns steps to streams (streams = 0: the planner chooses, at most
// kMaxStreams) and adds event record/wait pairs for cross-stream dependencies.
constexpr int kMaxStreams = 4;
void plan_streams(Plan& plan, int streams);
// Places weights in one block and activations in one arena, reusing memory
// between tensors whose lifetimes are ordered by the stream plan
// (happens-before); fills plan.memory.
void plan_memory(Plan& plan);

// One block to place in an arena: its size and its producer's position (the tie-break).
struct ArenaItem {
    uint64_t bytes = 0;
    int def = 0;
};
// Greedy offset assignment, shared by the inference plan (plan_memory) and the training step's
// plan (train_memory.h): blocks largest first (equal sizes: the earlier producer first, then
// the lower index), each at the lowest offset where it overlaps no block already placed whose
// lifetime meets its own (`conflict(i, j)`: blocks i and j are live at once). Fills `offsets`
// (one per item) and returns the arena's size (the highest end).
uint64_t place_first_fit(const std::vector<ArenaItem>& items, const std::function<bool(size_t, size_t)>& conflict,
                         std::vector<uint64_t>& offsets);

}  // namespace sfumato::graph
