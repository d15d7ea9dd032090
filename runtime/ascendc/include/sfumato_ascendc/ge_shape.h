// ge::Shape, the dimension list the advanced APIs' host tiling functions take (GetSoftMaxMinTmpSize,
// SoftMaxTilingFunc, ...): the constructor from a vector of dims and its accessors.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ge {
// The data types the host functions name (the values of the public enumeration).
enum DataType : int32_t {
    DT_FLOAT = 0,
    DT_FLOAT16 = 1,
    DT_INT8 = 2,
    DT_INT32 = 3,
    DT_UINT8 = 4,
    DT_INT16 = 6,
    DT_UINT16 = 7,
    DT_UINT32 = 8,
    DT_INT64 = 9,
    DT_UINT64 = 10,
    DT_DOUBLE = 11,
    DT_BOOL = 12,
    DT_BF16 = 27,
    DT_INT4 = 29,
};
class Shape {
public:
    Shape() = default;
    explicit Shape(const std::vector<int64_t>& dims) : m_dims(dims) {}
    size_t GetDimNum() const { return m_dims.size(); }
    int64_t GetDim(size_t idx) const { return idx < m_dims.size() ? m_dims[idx] : 0; }
    std::vector<int64_t> GetDims() const { return m_dims; }
    int64_t GetShapeSize() const {
        if (m_dims.empty()) return 0;
        int64_t n = 1;
        for (int64_t d : m_dims) {
            if (d <= 0) return 0;
            if (__builtin_mul_overflow(n, d, &n)) return -1;
        }
        return n;
    }
    uint32_t SetDim(size_t idx, int64_t value) {
        if (idx >= m_dims.size()) return 1;
        m_dims[idx] = value;
        return 0;
    }

private:
    std::vector<int64_t> m_dims;
};
}  // namespace ge
