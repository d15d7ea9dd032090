// Ascend-C-like tensors: GlobalTensor (a typed view of device memory) and LocalTensor (a typed
// view of a core-local buffer, tied to the kernel context that issues instructions on it).
#pragma once
#include <cstdint>

#include "isa/dtype.h"
#include "isa/instr.h"
#include "runtime/kernel/kernel_context.h"

namespace sfumato::kernel {

using isa::bfloat16;
using isa::half;

// Logical positions of local tensors, mapped to physical buffers by the core architecture
// (C1/C2: a bias vector staged in L1 and moved to the bias table).
enum class TPosition : uint8_t { GM, VECIN, VECOUT, VECCALC, A1, B1, A2, B2, CO1, CO2, C1, C2 };

constexpr isa::Pos physical(TPosition p) {
    switch (p) {
        case TPosition::VECIN: case TPosition::VECOUT: case TPosition::VECCALC: case TPosition::CO2: return isa::Pos::UB;
        case TPosition::A1: case TPosition::B1: case TPosition::C1: return isa::Pos::L1;
        case TPosition::C2: return isa::Pos::BT;
        case TPosition::A2: return isa::Pos::L0A;
        case TPosition::B2: return isa::Pos::L0B;
        case TPosition::CO1: return isa::Pos::L0C;
        default: return isa::Pos::GM;
    }
}

template <class T>
class GlobalTensor {
public:
    void SetGlobalBuffer(uint64_t addr, uint64_t elems) { m_addr = addr; m_size = elems; }
    GlobalTensor operator[](uint64_t offset) const {
        GlobalTensor g;
        g.m_addr = m_addr + offset * sizeof(T);
        g.m_size = m_size > offset ? m_size - offset : 0;
        return g;
    }
    uint64_t address() const { return m_addr; }
    uint64_t GetSize() const { return m_size; }

private:
    uint64_t m_addr = 0, m_size = 0;
};

template <class T>
class LocalTensor {
public:
    LocalTensor() = default;
    LocalTensor(KernelContext* ctx, isa::Pos pos, uint32_t addr, uint32_t elems, int buf)
        : m_ctx(ctx), m_pos(pos), m_addr(addr), m_size(elems), m_buf(buf) {}
    LocalTensor operator[](uint32_t offset) const {
        return LocalTensor(m_ctx, m_pos, m_addr + offset * static_cast<uint32_t>(sizeof(T)), m_size - offset, m_buf);
    }
    KernelContext& ctx() const { return *m_ctx; }
    bool valid() const { return m_ctx != nullptr; }
    isa::Pos pos() const { return m_pos; }
    uint32_t address() const { return m_addr; }
    uint32_t GetSize() const { return m_size; }
    int buffer_index() const { return m_buf; }
    template <class U>
    LocalTensor<U> ReinterpretCast() const {
        return LocalTensor<U>(m_ctx, m_pos, m_addr, m_size * sizeof(T) / sizeof(U), m_buf);
    }

private:
    KernelContext* m_ctx = nullptr;
    isa::Pos m_pos = isa::Pos::UB;
    uint32_t m_addr = 0, m_size = 0;
    int m_buf = -1;
};

}  // namespace sfumato::kernel
