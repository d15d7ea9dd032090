// The planning stages of compile(), after the passes: lowering to
// operator-bound steps (lower.cpp), stream assignment with events
// (stream_plan.cpp) and liveness-based memory placement (memory_plan.cpp).
#pragma once
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

}  // namespace sfumato::graph
