// The `layout` pass: which tensors stay in NC1HWC0 (5HD) from one operator to the next, as the
// vendor's graph engine keeps them. A Conv of one group (or of groups of whole C0 blocks: a
// depthwise Conv after the depthwise pass) reads and writes NC1HWC0 (its cube
// takes img2col(X) x W^T and drains the NZ accumulator, which is NC1HWC0); pooling (global
// pooling too), inference BatchNormalization, Concat along the channels (of whole C0 blocks) and
// the elementwise ops that map zeros to zeros (ReLU, Add, Mul, ... and chains of them, on
// operands of the output's shape) follow their input. A Conv writes NC1HWC0 only when a reader
// takes it; a Conv whose NC1HWC0 output would cost more conversions than it saves stays ND (each
// Conv in turn, kept ND when that lowers the count). A node in NC1HWC0 whose reader needs ND
// (Reshape, Flatten, Gemm, Softmax, a graph output) gets one TransData NC1HWC0 -> ND, or a view
// when the two layouts hold the same bytes (a global pooling's [N, C, 1, 1] of whole C0 blocks),
// and an ND tensor a Conv in NC1HWC0 reads (a graph input) one TransData ND -> NC1HWC0:
// conversions only at the boundaries, each tensor converted at most once. Lowering (lower.cpp)
// applies the choice and reports it; every candidate is probed with its operator's factory first.
#pragma once
#include <vector>

#include "runtime/graph/ir.h"
#include "sim/device_if.h"

namespace sfumato::graph {

struct LayoutChoice {
    // Per node: its data inputs arrive in NC1HWC0 / its outputs are written in NC1HWC0.
    std::vector<char> x_c0, y_c0;
    int convs = 0;     // Conv nodes (without the pass each converts its X)
    int internal = 0;  // Convs still converting their own X
    int boundary = 0;  // TransData steps at the boundaries
};
// training: a training step's forward (only ops whose backward runs in NC1HWC0 keep it).
LayoutChoice choose_layout(const Graph& g, const DeviceInfo& dev, bool training = false);
// The inputs of node n that take its layout (a Conv's or pool's X; an elementwise op's tensor
// operands of the output's shape).
std::vector<size_t> layout_data_inputs(const Graph& g, const Node& n);
// Whether value v in NC1HWC0 holds the same bytes as in ND: no pixels beyond one (the output of
// a global pooling) and whole C0 blocks of channels, so [N, C1, 1, C0] is [N, C]. Its way back
// to ND is then a view, not a TransData kernel.
bool nd_view_of_c0(const Graph& g, int v);

}  // namespace sfumato::graph
