// The backward pass and optimizer of a data-parallel training step, planned from a compiled
// forward plan (`sfumato train-step`). Walking the forward steps in reverse, each op's gradient
// becomes graph-node kernels of the operator library (no host arithmetic):
//   - Gemm / MatMul: dA = dY B' and dB = A'^T dY as Gemm nodes with transposed operands (the
//     cube kernel reads a transposed operand in place), dC = ReduceSum over the rows;
//   - Conv (groups 1): dX = ConvTranspose(dY, W) with the forward's strides and pads (output
//     padding to X's size); dW = Conv2DBackpropFilter(X, dY), the weight-gradient convolution
//     kernel (runtime/ops/conv_wgrad_kernel.h: img2col of X by load3d on the cube, whole rows),
//     or, where it cannot run, per kernel offset a Gemm of dY^T with a strided Slice of the padded
//     X^T, concatenated and transposed; dB = ReduceSum of dY over N, OH, OW;
//   - ReLU (alone or fused into a Conv/Gemm as `activation`): ReluGrad(y, dy) (vector);
//   - Add of two same-shape tensors, Identity, an inference Dropout and views (Reshape, Flatten,
//     ...): the gradient passes through (aliased, no kernel); a tensor read by several ops gets
//     the sum; a training Dropout is a Mul by its mask (train_dropout), dy times the same mask;
//   - GlobalAveragePool: dY (N, C, 1, 1) times a constant (1, 1, H, W) of 1/(H W), broadcast;
//   - MaxPool: MaxPoolGrad(X, Y, dY), one vector kernel (runtime/ops/pool_grad.cpp): the input
//     pixels that equal a window's maximum take that window's gradient, summed over the windows
//     (ties pass it to every maximum); where it cannot run (bf16), the same composed per window
//     offset from strided Slice, Equal, Where and Pads spreading back to the input grid;
//   - the loss: LossGrad(y, target) * scale at the output; when the model ends in a Softmax the
//     loss is its cross-entropy and the gradient enters at the logits (softmax - target).
// Weight gradients are placed contiguously in the order the backward produces them and grouped
// into buckets (bucket_bytes, one dtype each) that are all-reduced as soon as complete; the update
// (SgdUpdate, w -= lr g, in place, or a fused optimizer kernel: train_optimizer.cpp) runs per
// weight once its bucket is reduced.
//   - BatchNormalization trains with batch statistics (train_graph rewrites it to
//     BatchNormTraining, runtime/ops/norm/batch_norm_train_op.cpp: mean and variance over every
//     dim but the channel, running statistics as outputs): dbeta = sum dy, dgamma = sum dy xhat
//     and dx through the statistics, from two reductions and two elementwise chains over the
//     tensor (train_norm.cpp);
//   - Clip / ReLU6 (alone or fused as `activation`): ClipGrad(y, dy), dy where min < y < max;
//   - Concat: each input's slice of dy (Slice kernels);
//   - ConvTranspose (one group): dX = Conv(dY, W), dW = Conv2DBackpropFilter(dY, X) (dY as the
//     input, X as the output gradient), dB = ReduceSum of dY; AveragePool: a depthwise
//     ConvTranspose of dY / count with ones (train_conv.cpp);
//   - Sigmoid, Tanh, HardSigmoid, HardSwish, LeakyRelu, Elu, Selu, Softplus, Softsign, Erf, Exp,
//     Log, Sqrt, Reciprocal, Abs: ActivationGrad(x, dy) = f'(x) dy (vector); Neg: Neg(dy);
//   - Softmax (any axis), LogSoftmax, strided Slice, Pad, Expand: train_transformer.cpp;
//   - Pow (a constant exponent), PRelu (the slope trained), Max / Min / Sum, Tile, GlobalMaxPool,
//     InstanceNormalization: train_elementwise.cpp;
//   - comparisons and integer casts end the gradient (their outputs carry none).
// Ops without a backward here are refused, naming the node. Simplified: the running statistics
// are computed on the device but the next step's weights are not rewritten with them (one step).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "runtime/graph/plan.h"
#include "runtime/ref/optimizer.h"

namespace sfumato::graph {

struct TrainOptions {
    double lr = 0.01;
    double loss_scale = 1.0;  // multiplies the loss gradient: 1 / the global batch (a mean)
    uint64_t bucket_bytes = 25ull << 20;
    // Recompute the outputs of cheap forward steps (vector kernels: pooling, activations,
    // elementwise) in the backward instead of keeping them (train_memory.h).
    bool recompute = false;
    // The update (runtime/ref/optimizer.h for the rules): SGD (w -= lr g, the elementwise
    // SgdUpdate), SGD with momentum, AdamW or LAMB (runtime/ops/optim/fused_update.cpp: one fused
    // vector kernel per weight, two for LAMB; fp32 states in an optimizer-state block).
    enum class Optimizer : uint8_t { Sgd, Momentum, AdamW, Lamb } optimizer = Optimizer::Sgd;
    double momentum = 0.9, beta1 = 0.9, beta2 = 0.999;
    double epsilon = -1, weight_decay = -1;  // -1: the optimizer's default (ref::OptimizerRule::of)
    int64_t step = 1;  // the first step the plan's update kernels are built for (bias corrections)
    // Mixed precision: fp32 master weights in the optimizer-state block (initialised with the
    // model's fp32 values); the update reads and writes them and writes the compute weights
    // (fp16/bf16) as their rounding.
    bool master = false;
    // The rule's attributes for an update at step t with the gradient multiplied by inv_scale.
    ref::Attrs update_attrs(int64_t t, double inv_scale) const;
    ref::OptimizerRule rule(int64_t t, double inv_scale) const;
};

const char* optimizer_name(TrainOptions::Optimizer o);
// The optimizer a name gives (optimizer_name's inverse); false for an unknown name.
bool parse_optimizer(const std::string& s, TrainOptions::Optimizer& out);

struct TrainTensor {
    // Recompute: a forward step's output made again in the backward (in the train arena).
    // State: an optimizer state (fp32, in the optimizer-state block; zero before the first step),
    // or, with `value`, the fp32 master copy of a weight (uploaded at load).
    enum class Kind : uint8_t { Forward, Grad, WeightGrad, Alias, Const, Target, Recompute, State } kind = Kind::Grad;
    ops::TensorRef ref;  // shape, dtype, elem (addr set at load)
    int plan = -1;       // Forward: the plan tensor; WeightGrad: the weight's plan tensor
    int alias = -1;      // Alias: the train tensor it reinterprets (same bytes, from `offset` on)
    // Grad/Const/Target/Recompute: in the step's arena (train_memory.h); WeightGrad: in the gradient block;
    // Alias: bytes into the aliased tensor (0 but for a piece of a materialised tensor).
    uint64_t offset = 0, bytes = 0;
    std::shared_ptr<const ref::HostTensor> value;  // Const, master State: the values uploaded at load
};

struct TrainItem {
    std::string name;  // e.g. "fc1/dW"
    ops::NodeDesc desc;
    std::shared_ptr<ops::INodeOp> op;
    std::vector<int> in, out;  // train tensors (-1: omitted)
    int completes_bucket = -1; // after this item's kernels, bucket k's gradients are all written
};

struct Bucket {
    uint64_t offset = 0, bytes = 0;  // in the gradient block
    isa::DType dtype = isa::DType::FP32;
    std::vector<int> grads;          // WeightGrad train tensors
    std::vector<size_t> updates;     // indices into TrainPlan::update
};

// Layout conversions of the backward (train_layout.cpp): those an all-ND backward makes inside
// its convolution kernels (each ConvTranspose converts its dY, each weight gradient its X, to
// NC1HWC0), and those this plan makes (TransData items plus the convolutions still converting).
struct TrainLayout {
    int before = 0;     // the ND backward's in-kernel conversions
    int transdata = 0;  // TransData items (a gradient or activation between ND and NC1HWC0)
    int in_kernel = 0;  // convolutions still converting an ND operand themselves
    int kept = 0;       // backward items running on NC1HWC0 operands
};

struct TrainPlan {
    TrainLayout layout;
    std::vector<TrainTensor> tensors;
    std::vector<TrainItem> backward;  // loss gradient and backward, in issue order
    std::vector<TrainItem> update;    // SGD or AdamW, one per weight
    std::vector<Bucket> buckets;
    uint64_t arena_bytes = 0;  // the step's arena (forward and backward), set by plan_train_memory
    uint64_t grad_bytes = 0, workspace_bytes = 0;
    uint64_t state_bytes = 0;   // the optimizer-state block (moments, momentum, master weights)
    uint64_t master_bytes = 0;  // of which fp32 master weights (mixed precision)
    int output = -1;  // the plan tensor the loss reads (the softmax output, or the model output)
    int target = -1;  // train tensor of the target (shape of output)
    bool softmax_ce = false;
    uint64_t parameters = 0;  // trained elements
    size_t kernel_count() const;
    // Update items launched per step: plain SGD runs one multi-tensor launch per bucket, the
    // other rules one fused item per weight.
    size_t update_launches() const;
};

// The backward and the update of a compiled forward; the arena offsets are left to
// plan_train_memory (train_memory.h).
TrainPlan build_train_plan(const Plan& fwd, const DeviceInfo& dev, const TrainOptions& o);

// The forward a training step runs: every BatchNormalization of g becomes BatchNormTraining
// (batch statistics; outputs Y, running mean and variance, batch mean and variance), so nothing
// folds it into a convolution. Returns how many nodes it rewrote.
int train_graph(Graph& g);

// Dropout that trains (train_dropout.cpp): each Dropout whose training_mode input is a constant
// true, or with `all` every Dropout of a ratio above 0, becomes Mul(x, mask) with the mask a new
// graph input of x's shape named NODE/dropout_mask; `masks` gets its name and the ratio (the step's
// data fills it: 0 with probability ratio, else 1 / (1 - ratio)). The other Dropouts stay the
// identity (inference). Returns how many it rewrote.
int train_dropout(Graph& g, bool all, std::map<std::string, double>& masks);

// The passes a training step compiles its forward with: constant folding, the cube epilogues
// (bias, activation) and, with `layout`, the layout pass in its training mode (activations kept
// in NC1HWC0 through the ops whose backward runs in it, train_layout.cpp).
std::set<std::string> train_passes(bool layout = false);

// The host side of a train tensor that aliases another (train_layout.cpp): its values, made from
// the aliased tensor's (a strided view, or between an NC1HWC0 tensor's values and its storage
// view); h holds what is known, the result is cached there. Null when the source is unknown.
const ref::HostTensor* host_alias(const TrainPlan& tp, std::vector<std::shared_ptr<ref::HostTensor>>& h, int id);

// The layout figures of a step: the forward's layout pass (conversions before, after, saved)
// and the backward's (TrainLayout).
nlohmann::json train_layout_json(const Plan& p, const TrainPlan& tp);

}  // namespace sfumato::graph
