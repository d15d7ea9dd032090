// Ascend-C-like tensors: GlobalTensor (a typed view of device memory) and LocalTensor (a typed
// view of a core-local buffer, tied to the kernel context that issues instructions on it).
// GetValue/SetValue on a GlobalTensor are the scalar unit's own loads and stores of global memory
// (LD_GM/ST_GM through the core's data cache); they need the tensor bound to a kernel context
// (SetGlobalBuffer(ctx, ...)). In timing mode GM holds no data and GetValue returns 0.
#pragma once
#include <cstdint>
#include <cstring>

#include "isa/dtype.h"
#include "isa/instr.h"
#include "runtime/kernel/kernel_context.h"
#include "sim/error.h"

namespace sfumato::kernel {

using isa::bfloat16;
using isa::half;

// Logical positions of local tensors, mapped to physical buffers by the core architecture
// (C1/C2: a bias vector staged in L1 and moved to the bias table; C2PIPE2GM: the FixPipe buffer).
enum class TPosition : uint8_t { GM, VECIN, VECOUT, VECCALC, A1, B1, A2, B2, CO1, CO2, C1, C2, C2PIPE2GM };

constexpr isa::Pos physical(TPosition p) {
    switch (p) {
        case TPosition::VECIN: case TPosition::VECOUT: case TPosition::VECCALC: case TPosition::CO2: return isa::Pos::UB;
        case TPosition::A1: case TPosition::B1: case TPosition::C1: return isa::Pos::L1;
        case TPosition::C2: return isa::Pos::BT;
        case TPosition::C2PIPE2GM: return isa::Pos::FB;
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
    // The same, bound to the kernel context whose scalar unit GetValue/SetValue use.
    void SetGlobalBuffer(KernelContext& ctx, uint64_t addr, uint64_t elems) {
        m_ctx = &ctx;
        SetGlobalBuffer(addr, elems);
    }
    GlobalTensor operator[](uint64_t offset) const {
        GlobalTensor g;
        g.m_ctx = m_ctx;
        g.m_addr = m_addr + offset * sizeof(T);
        g.m_size = m_size > offset ? m_size - offset : 0;
        return g;
    }
    uint64_t address() const { return m_addr; }
    uint64_t GetSize() const { return m_size; }
    KernelContext* context() const { return m_ctx; }

    // Scalar load of element `offset` (LD_GM).
    T GetValue(uint64_t offset) const {
        isa::Instr in = isa::make_instr(isa::Opcode::LD_GM);
        in.dtype = isa::DTypeOf<T>::v;
        in.src0 = {m_addr + offset * sizeof(T), isa::Pos::GM};
        const uint64_t bits = bound("GetValue").sink().load(in);
        T v;
        std::memcpy(static_cast<void*>(&v), &bits, sizeof(T));  // little-endian host: the low bytes
        return v;
    }
    // Scalar store of element `offset` (ST_GM).
    void SetValue(uint64_t offset, T value) const {
        isa::Instr in = isa::make_instr(isa::Opcode::ST_GM);
        in.dtype = isa::DTypeOf<T>::v;
        in.dst = {m_addr + offset * sizeof(T), isa::Pos::GM};
        uint8_t b[sizeof(T)];
        std::memcpy(b, &value, sizeof(T));
        in.scalar = isa::load_f64(in.dtype, b);  // every ISA type is exact in a double
        bound("SetValue").issue(in);
    }

private:
    KernelContext& bound(const char* call) const {
        if (!m_ctx)
            throw InputError(std::string("GlobalTensor::") + call +
                             ": the tensor is not bound to a kernel context (use SetGlobalBuffer(ctx, addr, elems))");
        return *m_ctx;
    }
    KernelContext* m_ctx = nullptr;
    uint64_t m_addr = 0, m_size = 0;
};

// Data cache clean and invalidate (Ascend C DataCacheCleanAndInvalid): SINGLE_CACHE_LINE writes
// back and drops the line holding the tensor's first element, ENTIRE_DATA_CACHE every line.
// Only global memory is cached by the scalar unit here, so the destination is CACHELINE_OUT (or
// its alias CACHELINE_ALL).
enum class CacheLine : uint8_t { SINGLE_CACHE_LINE, ENTIRE_DATA_CACHE };
enum class DcciDst : uint8_t { CACHELINE_ALL, CACHELINE_UB, CACHELINE_OUT, CACHELINE_ATOMIC };
template <class T, CacheLine L, DcciDst D = DcciDst::CACHELINE_OUT>
void DataCacheCleanAndInvalid(const GlobalTensor<T>& dst) {
    static_assert(D == DcciDst::CACHELINE_OUT || D == DcciDst::CACHELINE_ALL,
                  "the scalar data cache is modelled for global memory only");
    KernelContext* ctx = dst.context();
    if (!ctx)
        throw InputError("DataCacheCleanAndInvalid: the tensor is not bound to a kernel context (use SetGlobalBuffer(ctx, addr, elems))");
    isa::Instr in = isa::make_instr(isa::Opcode::DCCI);
    in.dst = {dst.address(), isa::Pos::GM};
    in.sc.all = L == CacheLine::ENTIRE_DATA_CACHE ? 1 : 0;
    ctx->issue(in);
}

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
