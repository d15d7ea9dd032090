// The graph-node face of the matrix operators MatMul, Gemm and MatMulInteger
// (ONNX semantics; registered in matmul_node.cpp) on the cube matmul kernel
// (cube_matmul.h), with the vector epilogue (cube_epilogue.h) where the FixPipe
// does not serve. Conv builds on the same pieces.
//
// Operands may be strided views: a matrix whose last dimension is contiguous
// loads as is, one whose second-to-last dimension is contiguous as a transposed
// operand (no copy); batch dimensions broadcast through stride-0 batch strides,
// and a batch that only A carries (B broadcast, A's rows evenly spaced) folds
// into M (bigger tiles). Gemm's C enters as the cube's bias mad when it is a
// scalar, a row (N) or a column (M x 1), else (M x N) through the vector
// epilogue; alpha is the FixPipe's scale. Fused activations: ReLU in the
// FixPipe, the others in the vector epilogue.
#pragma once
#include <memory>

#include "runtime/ops/node_op.h"

namespace sfumato::ops {

// Plans a MatMul, Gemm or MatMulInteger node (throws UnsupportedError for what
// the cube cannot run: other element types, zero-size dimensions,
// non-contiguous Gemm C, nonzero zero points).
std::unique_ptr<INodeOp> make_matmul_node(const NodeDesc& node, const DeviceInfo& dev);

}  // namespace sfumato::ops
