// The pieces of `sfumato train-step` (cli/cmd_train_step.cpp): compiling the forward for
// training and planning the backward, each rank's data, each rank's host program (forward,
// backward, bucketed all-reduce on a communication stream, SGD), the step's times from the
// device tasks, and the functional check against a host reference.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "runtime/comm/communicator.h"
#include "runtime/graph/plan.h"
#include "runtime/graph/train.h"
#include "runtime/rt/runtime.h"

namespace sfumato::cli {

struct TrainSetup {
    graph::CompileOptions copt;
    graph::TrainOptions opt;
    bool overlap = true;
    // Timing mode with identical ranks: only rank 0 runs the forward, backward and update
    // kernels; each other rank's compute stream follows rank 0's at the bucket boundaries (a
    // notify from rank 0 when a bucket's gradients are written stands for its own backward), and
    // every rank runs its part of each all-reduce.
    bool mirror = false;
    // Timing mode, explicit: a kernel launch identical to an earlier one of the same rank takes
    // the first one's time as a stand-in (cli/kernel_reuse.h).
    bool reuse_timing = false;
    uint32_t block_dispatch_cycles = 0, core_start_cycles = 0;  // the chip's task scheduler (for the stand-ins)
    std::unique_ptr<graph::Graph> graph;
    std::unique_ptr<graph::Plan> plan;
    graph::TrainPlan tp;
    std::vector<std::vector<ref::HostTensor>> inputs;  // per rank
    std::vector<ref::HostTensor> targets;             // per rank
    // Compiles the forward (train passes, one stream, activations kept) and plans the backward.
    void compile(graph::Graph g, int64_t batch, const DeviceInfo& dev);
    // Inputs uniform in [-1, 1] and targets (one-hot rows for a softmax model) per rank.
    void make_data(uint32_t ranks);
};

struct RankRun {
    rt::Context* ctx = nullptr;
    size_t first = 0, last = 0;                          // the step's tasks
    std::vector<std::pair<size_t, size_t>> collectives;  // task ranges of the all-reduces
    std::map<int, ref::HostTensor> grads;                // functional: reduced gradient per WeightGrad tensor
    std::map<int, ref::HostTensor> weights;              // functional: updated weight per plan tensor
    uint64_t reused = 0, reuse_candidates = 0, reuse_unique = 0;  // --reuse-timing: launches
};

// Notify slots of the mirrored ranks (per rank, per bucket), filled by each rank before the
// ranks' rendezvous.
struct MirrorSlots {
    std::vector<std::vector<uint32_t>> slot;
    std::vector<rt::Device*> dev;
};

// Rank r's host program (in its host thread).
void run_rank(const TrainSetup& ts, comm::Communicator& comm, uint32_t r, rt::Context& ctx, rt::Device& dev,
              bool functional, MirrorSlots& mirror, RankRun& out);

struct StepTimes {
    uint64_t t0 = 0, t1 = 0;  // ps
    double step_ps = 0, compute_ps = 0, comm_ps = 0, overlap_ps = 0;
};
StepTimes step_times(const std::vector<RankRun>& runs);

// {"checked", "passed", "compared", "mismatches", "max_abs_err", "first_mismatch"}.
nlohmann::json check_against_reference(const TrainSetup& ts, const std::vector<RankRun>& runs);

}  // namespace sfumato::cli
