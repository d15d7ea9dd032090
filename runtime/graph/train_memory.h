// The memory plan of a training step (train_step.h): one arena for the forward's activations and
// workspaces, the backward's gradients, its constants and the loss target, placed from their
// lifetimes over the whole step. The compute stream runs the forward steps, then the backward
// items, in one order (the training forward is compiled on one stream), so a tensor's lifetime is
// an interval of positions in that order: from its producer (graph inputs, the target and the
// backward's constants: before the first kernel, they are uploaded first) to its last reader.
// A forward activation lives until the last backward item that reads it (the backward frees
// what it no longer needs as soon as it is consumed); two tensors may share bytes only if one's
// last reader comes before the other's producer. Views (plan views, backward aliases) extend the
// lifetime of the tensor they reinterpret.
//   - In-place gradients: an elementwise backward item (ReluGrad, LossGrad, the Add that sums two
//     gradients) whose output has an input's size and type writes over that input when the item
//     is the input's last reader (the input is a gradient or a forward activation at offset 0 of
//     its block, never a graph input, a constant or the target): one tensor fewer.
//   - Recomputation (TrainOptions::recompute, planned by build_train_plan): the output of a cheap
//     forward step (a vector kernel: pooling, activation, elementwise) is not kept for the
//     backward; the step runs again just before its first backward reader.
// Placement is the inference plan's first-fit (place_first_fit, planning.h: largest first, lowest
// offset free of every tensor whose lifetime meets it). The weight block, the gradient block (all-reduced in
// buckets, read by the update), the backward's shared workspace and the collective library's
// buffers are separate allocations.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runtime/graph/plan.h"
#include "runtime/graph/train.h"

namespace sfumato::graph {

struct TrainMemory {
    uint64_t weight_bytes = 0;      // forward weights (the update writes them in place)
    uint64_t gradient_bytes = 0;    // the weight-gradient block
    uint64_t state_bytes = 0;       // the optimizer-state block (fp32 moments, momentum, master weights)
    uint64_t master_bytes = 0;      // of which fp32 master weights (mixed precision)
    uint64_t workspace_bytes = 0;   // the backward's shared operator workspace
    uint64_t comm_bytes = 0;        // the collective library's buffers on the rank
    uint64_t arena_bytes = 0;       // activations, gradients, constants, target: placed
    uint64_t live_peak_bytes = 0;   // the most bytes live at one position (<= arena_bytes)
    std::string live_peak_at;       // the step or item at that position
    uint64_t no_reuse_bytes = 0;    // every arena tensor in its own block (the old plan)
    uint64_t kept_bytes = 0;        // forward activations still live when the backward starts
    uint64_t kept_2byte_bytes = 0;  // of which stored in fp16/bf16
    int in_place = 0;               // backward items writing over an input
    uint64_t in_place_bytes = 0;    // bytes those outputs would have taken
    int recomputed = 0;             // forward steps run again in the backward
    uint64_t recomputed_bytes = 0;  // their outputs' bytes, not kept from the forward
    // Device memory a chip needs for the step (weights, gradients, workspace, communication
    // buffers, arena) and the chip's allocatable memory (global memory less the reserved part).
    uint64_t total_bytes() const {
        return weight_bytes + gradient_bytes + state_bytes + workspace_bytes + comm_bytes + arena_bytes;
    }
    uint64_t capacity_bytes = 0;
};

// One tensor of the arena, as planned (for the report and the tests): which tensors it holds
// (plan tensors "p<id>", train tensors "t<id>"), where, and its lifetime in positions (forward
// step s is position s, backward item i is position steps + i; -1: before the first kernel).
struct ArenaBlock {
    std::string name;
    std::vector<int> plan_tensors, train_tensors;
    uint64_t offset = 0, bytes = 0;
    int def = 0, last = 0;
};

// Places fwd's activations and workspaces (offsets; fwd.memory.peak_bytes becomes the arena) and
// tp's arena tensors (offsets; tp.arena_bytes); returns the report. `blocks`, if given, receives
// the placed blocks.
TrainMemory plan_train_memory(Plan& fwd, TrainPlan& tp, const DeviceInfo& dev,
                              std::vector<ArenaBlock>* blocks = nullptr);

nlohmann::json train_memory_json(const TrainMemory& m);

// Recomputation's choice (build_train_plan with TrainOptions::recompute): plan tensor pt, the only
// output of step st, is worth recomputing when st is a vector kernel (pooling, activation,
// elementwise; no fused activation) whose inputs are weights or tensors `kept` marks (the backward
// reads them anyway), so not keeping pt saves its bytes from the forward to its first backward
// reader.
bool recomputable(const Plan& p, const PlanStep& st, int pt, const std::vector<bool>& kept);
// Per plan tensor: whether tp's backward reads it (through views: their base tensor).
std::vector<bool> read_by_backward(const Plan& p, const TrainPlan& tp);

}  // namespace sfumato::graph
