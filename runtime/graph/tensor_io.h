// Tensor files for model inputs and expected outputs: NumPy .npy
// (little-endian, C order; float16/ 32/64, int8/16/32/64, uint8/16, bool) and
// ONNX TensorProto .pb (as the ONNX backend test data stores them). Malformed
// files throw InputError naming the file.
#pragma once
#include <string>

#include "runtime/ref/host_tensor.h"

namespace sfumato::graph {

// By extension: .npy or .pb. `name` (may be null) receives the TensorProto's
// name (empty for npy).
ref::HostTensor read_tensor_file(const std::string& path, std::string* name = nullptr);
ref::HostTensor read_npy(const std::string& path);
ref::HostTensor read_pb(const std::string& path, std::string* name = nullptr);
// File contents (the caller writes them, atomically).
std::string npy_bytes(const ref::HostTensor& t);
std::string pb_bytes(const ref::HostTensor& t, const std::string& name);
// A tensor name made safe as a file name (path separators and odd characters
// become '_').
std::string safe_file_name(const std::string& name);

}  // namespace sfumato::graph
