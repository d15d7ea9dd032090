// A data-parallel training step as a host program (what `sfumato train-step`, cli/cmd_train_step.cpp,
// calls): compiling the forward for training and planning the backward, each rank's data, each
// rank's host program (forward, backward, bucketed all-reduce on a communication stream, SGD)
// through runtime/rt only, the step's times from the device tasks, and the functional check
// against a host reference. Several steps (`steps`) run the same batch each step; under mixed
// precision with dynamic loss scaling a step whose gradients overflow is skipped (train_run.cpp).
// Simplified: one compute stream.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "runtime/comm/communicator.h"
#include "runtime/graph/plan.h"
#include "runtime/graph/train.h"
#include "runtime/graph/train_memory.h"
#include "runtime/reuse/timing_reuse.h"
#include "runtime/rt/runtime.h"

namespace sfumato::graph {

// Dynamic loss scaling (mixed precision): the loss gradient is multiplied by the scale; a step
// whose reduced gradients hold an infinity or a NaN is skipped and the scale multiplied by
// `backoff`; after `growth_interval` applied steps in a row it is multiplied by `growth`.
// Defaults: PyTorch's torch.cuda.amp.GradScaler (init_scale 2^16, growth_factor 2,
// backoff_factor 0.5, growth_interval 2000).
struct LossScaling {
    bool dynamic = false;
    double init = 65536;
    double growth = 2, backoff = 0.5;
    int64_t growth_interval = 2000;
};

struct StepRecord {
    double loss_scale = 1;  // the scale this step's loss gradient carried
    bool skipped = false;   // overflow: no update
};

struct TrainSetup {
    CompileOptions copt;
    TrainOptions opt;
    LossScaling scaling;
    int steps = 1;  // steps run back to back on the same batch
    bool overlap = true;
    // The layout pass in the forward and NC1HWC0 gradients in the backward (train_layout.cpp).
    // `sfumato train-step` sets it (--layout on, its default); a TrainSetup starts all ND, which
    // the finite-difference tests of the derivations use (tests/unit/graph_train_grad_test.cpp).
    bool layout = false;
    // Every Dropout of a ratio above 0 trains (a mask per rank; train_dropout), not only those
    // whose training_mode input is true; the others are the identity, as in inference.
    bool dropout = false;
    std::map<std::string, double> dropout_masks;  // mask input name -> ratio (train_dropout)
    // Values of the inputs' symbolic dimensions other than the batch (a sequence length).
    std::map<std::string, int64_t> dims;
    // Timing mode with identical ranks: only rank 0 runs the forward, backward and update
    // kernels; each other rank's compute stream follows rank 0's at the bucket boundaries (a
    // notify from rank 0 when a bucket's gradients are written stands for its own backward), and
    // every rank runs its part of each all-reduce.
    bool mirror = false;
    // Timing mode: a kernel launch identical to an earlier one takes an earlier full run's time
    // as a stand-in (runtime/reuse/timing_reuse.h). run_train_step gives the ranks one table,
    // in lockstep (data parallel: a rank takes another's run of the same launch), unless the
    // caller set a table.
    reuse::ReuseOptions reuse;
    std::unique_ptr<Graph> graph;
    std::unique_ptr<Plan> plan;
    TrainPlan tp;
    TrainMemory memory;  // the step's memory plan per chip
    uint64_t comm_buffer_bytes = 0;  // comm.buffer_bytes (the collective library's buffers count in the plan)
    std::vector<std::vector<ref::HostTensor>> inputs;  // per rank
    std::vector<ref::HostTensor> targets;             // per rank
    // Compiles the forward (train passes, one stream), plans the backward and the step's memory
    // (activations kept until their last backward reader, train_memory.h).
    void compile(Graph g, int64_t batch, const DeviceInfo& dev);
    // Inputs uniform in [-1, 1] (token ids uniform over their embedding's rows) and targets
    // (one-hot rows for a softmax model) per rank; without targets for timing mode, which uploads
    // no values (a GPT-2 step's logits target is 1.6 GB of doubles per rank).
    void make_data(uint32_t ranks, bool with_targets = true);
};

struct RankRun {
    rt::Context* ctx = nullptr;
    size_t first = 0, last = 0;                          // the step's tasks
    std::vector<std::pair<size_t, size_t>> collectives;  // task ranges of the all-reduces
    std::map<int, ref::HostTensor> grads;                // functional: reduced gradient per WeightGrad tensor
    std::map<int, ref::HostTensor> weights;              // functional: updated weight per plan tensor
    std::map<int, ref::HostTensor> states;               // functional: optimizer state / master per train tensor
    std::vector<StepRecord> steps;
    reuse::ReuseCounters reuse;  // --reuse-timing
    // Functional: per step, the forward values the backward's decisions read (decision_sources),
    // as the device computed them (plan tensor -> logical values), read when their step completed.
    std::vector<std::map<int, ref::HostTensor>> forward_seen;
};

// Notify slots of the mirrored ranks (per rank, per bucket), filled by each rank before the
// ranks' rendezvous.
struct MirrorSlots {
    std::vector<std::vector<uint32_t>> slot;
    std::vector<rt::Device*> dev;
};

// Rank r's host program (in its host thread); `reuse`: its timing re-use (ts.reuse, with the
// table the ranks share).
void run_rank(const TrainSetup& ts, comm::Communicator& comm, uint32_t r, rt::Context& ctx, rt::Device& dev,
              bool functional, MirrorSlots& mirror, const reuse::ReuseOptions& reuse, RankRun& out);

struct StepTimes {
    uint64_t t0 = 0, t1 = 0;  // ps
    double step_ps = 0, compute_ps = 0, comm_ps = 0, overlap_ps = 0;
};
StepTimes step_times(const std::vector<RankRun>& runs);

// Rank r's weight gradients (per WeightGrad train tensor) on the host: the forward plan's steps
// and the backward items through the host references (double, each output rounded to its type).
// `weights` (plan tensor -> value in its type) replaces the model's stored weights where given;
// the loss gradient is multiplied by loss_mult (a loss scale).
// `device_forward` (plan tensor -> the device's value, RankRun::forward_seen) gives the backward's
// decisions: the inputs that only choose which elements pass a gradient (a ReLU's or Clip's mask,
// MaxPool's maxima, a Where's condition: decision_inputs) are computed from the device's forward
// values, every other value from the host's own forward. An element of an activation that sits on
// a threshold within the device's rounding (the cube takes fp32 operands as fp16) then passes or
// stops its gradient as it did on the device, instead of flipping the comparison.
std::map<int, ref::HostTensor> host_gradients(const TrainSetup& ts, uint32_t r,
                                              const std::map<int, ref::HostTensor>* weights = nullptr,
                                              double loss_mult = 1,
                                              const std::map<int, ref::HostTensor>* device_forward = nullptr);

// The input slots of a backward item that decide which elements pass (ReluGrad's and ClipGrad's
// y, MaxPoolGrad's X and Y, Where's condition, an activation gradient's x); empty for other items.
std::vector<size_t> decision_inputs(const TrainItem& it);

// The forward plan tensors the backward's decisions are computed from: the decision inputs
// followed back through aliases, the backward items that read only forward values and constants
// (a TransData, a Slice, an Equal), the forward's views and TransData steps, to the outputs of
// computing steps (what run_rank records per step in functional mode).
std::set<int> decision_sources(const Plan& p, const TrainPlan& tp);

// Replays the steps on the host (gradients summed over the ranks, the same loss-scale decisions
// checked against the device's, the backward's masks from each rank's device forward of that step
// (host_gradients' device_forward), the optimizer's rule) and compares the last step's reduced
// gradients, the updated weights and the optimizer's states and master weights.
// {"checked", "passed", "compared", "mismatches", "max_abs_err", "device_decisions" (forward
// tensors, over ranks and steps, whose device values gave the masks), "first_mismatch"}.
nlohmann::json check_against_reference(const TrainSetup& ts, const std::vector<RankRun>& runs);

}  // namespace sfumato::graph
