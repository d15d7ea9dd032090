// ListTensorDesc and TensorDesc of the public Ascend C API: a kernel argument pointing at a list
// of tensors laid out in GM by the host: word 0 the byte offset of the pointer array, then one
// descriptor per tensor (a word holding its dim in the low and its index in the high 32 bits, then
// dim shape words), then the data pointers, 8 bytes each. The kernel reads the words it needs
// through the scalar unit (GM scalar loads at the scalar unit's time; in timing mode they see the
// host's small copies, as tiling data). Simplified: the optional length and pointer-count
// arguments are checked against what the layout says, nothing more.
#pragma once
#include <cstdint>

#include "sfumato_ascendc/tensor.h"

namespace AscendC {

template <class T>
class TensorDesc {
public:
    TensorDesc() = default;
    void SetShapeAddr(uint64_t* shapePtr) { m_shape = shapePtr; }
    uint64_t GetDim() const { return m_dim; }
    uint64_t GetIndex() const { return m_index; }
    uint64_t GetShape(uint32_t offset) const {
        if (!m_shape || offset >= m_dim)
            sfumato::ascendc::fail("TensorDesc::GetShape(" + std::to_string(offset) + ") of a tensor of " +
                                   std::to_string(m_dim) + " dimensions" + (m_shape ? "" : " (no SetShapeAddr)"));
        return m_shape[offset];
    }
    __gm__ T* GetDataPtr() const { return m_data; }
    GlobalTensor<T> GetDataObj() const {
        GlobalTensor<T> g;
        g.SetGlobalBuffer(m_data);
        return g;
    }

    // sfumato: filled by ListTensorDesc::GetDesc.
    uint64_t* shape_storage() const { return m_shape; }
    void fill(uint64_t dim, uint64_t index, __gm__ T* data) { m_dim = dim, m_index = index, m_data = data; }

private:
    uint64_t* m_shape = nullptr;
    uint64_t m_dim = 0, m_index = 0;
    __gm__ T* m_data = nullptr;
};

class ListTensorDesc {
public:
    ListTensorDesc() = default;
    explicit ListTensorDesc(__gm__ void* data, uint32_t length = 0xffffffff, uint32_t shapeSize = 0xffffffff) {
        Init(data, length, shapeSize);
    }
    void Init(__gm__ void* data, uint32_t length = 0xffffffff, uint32_t shapeSize = 0xffffffff) {
        sfumato::ascendc::enter("ListTensorDesc::Init");
        m_words.SetGlobalBuffer(reinterpret_cast<__gm__ uint64_t*>(data));
        const uint64_t ptr_offset = m_words.GetValue(0);
        if (ptr_offset % 8 != 0 || ptr_offset < 8)
            sfumato::ascendc::fail("ListTensorDesc: pointer offset " + std::to_string(ptr_offset) +
                                   " (a multiple of 8, past word 0)");
        m_ptr_word = ptr_offset / 8;
        m_count = 0;
        for (uint64_t w = 1; w < m_ptr_word; ++m_count) w += 1 + (m_words.GetValue(w) & 0xffffffffu);
        if (length != 0xffffffffu && (m_ptr_word + m_count) * 8 > length)
            sfumato::ascendc::fail("ListTensorDesc: the layout needs " + std::to_string((m_ptr_word + m_count) * 8) +
                                   " bytes, length says " + std::to_string(length));
        if (shapeSize != 0xffffffffu && shapeSize != m_count)
            sfumato::ascendc::fail("ListTensorDesc: " + std::to_string(m_count) + " tensors, shapeSize says " +
                                   std::to_string(shapeSize));
    }
    template <class T>
    void GetDesc(TensorDesc<T>& desc, uint32_t index) {
        sfumato::ascendc::enter("ListTensorDesc::GetDesc");
        check(index);
        uint64_t w = 1;
        for (uint32_t i = 0; i < index; ++i) w += 1 + (m_words.GetValue(w) & 0xffffffffu);
        const uint64_t head = m_words.GetValue(w);
        const uint64_t dim = head & 0xffffffffu;
        if (uint64_t* shape = desc.shape_storage())
            for (uint64_t d = 0; d < dim; ++d) shape[d] = m_words.GetValue(w + 1 + d);
        desc.fill(dim, head >> 32, GetDataPtr<T>(index));
    }
    template <class T>
    __gm__ T* GetDataPtr(uint32_t index) {
        sfumato::ascendc::enter("ListTensorDesc::GetDataPtr");
        check(index);
        return reinterpret_cast<__gm__ T*>(static_cast<uintptr_t>(m_words.GetValue(m_ptr_word + index)));
    }
    uint32_t GetSize() const { return m_count; }

private:
    void check(uint32_t index) const {
        if (index >= m_count)
            sfumato::ascendc::fail("ListTensorDesc: index " + std::to_string(index) + " of " +
                                   std::to_string(m_count) + " tensors");
    }
    GlobalTensor<uint64_t> m_words;
    uint64_t m_ptr_word = 0;
    uint32_t m_count = 0;
};

}  // namespace AscendC
