// Internal to the aten mapping (traces/import_map*.cpp): reading an operator's arguments as the
// profiler recorded them, building graph-node JSON, and the mappings of training-only operators
// (backward ops, optimizer steps) that live in import_map_train.cpp. A mapping that cannot be
// done throws the reason as a std::string (no()); map_aten turns it into Mapping::why.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "traces/import.h"

namespace sfumato::import::detail {

using nlohmann::json;

[[noreturn]] void no(const std::string& why);
// A tensor of a shape and ONNX element type as a node input (throws when no device form).
json tensor(const std::vector<int64_t>& shape, int elem);
const OpInput& arg(const ProfOp& op, size_t i);
int elem_at(const ProfOp& op, size_t i);
// Input i as a tensor with its shape (a 0-d tensor is a scalar: shape []).
json tin(const ProfOp& op, size_t i);
bool has_tensor(const ProfOp& op, size_t i);
std::vector<int64_t> shape_at(const ProfOp& op, size_t i);
std::vector<int64_t> ints_of(const std::string& s0);
// A scalar or list argument from Concrete Inputs; dflt when absent (n: a scalar repeated n times).
std::vector<int64_t> ints_at(const ProfOp& op, size_t i, std::vector<int64_t> dflt, size_t n = 0);
int64_t int_at(const ProfOp& op, size_t i, int64_t dflt);
bool bool_at(const ProfOp& op, size_t i, bool dflt);
// Whether an operator's scalar arguments were recorded (Kineto's Concrete Inputs, PyTorch 2.1+).
bool has_concrete(const ProfOp& op);
json node(const std::string& type, const std::string& name, json attrs, json inputs);
json ints_attr(const std::vector<int64_t>& v);
json int_attr(int64_t v);
int64_t norm_axis(int64_t axis, size_t rank);
int64_t numel_of(const std::vector<int64_t>& s);
// Throws unless the tensors broadcast together (numpy rules): shapes that do not are a record
// that does not fit the schema (e.g. list arguments flattened into the inputs).
void need_broadcast(const std::vector<json>& ins);

// Training operators (import_map_train.cpp).
Mapping conv_backward_at(const ProfOp& op, size_t gy_i, size_t x_i, size_t w_i, int stride_i, int pad_i, int dil_i,
                         int transposed_i, int group_i, int mask_i);
Mapping conv_backward(const ProfOp& op);
Mapping ew_backward(const ProfOp& op);
Mapping generic_backward(const ProfOp& op);
Mapping sdpa_backward(const ProfOp& op);
Mapping foreach(const ProfOp& op, const std::string& type);
Mapping fused_adam(const ProfOp& op);

}  // namespace sfumato::import::detail
