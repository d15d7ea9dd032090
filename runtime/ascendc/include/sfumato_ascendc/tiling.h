// Tiling data the operator-project way: a host-side struct declared with BEGIN_TILING_DATA_DEF /
// TILING_DATA_FIELD_DEF / END_TILING_DATA_DEF (fields with set_/get_ accessors, SaveToBuffer,
// GetDataSize), registered for an op with REGISTER_TILING_DATA_CLASS, and read by the kernel
// from its GM tiling pointer with GET_TILING_DATA (the registered struct) or
// GET_TILING_DATA_WITH_STRUCT. The struct is plain data, so the bytes the host saves are the
// bytes the kernel reads (by scalar loads of GM).
#pragma once
#include <cstddef>
#include <cstring>

#include "sfumato_ascendc/tensor.h"

#define BEGIN_TILING_DATA_DEF(name)                                                            \
    class name {                                                                               \
    public:                                                                                    \
        void SaveToBuffer(void* buffer, size_t capacity) const {                               \
            std::memcpy(buffer, this, capacity < sizeof(*this) ? capacity : sizeof(*this));    \
        }                                                                                      \
        size_t GetDataSize() const { return sizeof(*this); }
#define TILING_DATA_FIELD_DEF(type, field)         \
    type field{};                                  \
    void set_##field(type v) { field = v; }        \
    type get_##field() const { return field; }
#define TILING_DATA_FIELD_DEF_ARR(type, count, field)                                    \
    type field[count]{};                                                                 \
    void set_##field(const type* v) { std::memcpy(field, v, sizeof(field)); }            \
    const type* get_##field() const { return field; }
#define TILING_DATA_FIELD_DEF_STRUCT(struct_type, field) struct_type field{};
#define END_TILING_DATA_DEF }
// The registered struct is what GET_TILING_DATA reads (declare it in namespace optiling).
#define REGISTER_TILING_DATA_CLASS(op_type, class_name) \
    class_name sfumato_registered_tiling(class_name* = nullptr);

namespace sfumato::ascendc {
void gm_scalar_read_ptr(const void* gm, void* dst, uint32_t bytes);
template <class T>
T read_tiling(const void* gm) {
    enter("GET_TILING_DATA");
    T t;
    gm_scalar_read_ptr(gm, &t, static_cast<uint32_t>(sizeof(T)));
    return t;
}
}  // namespace sfumato::ascendc

#define GET_TILING_DATA_WITH_STRUCT(type, var, tiling) \
    type var = ::sfumato::ascendc::read_tiling<type>(tiling)
#define GET_TILING_DATA(var, tiling)                                                                  \
    auto var = ::sfumato::ascendc::read_tiling<decltype(::optiling::sfumato_registered_tiling())>(tiling)
