#include "runtime/ref/host_tensor.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "sim/error.h"

namespace sfumato::ref {

const char* elem_type_name(ElemType t) {
    switch (t) {
        case ElemType::Float: return "float";
        case ElemType::Uint8: return "uint8";
        case ElemType::Int8: return "int8";
        case ElemType::Uint16: return "uint16";
        case ElemType::Int16: return "int16";
        case ElemType::Int32: return "int32";
        case ElemType::Int64: return "int64";
        case ElemType::String: return "string";
        case ElemType::Bool: return "bool";
        case ElemType::Float16: return "float16";
        case ElemType::Double: return "double";
        case ElemType::Uint32: return "uint32";
        case ElemType::Uint64: return "uint64";
        case ElemType::Bfloat16: return "bfloat16";
        default: return "undefined";
    }
}

bool is_float(ElemType t) {
    return t == ElemType::Float || t == ElemType::Float16 || t == ElemType::Double || t == ElemType::Bfloat16;
}

bool is_integer(ElemType t) {
    switch (t) {
        case ElemType::Uint8: case ElemType::Int8: case ElemType::Uint16: case ElemType::Int16:
        case ElemType::Int32: case ElemType::Int64: case ElemType::Bool: case ElemType::Uint32:
        case ElemType::Uint64: return true;
        default: return false;
    }
}

bool device_dtype(ElemType t, isa::DType& out) {
    switch (t) {
        case ElemType::Float: case ElemType::Double: out = isa::DType::FP32; return true;
        case ElemType::Float16: out = isa::DType::FP16; return true;
        case ElemType::Bfloat16: out = isa::DType::BF16; return true;
        case ElemType::Int8: out = isa::DType::INT8; return true;
        case ElemType::Uint8: case ElemType::Bool: out = isa::DType::UINT8; return true;
        case ElemType::Int16: out = isa::DType::INT16; return true;
        case ElemType::Int32: case ElemType::Int64: out = isa::DType::INT32; return true;
        default: return false;
    }
}

ElemType elem_type_of(isa::DType t) {
    switch (t) {
        case isa::DType::FP16: return ElemType::Float16;
        case isa::DType::BF16: return ElemType::Bfloat16;
        case isa::DType::FP32: return ElemType::Float;
        case isa::DType::INT8: return ElemType::Int8;
        case isa::DType::UINT8: return ElemType::Uint8;
        case isa::DType::INT16: return ElemType::Int16;
        case isa::DType::INT32: return ElemType::Int32;
        default: return ElemType::Undefined;
    }
}

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape) {
    std::vector<int64_t> s(shape.size(), 1);
    for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
    return s;
}

std::string shape_str(const std::vector<int64_t>& shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
    return s + "]";
}

namespace {
template <class I>
double wrap_int(double v) {
    if (std::isnan(v)) return 0;
    const double t = std::trunc(v);
    // Wrap as a two's-complement integer of I (values beyond int64 saturate first).
    const double lim = 9.2e18;
    const int64_t w = static_cast<int64_t>(std::max(-lim, std::min(lim, t)));
    return static_cast<double>(static_cast<I>(w));
}

double round_one(ElemType t, double v) {
    switch (t) {
        case ElemType::Float: return static_cast<double>(static_cast<float>(v));
        case ElemType::Float16: return isa::f16_to_f32(isa::f32_to_f16(static_cast<float>(v)));
        case ElemType::Bfloat16: return isa::bf16_to_f32(isa::f32_to_bf16(static_cast<float>(v)));
        case ElemType::Double: return v;
        case ElemType::Bool: return v != 0.0 ? 1.0 : 0.0;
        case ElemType::Int8: return wrap_int<int8_t>(v);
        case ElemType::Uint8: return wrap_int<uint8_t>(v);
        case ElemType::Int16: return wrap_int<int16_t>(v);
        case ElemType::Uint16: return wrap_int<uint16_t>(v);
        case ElemType::Int32: return wrap_int<int32_t>(v);
        case ElemType::Uint32: return wrap_int<uint32_t>(v);
        case ElemType::Int64: case ElemType::Uint64: return std::isnan(v) ? 0 : std::trunc(v);
        default: return v;
    }
}
}  // namespace

void round_to_type(HostTensor& t) {
    for (double& v : t.data) v = round_one(t.type, v);
}

std::vector<uint8_t> to_device_bytes(const HostTensor& t, isa::DType d) {
    const uint32_t es = isa::dtype_size(d);
    std::vector<uint8_t> out(t.numel() * es);
    for (uint64_t i = 0; i < t.data.size(); ++i) {
        const double v = t.data[i];
        uint8_t* p = out.data() + i * es;
        switch (d) {
            case isa::DType::INT32: {
                if (t.type == ElemType::Int64 && (v > std::numeric_limits<int32_t>::max() || v < std::numeric_limits<int32_t>::min()))
                    throw InputError("int64 value " + std::to_string(static_cast<int64_t>(v)) +
                                     " does not fit the int32 the device stores int64 tensors in");
                const int32_t x = static_cast<int32_t>(wrap_int<int32_t>(v));
                std::memcpy(p, &x, 4);
                break;
            }
            case isa::DType::INT16: { const int16_t x = static_cast<int16_t>(wrap_int<int16_t>(v)); std::memcpy(p, &x, 2); break; }
            case isa::DType::INT8: { const int8_t x = static_cast<int8_t>(wrap_int<int8_t>(v)); std::memcpy(p, &x, 1); break; }
            case isa::DType::UINT8: {
                const uint8_t x = t.type == ElemType::Bool ? (v != 0.0) : static_cast<uint8_t>(wrap_int<uint8_t>(v));
                std::memcpy(p, &x, 1);
                break;
            }
            default: isa::store_from_f32(d, p, static_cast<float>(v)); break;
        }
    }
    return out;
}

HostTensor from_device_bytes(const uint8_t* bytes, isa::DType d, ElemType as, const std::vector<int64_t>& shape) {
    HostTensor t(as, shape);
    const uint32_t es = isa::dtype_size(d);
    for (uint64_t i = 0; i < t.data.size(); ++i) {
        const uint8_t* p = bytes + i * es;
        switch (d) {
            case isa::DType::INT32: { int32_t x; std::memcpy(&x, p, 4); t.data[i] = x; break; }
            case isa::DType::INT16: { int16_t x; std::memcpy(&x, p, 2); t.data[i] = x; break; }
            case isa::DType::INT8: { int8_t x; std::memcpy(&x, p, 1); t.data[i] = x; break; }
            case isa::DType::UINT8: t.data[i] = as == ElemType::Bool ? (p[0] != 0) : p[0]; break;
            default: t.data[i] = isa::load_as_f32(d, p); break;
        }
    }
    return t;
}

}  // namespace sfumato::ref
