// Host-side tensors for references and the graph executor's constants: an ONNX element type, a
// shape and the values as doubles (exact for every fp16/bf16/fp32 value and every integer below
// 2^53, which covers ONNX indices and shapes). Row-major, no strides: a reference computes on
// plain arrays and is obviously correct rather than fast.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "isa/dtype.h"

namespace sfumato::ref {

// ONNX TensorProto.DataType codes (onnx.proto), so importers and writers map 1:1.
enum class ElemType : int32_t {
    Undefined = 0,
    Float = 1,
    Uint8 = 2,
    Int8 = 3,
    Uint16 = 4,
    Int16 = 5,
    Int32 = 6,
    Int64 = 7,
    String = 8,
    Bool = 9,
    Float16 = 10,
    Double = 11,
    Uint32 = 12,
    Uint64 = 13,
    Bfloat16 = 16,
};
const char* elem_type_name(ElemType t);
bool is_float(ElemType t);
bool is_integer(ElemType t);  // Bool counts as integer

// The device type a tensor of this element type is stored in (int64 indices as int32, bool as
// uint8, double as fp32); false when the chip has no representation (string, uint32/64).
bool device_dtype(ElemType t, isa::DType& out);
// The ONNX element type a device dtype stands for (the narrowest exact one).
ElemType elem_type_of(isa::DType t);

struct HostTensor {
    ElemType type = ElemType::Float;
    std::vector<int64_t> shape;
    std::vector<double> data;  // numel() values, row-major

    HostTensor() = default;
    HostTensor(ElemType t, std::vector<int64_t> s) : type(t), shape(std::move(s)), data(numel(), 0.0) {}
    uint64_t numel() const {
        uint64_t n = 1;
        for (int64_t d : shape) n *= static_cast<uint64_t>(d);
        return n;
    }
    size_t rank() const { return shape.size(); }
};

// Row-major strides (in elements) of a shape.
std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape);
std::string shape_str(const std::vector<int64_t>& shape);

// Rounds every value to what the element type can hold (fp16/bf16/fp32 round to nearest even,
// integers truncate toward zero and wrap as the type does, bool becomes 0/1).
void round_to_type(HostTensor& t);
// Device bytes of a tensor in device dtype d (values rounded/narrowed as device_dtype says), and
// back. Throws InputError when an int64 value does not fit the int32 it is stored as.
std::vector<uint8_t> to_device_bytes(const HostTensor& t, isa::DType d);
HostTensor from_device_bytes(const uint8_t* bytes, isa::DType d, ElemType as, const std::vector<int64_t>& shape);

}  // namespace sfumato::ref
