// Graph passes: each a function with a name, a switch (CompileOptions::passes)
// and a report of what it changed. They run in the order of all_passes() on an
// inferred graph with concrete shapes:
//   fold            nodes whose inputs are all constant are computed on the
//   host (runtime/ref) dce             Identity and inference Dropout removed,
//   nodes nobody reads removed fuse_layernorm
//   ReduceMean-Sub-Pow-ReduceMean-Add-Sqrt-Div[-Mul][-Add] ->
//   LayerNormalization fuse_attention  MatMul(Q,K^T)[-Mul|Div scale][-Add
//   mask]-Softmax-MatMul(V) -> FusedAttention precision       --precision:
//   float tensors to fp16/bf16; mixed keeps reductions, softmax and
//                   normalisations in fp32 with Casts around them (not switched
//                   by --passes)
//   fuse_conv       Conv/MatMul/Gemm + bias Add + activation -> one node
//   (attribute `activation`);
//                   MatMul on a 2-D constant weight with a bias becomes Gemm on
//                   a reshaped view
//   depthwise       depthwise Convs of whole C0 blocks -> groups of C0 channels with a
//                   block-diagonal W (no padded groups; pass_depthwise.cpp)
//   fuse_elementwise chains of elementwise ops -> one ElementwiseChain kernel
//   views           reshape-family ops as views of their input (no kernel, no
//   memory) format          fractal formats where an operator asks for them;
//   conversions inserted, counted
//   layout          activations kept in NC1HWC0 between Convs, pooling and zero-preserving
//                   elementwise ops; TransData at the boundaries only (layout.h)
// A fusion is kept only if the fused node's operator factory accepts it
// (probe).
#pragma once
#include <functional>
#include <string>

#include "runtime/graph/plan.h"

namespace sfumato::graph {

struct PassContext {
    const DeviceInfo& dev;
    const CompileOptions& opt;
    // Replaces the operator-library probe (tests of the pattern matching use it); null = probe.
    std::function<bool(const Graph&, const Node&)> accept = nullptr;
    bool accepts(const Graph& g, const Node& n) const;
};

using PassFn = std::function<void(Graph&, const PassContext&, PassReport&)>;

void pass_fold(Graph& g, const PassContext& c, PassReport& r);
void pass_dce(Graph& g, const PassContext& c, PassReport& r);
void pass_fuse_layernorm(Graph& g, const PassContext& c, PassReport& r);
void pass_fuse_attention(Graph& g, const PassContext& c, PassReport& r);
void pass_precision(Graph& g, const PassContext& c, PassReport& r);
void pass_fuse_conv(Graph& g, const PassContext& c, PassReport& r);
void pass_depthwise(Graph& g, const PassContext& c, PassReport& r);
void pass_fuse_elementwise(Graph& g, const PassContext& c, PassReport& r);

// Helpers shared by the passes.
// Builds the NodeDesc an operator factory sees for node n (device dtypes, ND,
// constants).
ops::NodeDesc node_desc(const Graph& g, const Node& n);
// Whether the operator library accepts node n as it stands (the fusion probe).
bool probe(const Graph& g, const Node& n, const DeviceInfo& dev);
// The single node reading value v, or -1 (also -1 when v is a graph output).
int sole_consumer(const Graph& g, const std::vector<std::vector<int>>& cons, int v);
// Replaces every read of value `from` with `to` (graph outputs too).
void replace_uses(Graph& g, int from, int to);
// A new constant value.
int add_constant(Graph& g, const std::string& name, ref::HostTensor t);

}  // namespace sfumato::graph
