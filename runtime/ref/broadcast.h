// Shape helpers shared by the host references and the operators' host tiling: numpy
// (multidirectional) broadcasting, broadcast strides, axis normalisation, and reading a small
// integer tensor (shapes, axes, pads) as int64 values. Errors are InputErrors that name the node
// and the culprit (input, attribute or axis).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/ref/host_tensor.h"

namespace sfumato::ref {

// The numpy broadcast of several shapes (right-aligned; a dimension of 1 stretches). Throws
// InputError "node 'N': cannot broadcast input i [..] with [..]" when two dims differ and
// neither is 1.
std::vector<int64_t> broadcast_shapes(const std::string& node, const std::vector<std::vector<int64_t>>& shapes);
// True when `shape` broadcasts to `out` (unidirectionally).
bool broadcasts_to(const std::vector<int64_t>& shape, const std::vector<int64_t>& out);
// Element strides of a contiguous tensor of `shape` read as a tensor of `out` (rank of out;
// 0 along broadcast dimensions). `shape` must broadcast to `out`.
std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& shape, const std::vector<int64_t>& out);
// The tensor's values repeated to shape `out` (type kept).
HostTensor broadcast_to(const HostTensor& t, const std::vector<int64_t>& out);

// An axis in [-rank, rank) made non-negative; throws InputError naming node and what.
int64_t normalize_axis(const std::string& node, const std::string& what, int64_t axis, int64_t rank);
// Integer values of a tensor (shapes, axes, pads, repeats).
std::vector<int64_t> int_values(const HostTensor& t);
uint64_t numel_of(const std::vector<int64_t>& shape);

}  // namespace sfumato::ref
