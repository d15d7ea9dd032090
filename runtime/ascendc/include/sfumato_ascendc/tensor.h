// GlobalTensor and LocalTensor of the public Ascend C API over the kernel API's tensors.
// A GlobalTensor holds the pointer the kernel computed (a GmAlloc host pointer, or an
// aclrtMalloc device pointer) and the device address and allocation bounds it maps to, found
// once in SetGlobalBuffer; every copy checks its GM range against those bounds, so an access
// outside the buffer stops the run naming the block and the call. A LocalTensor is a kernel-API
// LocalTensor (context, buffer, address, element count, queue buffer) plus its logical position.
// Scalar element access (GetValue/SetValue) reads and writes the simulated memories directly (on a
// LocalTensor once every pipe drained: the vendor compiler's automatic synchronisation); on
// GM it is also the scalar unit's load or store (LD_GM/ST_GM through its data cache), and the
// kernel continues at that point of simulated time. In timing mode, where no data exists, reads
// return 0 (GM: except GmAlloc memory and small host-to-device copies, which the layer keeps).
#pragma once
#include "sfumato_ascendc/unsupported.h"
#include <cstdint>

#include "runtime/kernel/tensor.h"
#include "sfumato_ascendc/adv_common.h"
#include "sfumato_ascendc/core_state.h"

namespace sfumato::ascendc {

struct GmSpan {
    uint64_t dev = 0;       // device address of the pointer
    uint64_t lo = 0, hi = 0;  // device bounds of the allocation it lies in
    uint64_t stray = 0;     // a host pointer in no buffer (hi == 0): named when the tensor is used
};
// Maps a kernel's GM pointer to device memory; throws InputError (naming the current call)
// when it lies in no GmAlloc/aclrtMalloc buffer.
GmSpan gm_translate(const void* p);
// The same, but a pointer in no buffer gives a span without bounds that remembers it: the chip
// only stores the pointer, so an uninitialised launch argument the kernel never reads is no error.
GmSpan gm_translate_lazy(const void* p);
// Throws InputError when [dev, dev + bytes) leaves [lo, hi).
void gm_check(const GmSpan& s, uint64_t dev, uint64_t bytes);
// Scalar access to GM / a local buffer of the running core (raw element bytes).
void gm_scalar_read(uint64_t dev, void* dst, uint32_t bytes);
void gm_scalar_write(uint64_t dev, const void* src, uint32_t bytes);
void local_scalar_read(isa::Pos pos, uint64_t addr, void* dst, uint32_t bytes);
void local_scalar_write(isa::Pos pos, uint64_t addr, const void* src, uint32_t bytes);

constexpr isa::Pos physical(AscendC::TPosition p) {
    using AscendC::TPosition;
    switch (p) {
        case TPosition::VECIN:
        case TPosition::VECOUT:
        case TPosition::VECCALC:
        case TPosition::CO2: return isa::Pos::UB;
        case TPosition::A1:
        case TPosition::B1:
        case TPosition::C1:
        case TPosition::TSCM: return isa::Pos::L1;
        case TPosition::A2: return isa::Pos::L0A;
        case TPosition::B2: return isa::Pos::L0B;
        case TPosition::CO1: return isa::Pos::L0C;
        case TPosition::C2: return isa::Pos::BT;
        case TPosition::C2PIPE2GM: return isa::Pos::FB;
        default: return isa::Pos::GM;
    }
}

}  // namespace sfumato::ascendc

namespace AscendC {

template <class T>
class GlobalTensor {
    // int4b_t: offsets and sizes count elements, two to a byte (an offset must be even).
    static constexpr uint64_t bytes_of(uint64_t n) { return kIsInt4<T> ? (n + 1) / 2 : n * sizeof(T); }
    static uint64_t even(uint64_t n) {
        if (kIsInt4<T> && n % 2 != 0)
            sfumato::ascendc::fail("GlobalTensor<int4b_t>: offset " + std::to_string(n) + " splits a byte");
        return n;
    }

public:
    using PrimType = T;
    GlobalTensor() = default;

    // A pointer in no GmAlloc/aclrtMalloc buffer (a launch argument the kernel does not use,
    // nullptr or left uninitialised by the host) leaves the tensor without a buffer: using it
    // stops the run naming the address.
    void SetGlobalBuffer(__gm__ T* buffer, uint64_t bufferSize) {
        sfumato::ascendc::enter("GlobalTensor::SetGlobalBuffer");
        m_ptr = buffer;
        m_span = null_page(buffer) ? sfumato::ascendc::GmSpan{} : sfumato::ascendc::gm_translate_lazy(buffer);
        m_size = bufferSize;
    }
    void SetGlobalBuffer(__gm__ T* buffer) {
        sfumato::ascendc::enter("GlobalTensor::SetGlobalBuffer");
        m_ptr = buffer;
        m_span = null_page(buffer) ? sfumato::ascendc::GmSpan{} : sfumato::ascendc::gm_translate_lazy(buffer);
        m_size = m_span.hi == 0 ? 0 : (m_span.hi - m_span.dev) / sizeof(T) * (kIsInt4<T> ? 2 : 1);
    }
    GlobalTensor operator[](uint64_t offset) const {
        GlobalTensor g = *this;
        g.m_ptr = m_ptr + bytes_of(even(offset)) / sizeof(T);
        g.m_span.dev = m_span.dev + bytes_of(offset);
        g.m_size = m_size > offset ? m_size - offset : 0;
        return g;
    }
    __gm__ T* GetPhyAddr() const { return m_ptr; }
    __gm__ T* GetPhyAddr(uint64_t offset) const { return m_ptr + bytes_of(even(offset)) / sizeof(T); }
    uint64_t GetSize() const { return m_size; }
    // Whether the tensor's GM accesses allocate in L2 (CACHE_MODE_DISABLE: not): accepted; sfumato's L2 treats
    // every access alike, so a disabled tensor's reads still hit what L2 holds (docs: runtime/ascendc/README.md).
    template <CacheRwMode rwMode = CacheRwMode::RW>
    void SetL2CacheHint(CacheMode mode) {
        (void)mode;
    }

    T GetValue(uint64_t offset) const {
        static_assert(!kIsInt4<T>, "GlobalTensor<int4b_t>::GetValue is not supported by sfumato's Ascend C layer");
        sfumato::ascendc::enter("GlobalTensor::GetValue");
        check(offset, 1);
        T v{};
        sfumato::ascendc::gm_scalar_read(m_span.dev + offset * sizeof(T), &v, sizeof(T));
        return v;
    }
    template <class U>
    void SetValue(uint64_t offset, U value) {
        static_assert(!kIsInt4<T>, "GlobalTensor<int4b_t>::SetValue is not supported by sfumato's Ascend C layer");
        sfumato::ascendc::enter("GlobalTensor::SetValue");
        check(offset, 1);
        const T v = static_cast<T>(value);
        sfumato::ascendc::gm_scalar_write(m_span.dev + offset * sizeof(T), &v, sizeof(T));
    }
    T operator()(uint64_t offset) const { return GetValue(offset); }

    // sfumato: the device view (address, bounds) and the kernel-API tensor of `elems` elements,
    // after checking that they lie in the allocation.
    const sfumato::ascendc::GmSpan& span() const { return m_span; }
    uint64_t device_address() const { return m_span.dev; }
    void check(uint64_t first, uint64_t count) const {
        sfumato::ascendc::gm_check(m_span, m_span.dev + bytes_of(first), bytes_of(count));
    }
    void check_bytes(uint64_t bytes) const { sfumato::ascendc::gm_check(m_span, m_span.dev, bytes); }
    sfumato::kernel::GlobalTensor<sfumato::ascendc::storage_t<T>> kernel_tensor() const {
        sfumato::kernel::GlobalTensor<sfumato::ascendc::storage_t<T>> g;
        g.SetGlobalBuffer(m_span.dev, kIsInt4<T> ? bytes_of(m_size) : m_size);
        return g;
    }

private:
    static bool null_page(const void* p) { return reinterpret_cast<uintptr_t>(p) < 4096; }
    __gm__ T* m_ptr = nullptr;
    sfumato::ascendc::GmSpan m_span;
    uint64_t m_size = 0;
};

// The element-wise operator form (`dst = a + b`, also -, *, /, |, &): the operator returns this pair of
// sources and the assignment to dst issues the vector call over dst's size (Add, Sub, Mul, Div, Or,
// And with calCount = dst.GetSize(), defined in vector.h).
enum class SymbolOp : uint8_t { Add, Sub, Mul, Div, Or, And };
template <class T>
class LocalTensor;
template <class T, SymbolOp Op>
struct SymbolOverride {
    const LocalTensor<T>& src0;
    const LocalTensor<T>& src1;
};

// The reference's record of where a LocalTensor lies (its public member `address_`, which SetAddr takes):
// logical position, byte address and length in its buffer; sfumato adds the kernel context, physical
// buffer and queue buffer of the tensor it describes.
struct TBuffAddr {
    uint32_t dataLen = 0;
    uint32_t bufferAddr = 0;
    TPosition logicPos = TPosition::VECCALC;
    sfumato::kernel::KernelContext* sfumatoCtx = nullptr;
    sfumato::isa::Pos sfumatoPos = sfumato::isa::Pos::UB;
    int sfumatoBuffer = -1;
};

template <class T>
class LocalTensor {
public:
    using PrimType = T;
    using KT = sfumato::kernel::LocalTensor<sfumato::ascendc::storage_t<T>>;
    LocalTensor() = default;
    LocalTensor(const KT& t, TPosition pos) : m_t(t), m_pos(pos) { sync_address(); }
    // A tensor at a fixed address of a position (static tensor programming).
    LocalTensor(TPosition pos, uint32_t addr, uint32_t tileSize)
        : m_t(sfumato::ascendc::enter("LocalTensor").ctx, sfumato::ascendc::physical(pos), addr, stored(tileSize), -1),
          m_pos(pos) {
        sync_address();
    }

    // An int4b_t tensor's offsets and sizes count elements, two to a byte (the kernel tensor
    // counts bytes): an odd offset would split a byte and stops the run.
    LocalTensor operator[](uint32_t offset) const { return LocalTensor(m_t[stored(offset)], m_pos); }
    uint32_t GetSize() const { return kIsInt4<T> ? m_t.GetSize() * 2u : m_t.GetSize(); }
    uint32_t GetLength() const { return m_t.GetSize() * static_cast<uint32_t>(sizeof(T)); }
    void SetSize(uint32_t size) {
        m_t = KT(m_t.valid() ? &m_t.ctx() : nullptr, m_t.pos(), m_t.address(), stored(size), m_t.buffer_index());
        sync_address();
    }
    TPosition GetPosition() const { return m_pos; }
    LocalTensor(const LocalTensor&) = default;
    LocalTensor& operator=(const LocalTensor&) = default;
    template <SymbolOp Op>
    void operator=(const SymbolOverride<T, Op>& e) const;  // vector.h
    SymbolOverride<T, SymbolOp::Add> operator+(const LocalTensor& b) const { return {*this, b}; }
    SymbolOverride<T, SymbolOp::Sub> operator-(const LocalTensor& b) const { return {*this, b}; }
    SymbolOverride<T, SymbolOp::Mul> operator*(const LocalTensor& b) const { return {*this, b}; }
    SymbolOverride<T, SymbolOp::Div> operator/(const LocalTensor& b) const { return {*this, b}; }
    SymbolOverride<T, SymbolOp::Or> operator|(const LocalTensor& b) const { return {*this, b}; }
    SymbolOverride<T, SymbolOp::And> operator&(const LocalTensor& b) const { return {*this, b}; }
    // The shape the advanced APIs read (SetShapeInfo); a sub-tensor ([]) has none.
    void SetShapeInfo(const ShapeInfo& shapeInfo) { m_shape_info = shapeInfo; }
    ShapeInfo GetShapeInfo() const { return m_shape_info; }
    // Points the tensor where `address_` of another tensor (of any element type) says: its position, address and
    // length (catlass's tile copies re-point default-constructed tensors this way).
    void SetAddr(const TBuffAddr& a) {
        m_t = KT(a.sfumatoCtx, a.sfumatoPos, a.bufferAddr,
                 static_cast<uint32_t>(uint64_t{a.dataLen} / sizeof(sfumato::ascendc::storage_t<T>)), a.sfumatoBuffer);
        m_pos = a.logicPos;
        sync_address();
    }
    // The reference's public member: where the tensor lies (kept in step with the tensor).
    TBuffAddr address_;
    uint64_t GetPhyAddr() const { return m_t.address(); }
    uint64_t GetPhyAddr(uint32_t offset) const { return m_t.address() + uint64_t{stored(offset)} * sizeof(T); }
    template <class U>
    LocalTensor<U> ReinterpretCast() const {
        return LocalTensor<U>(m_t.template ReinterpretCast<sfumato::ascendc::storage_t<U>>(), m_pos);
    }

    T GetValue(uint32_t offset) const {
        static_assert(!kIsInt4<T>, "LocalTensor<int4b_t>::GetValue is not supported by sfumato's Ascend C layer");
        // The vendor's compiler synchronises a scalar access of a local buffer with the pipes (its automatic
        // synchronisation, on by default): modelled as the scalar unit waiting for every pipe to drain.
        sfumato::ascendc::enter("LocalTensor::GetValue").ctx->pipe_barrier(sfumato::isa::Pipe::ALL);
        check_index(offset);
        T v{};
        sfumato::ascendc::local_scalar_read(m_t.pos(), m_t.address() + uint64_t{offset} * sizeof(T), &v,
                                            sizeof(T));
        return v;
    }
    template <class U>
    void SetValue(uint32_t offset, U value) const {
        static_assert(!kIsInt4<T>, "LocalTensor<int4b_t>::SetValue is not supported by sfumato's Ascend C layer");
        sfumato::ascendc::enter("LocalTensor::SetValue").ctx->pipe_barrier(sfumato::isa::Pipe::ALL);
        check_index(offset);
        const T v = static_cast<T>(value);
        sfumato::ascendc::local_scalar_write(m_t.pos(), m_t.address() + uint64_t{offset} * sizeof(T), &v,
                                             sizeof(T));
    }

    // sfumato: the kernel-API tensor.
    const KT& kt() const { return m_t; }
    bool valid() const { return m_t.valid(); }

private:
    void sync_address() {
        address_.dataLen = m_t.GetSize() * static_cast<uint32_t>(sizeof(sfumato::ascendc::storage_t<T>));
        address_.bufferAddr = m_t.address();
        address_.logicPos = m_pos;
        address_.sfumatoCtx = m_t.valid() ? &m_t.ctx() : nullptr;
        address_.sfumatoPos = m_t.pos();
        address_.sfumatoBuffer = m_t.buffer_index();
    }
    // Elements -> the kernel tensor's units (bytes for int4b_t).
    static uint32_t stored(uint32_t n) {
        if constexpr (kIsInt4<T>) {
            if (n % 2 != 0)
                sfumato::ascendc::fail("LocalTensor<int4b_t>: " + std::to_string(n) +
                                       " elements is not a whole number of bytes");
            return n / 2;
        }
        return n;
    }
    void check_index(uint32_t offset) const {
        if (!m_t.valid()) sfumato::ascendc::fail("the LocalTensor was never allocated");
        if (offset >= m_t.GetSize())
            sfumato::ascendc::fail("element " + std::to_string(offset) + " of a LocalTensor of " +
                                   std::to_string(m_t.GetSize()));
    }
    KT m_t;
    TPosition m_pos = TPosition::VECCALC;
    ShapeInfo m_shape_info;
};

}  // namespace AscendC
namespace sfumato::ascendc {
template <class>
inline constexpr bool is_local_tensor_v = false;
template <class T>
inline constexpr bool is_local_tensor_v<AscendC::LocalTensor<T>> = true;
}  // namespace sfumato::ascendc
namespace AscendC {

}  // namespace AscendC

namespace sfumato::ascendc {

// The kernel tensor a data move (DataCopy, LoadData) takes: int4b_t data moves as bytes, two elements
// each, as the MTEs move it (the reference's int4 DataCopy and LoadData parameters count bytes).
// 64-bit elements (FixPipe quantisation words) move as pairs of 32-bit ones: copies move bytes.
template <class T>
constexpr bool kIs64 = sizeof(storage_t<T>) == 8;
template <class T>
auto move_view(const AscendC::LocalTensor<T>& t) {
    if constexpr (AscendC::kIsInt4<T>)
        return t.kt().template ReinterpretCast<int8_t>();
    else if constexpr (kIs64<T>)
        return t.kt().template ReinterpretCast<int32_t>();
    else
        return t.kt();
}
template <class T>
constexpr isa::DType move_dtype() {
    if constexpr (kIs64<T>) return isa::DType::INT32;
    else return AscendC::kIsInt4<T> ? isa::DType::INT8 : isa::DTypeOf<storage_t<T>>::v;
}
template <class T>
auto move_view(const AscendC::GlobalTensor<T>& t) {
    if constexpr (AscendC::kIsInt4<T>) {
        kernel::GlobalTensor<int8_t> g;
        g.SetGlobalBuffer(t.device_address(), (t.GetSize() + 1) / 2);
        return g;
    } else if constexpr (kIs64<T>) {
        kernel::GlobalTensor<int32_t> g;
        g.SetGlobalBuffer(t.device_address(), t.GetSize() * 2);
        return g;
    } else {
        return t.kernel_tensor();
    }
}

}  // namespace sfumato::ascendc
