// TPipe, TQue/TQueBind, TBuf and LocalMemAllocator of the public Ascend C API over the kernel
// API's TPipe and TQue: the same buffer layout and the same set/wait flags per EnQue, DeQue,
// FreeTensor and AllocTensor. A TQueBind between two local positions (VECIN -> VECOUT) syncs its
// producer's pipe with its consumer's (MTE2 -> MTE3). Misuse the chip would not survive
// (AllocTensor with every buffer in use, DeQue of an empty queue, a queue never initialised,
// UB/L1 overflow in InitBuffer) stops the run naming the block and the call.
#pragma once
#include <cstdint>

#include "runtime/kernel/tpipe.h"
#include "sfumato_ascendc/tensor.h"

namespace sfumato::ascendc {

constexpr kernel::TPosition kernel_position(AscendC::TPosition p) {
    using AscendC::TPosition;
    switch (p) {
        case TPosition::VECIN: return kernel::TPosition::VECIN;
        case TPosition::VECOUT: return kernel::TPosition::VECOUT;
        case TPosition::A1: return kernel::TPosition::A1;
        case TPosition::B1: return kernel::TPosition::B1;
        case TPosition::A2: return kernel::TPosition::A2;
        case TPosition::B2: return kernel::TPosition::B2;
        case TPosition::CO1: return kernel::TPosition::CO1;
        case TPosition::CO2: return kernel::TPosition::CO2;
        case TPosition::C1: return kernel::TPosition::C1;
        case TPosition::C2: return kernel::TPosition::C2;
        case TPosition::C2PIPE2GM: return kernel::TPosition::C2PIPE2GM;
        case TPosition::TSCM: return kernel::TPosition::A1;
        default: return kernel::TPosition::VECCALC;
    }
}
// Where a queue bound from src to dst keeps its buffers, and its two pipes.
constexpr AscendC::TPosition bound_position(AscendC::TPosition src, AscendC::TPosition dst) {
    return src == AscendC::TPosition::GM ? dst : src;
}
kernel::QueuePipes bound_pipes(AscendC::TPosition src, AscendC::TPosition dst);

// LocalMemAllocator: the next free range of a hardware buffer of the running core.
struct LocalRange {
    AscendC::TPosition pos;
    uint32_t addr;
};
LocalRange local_alloc(AscendC::Hardware hw, uint64_t bytes);

struct BufHandleSlot;

}  // namespace sfumato::ascendc

namespace AscendC {

class TPipe;
// A buffer handle of a user-defined TBufPool (sfumato_ascendc/bufpool.h).
using TBufHandle = sfumato::ascendc::BufHandleSlot*;

template <TPosition src, TPosition dst, int32_t depth, auto mask = 0>
class TQueBind {
public:
    static constexpr TPosition kPos = sfumato::ascendc::bound_position(src, dst);
    static constexpr sfumato::kernel::TPosition kKernelPos = sfumato::ascendc::kernel_position(kPos);

    template <class T>
    LocalTensor<T> AllocTensor() {
        sfumato::ascendc::enter("TQue::AllocTensor");
        ready("AllocTensor");
        if (m_q.in_use() == m_q.buffers())
            sfumato::ascendc::fail("all " + std::to_string(m_q.buffers()) + " buffers of " + m_q.name() +
                                   " are in use (AllocTensor without FreeTensor)");
        return LocalTensor<T>(m_q.template AllocTensor<sfumato::ascendc::storage_t<T>>(), kPos);
    }
    template <class T>
    void AllocTensor(LocalTensor<T>& t) {
        t = AllocTensor<T>();
    }
    template <class T>
    bool EnQue(const LocalTensor<T>& t) {
        sfumato::ascendc::enter("TQue::EnQue");
        ready("EnQue");
        if (t.kt().buffer_index() < 0) sfumato::ascendc::fail("EnQue of a tensor this queue did not allocate");
        m_q.EnQue(t.kt());
        return true;
    }
    template <class T>
    LocalTensor<T> DeQue() {
        sfumato::ascendc::enter("TQue::DeQue");
        ready("DeQue");
        if (m_q.queued() == 0)
            sfumato::ascendc::fail("DeQue of an empty queue (" + m_q.name() + ": nothing was EnQue'd)");
        return LocalTensor<T>(m_q.template DeQue<sfumato::ascendc::storage_t<T>>(), kPos);
    }
    template <class T>
    void DeQue(LocalTensor<T>& t) {
        t = DeQue<T>();
    }
    template <class T>
    void FreeTensor(const LocalTensor<T>& t) {
        sfumato::ascendc::enter("TQue::FreeTensor");
        ready("FreeTensor");
        m_q.FreeTensor(t.kt());
    }
    bool VacantInQue() const { return m_q.queued() < m_q.buffers(); }
    bool HasTensorInQue() const { return m_q.queued() > 0; }
    int32_t GetTensorCountInQue() const { return static_cast<int32_t>(m_q.queued()); }
    bool HasIdleBuffer() const { return m_q.in_use() < m_q.buffers(); }
    void FreeAllEvent() { m_q.drain(); }
    // Buffers placed by a user-defined TBufPool (sfumato_ascendc/bufpool.h).
    void InitStartBufHandle(TBufHandle start, uint8_t num, uint32_t len);
    template <class Pool>
    void InitBufHandle(Pool* pool, uint32_t index, TBufHandle handle, uint32_t addr, uint32_t len);

    // sfumato: the kernel-API queue.
    sfumato::kernel::TQue<kKernelPos>& kq() { return m_q; }

private:
    void ready(const char* what) const {
        if (m_q.buffers() == 0)
            sfumato::ascendc::fail(std::string(what) + " on a queue that TPipe::InitBuffer never set up");
    }
    sfumato::kernel::TQue<kKernelPos> m_q;
};

template <TPosition pos, int32_t depth = 1, auto mask = 0>
class TQue : public TQueBind<pos, pos, depth, mask> {};
// A queue of the L1 buffer a Matmul takes A from (MatmulType<TPosition::TSCM, ...>): its buffers in L1, filled
// from srcPos (GM: DataCopy GM -> L1 in the MTE2 pipe, EnQue/DeQue ordering it before the MTE1's loads).
template <TPosition srcPos, int32_t depth = 1, auto mask = 0>
class TSCM : public TQueBind<TPosition::TSCM, TPosition::TSCM, depth, mask> {};

template <TPosition pos = TPosition::VECCALC>
class TBuf {
public:
    static constexpr sfumato::kernel::TPosition kKernelPos = sfumato::ascendc::kernel_position(pos);
    template <class T>
    LocalTensor<T> Get() {
        sfumato::ascendc::enter("TBuf::Get");
        ready();
        return LocalTensor<T>(m_b.template Get<sfumato::ascendc::storage_t<T>>(), pos);
    }
    // AllocTensor/FreeTensor of a TBuf (newer kernels' spelling): the whole buffer, nothing to free.
    template <class T>
    LocalTensor<T> AllocTensor() {
        return Get<T>();
    }
    template <class T>
    void FreeTensor(LocalTensor<T>&) {}
    template <class T>
    LocalTensor<T> Get(uint32_t len) {
        LocalTensor<T> t = Get<T>();
        if (len > t.GetSize())
            sfumato::ascendc::fail("TBuf::Get of " + std::to_string(len) + " elements from a buffer of " +
                                   std::to_string(t.GetSize()));
        t.SetSize(len);
        return t;
    }
    template <class T>
    LocalTensor<T> GetWithOffset(uint32_t size, uint32_t bufOffset) {
        LocalTensor<T> t = Get<T>();
        if (bufOffset % 32 != 0 || bufOffset + size * sizeof(T) > t.GetLength())
            sfumato::ascendc::fail("TBuf::GetWithOffset: " + std::to_string(size) + " elements at byte " +
                                   std::to_string(bufOffset) + " leave the buffer or are not 32-byte aligned");
        t = t.template ReinterpretCast<uint8_t>()[bufOffset].template ReinterpretCast<T>();
        t.SetSize(size);
        return t;
    }

    // The buffer placed by a user-defined TBufPool (sfumato_ascendc/bufpool.h).
    void InitStartBufHandle(TBufHandle start, uint8_t num, uint32_t len);
    template <class Pool>
    void InitBufHandle(Pool* pool, uint32_t index, TBufHandle handle, uint32_t addr, uint32_t len);

    sfumato::kernel::TBuf<kKernelPos>& kb() { return m_b; }
    bool initialised = false;

private:
    void ready() const {
        if (!initialised) sfumato::ascendc::fail("TBuf::Get on a buffer that TPipe::InitBuffer never set up");
    }
    sfumato::kernel::TBuf<kKernelPos> m_b;
};

class TPipe {
public:
    TPipe();
    ~TPipe() noexcept(false);
    // A copy (catlass passes its Arch::Resource, which holds a TPipe, by value to constructors that ignore it)
    // holds no buffers or queues: the original keeps them and stays the core's pipe (GetTPipePtr); a copy
    // sets up nothing (InitBuffer on it stops the run naming the call) and its end releases nothing.
    TPipe(const TPipe& other);
    TPipe& operator=(const TPipe&) = delete;

    template <TPosition src, TPosition dst, int32_t depth, auto mask>
    bool InitBuffer(TQueBind<src, dst, depth, mask>& que, uint8_t num, uint32_t len) {
        sfumato::ascendc::enter("TPipe::InitBuffer");
        not_a_copy();
        if (src != dst && src != TPosition::GM && dst != TPosition::GM)
            m_pipe.InitBuffer(que.kq(), num, len, sfumato::ascendc::bound_pipes(src, dst));
        else
            m_pipe.InitBuffer(que.kq(), num, len);
        return true;
    }
    template <TPosition pos>
    bool InitBuffer(TBuf<pos>& buf, uint32_t bufferSize) {
        sfumato::ascendc::enter("TPipe::InitBuffer");
        not_a_copy();
        m_pipe.InitBuffer(buf.kb(), bufferSize);
        buf.initialised = true;
        return true;
    }
    // A TBufPool's range (sfumato_ascendc/bufpool.h): reserved, or shared with shareBuf's.
    template <class T>
    bool InitBufPool(T& bufPool, uint32_t len);
    template <class T, class U>
    bool InitBufPool(T& bufPool, uint32_t len, U& shareBuf);
    void Init() {}
    void Destroy() {
        sfumato::ascendc::enter("TPipe::Destroy");
        m_pipe.Destroy();
    }
    void Reset() { Destroy(); }

    template <HardEvent evt>
    TEventID AllocEventID();
    template <HardEvent evt>
    void ReleaseEventID(TEventID id);
    template <HardEvent evt>
    TEventID FetchEventID();
    TEventID FetchEventID(HardEvent evt);

    sfumato::kernel::TPipe& kp() { return m_pipe; }

private:
    void not_a_copy() const;
    sfumato::ascendc::CoreState* m_state;
    sfumato::kernel::TPipe m_pipe;
    bool m_copy = false;
};

TPipe* GetTPipePtr();

// Static allocation of local memory in order of the calls (a bump allocator per buffer).
template <Hardware hw>
class LocalMemAllocator {
public:
    template <class T, uint32_t N = 0>
    LocalTensor<T> Alloc(uint32_t count = N) {
        const sfumato::ascendc::LocalRange r =
            sfumato::ascendc::local_alloc(hw, (kIsInt4<T> ? (count + 1ull) / 2 : count) * static_cast<uint64_t>(sizeof(T)));
        return LocalTensor<T>(r.pos, r.addr, count);
    }
    // The form naming the tensor's logical position (A1/B1 in L1, A2 in L0A, ...): the same range of the hardware
    // buffer, the tensor at that position.
    template <TPosition pos, class T, uint32_t N = 0>
    LocalTensor<T> Alloc(uint32_t count = N) {
        const sfumato::ascendc::LocalRange r =
            sfumato::ascendc::local_alloc(hw, (kIsInt4<T> ? (count + 1ull) / 2 : count) * static_cast<uint64_t>(sizeof(T)));
        return LocalTensor<T>(pos, r.addr, count);
    }
};

}  // namespace AscendC
