// TBufPool of the public Ascend C API: a range of one local buffer reserved from the TPipe
// (TPipe::InitBufPool), carved in order into queues, TBufs and sub-pools; a pool may share its
// range with another (InitBufPool with a shared pool), and Reset gives the range back for the
// next user. A user-defined pool (EXTERN_IMPL_BUFPOOL) places its queues' buffers itself through
// GetBufHandle/GetCurAddr/SetCurAddr and the queues' InitStartBufHandle/InitBufHandle. Buffers go
// to the kernel API's queues at the pool's addresses, so the queues' flags are those of TPipe
// buffers. Reset first consumes the free flags still pending on the pool's queues (the next user
// of the range waits for the last reader), which is what keeps a shared range race-free.
// Simplified: buffer handles are slots holding an address; a pool's length is checked against
// the range it was carved from, not against every pool sharing it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "sfumato_ascendc/pipe.h"

namespace sfumato::ascendc {

// One buffer handle of a user-defined pool: where its buffer lies.
struct BufHandleSlot {
    uint32_t addr = 0, len = 0;
};

// The state every pool has: its range, the next free address, the queues it set up.
struct PoolCore {
    AscendC::TPosition pos = AscendC::TPosition::VECCALC;
    bool ready = false;
    uint32_t base = 0, len = 0, cur = 0;
    uint32_t bufs = 0;  // user-defined pools: handles in use
    std::vector<kernel::TQueBase*> queues;

    void init(AscendC::TPosition p, uint32_t at, uint32_t bytes) {
        pos = p;
        base = at;
        len = bytes;
        cur = at;
        bufs = 0;
        ready = true;
        queues.clear();
    }
    // The next `bytes` (32-byte aligned) of the range.
    uint32_t take(uint32_t bytes, const char* what) {
        if (!ready) fail(std::string(what) + " on a TBufPool that InitBufPool never set up");
        const uint32_t b = (bytes + 31) / 32 * 32;
        if (cur + b > base + len)
            fail(std::string(what) + ": " + std::to_string(b) + " bytes do not fit in a TBufPool of " +
                 std::to_string(len) + " bytes (" + std::to_string(cur - base) + " used)");
        const uint32_t at = cur;
        cur += b;
        return at;
    }
    void reset() {
        for (kernel::TQueBase* q : queues) q->drain();
        queues.clear();
        cur = base;
        bufs = 0;
    }
};

inline kernel::TPipe& pool_pipe() {
    AscendC::TPipe* p = AscendC::GetTPipePtr();
    return p->kp();
}

}  // namespace sfumato::ascendc

namespace AscendC {

using TBufHandle = sfumato::ascendc::BufHandleSlot*;

// Queues and TBufs set up inside a pool.
template <class Pool, TPosition src, TPosition dst, int32_t depth, auto mask>
bool pool_init_queue(Pool& pool, TQueBind<src, dst, depth, mask>& que, uint8_t num, uint32_t len) {
    sfumato::ascendc::enter("TBufPool::InitBuffer");
    sfumato::ascendc::PoolCore& c = pool.sfumato_pool();
    const uint32_t step = (len + 31) / 32 * 32;
    const uint32_t at = c.take(step * num, "TBufPool::InitBuffer");
    sfumato::kernel::QueuePipes pp = sfumato::ascendc::bound_pipes(src, dst);
    const bool bound = src != dst && src != TPosition::GM && dst != TPosition::GM;
    sfumato::ascendc::pool_pipe().InitBufferAt(que.kq(), num, len, at, bound ? &pp : nullptr);
    c.queues.push_back(&que.kq());
    return true;
}
template <class Pool, TPosition pos>
bool pool_init_buf(Pool& pool, TBuf<pos>& buf, uint32_t len) {
    sfumato::ascendc::enter("TBufPool::InitBuffer");
    const uint32_t at = pool.sfumato_pool().take(len, "TBufPool::InitBuffer");
    sfumato::ascendc::pool_pipe().InitBufferAt(buf.kb(), len, at);
    buf.initialised = true;
    return true;
}
template <class Sub>
bool pool_init_sub(sfumato::ascendc::PoolCore& parent, Sub& sub, uint32_t len) {
    sfumato::ascendc::enter("TBufPool::InitBufPool");
    const uint32_t at = parent.take(len, "TBufPool::InitBufPool");
    sub.sfumato_pool().init(parent.pos, at, (len + 31) / 32 * 32);
    return true;
}
template <class Sub, class Shared>
bool pool_init_shared(Sub& sub, uint32_t len, Shared& shared) {
    sfumato::ascendc::enter("InitBufPool");
    const sfumato::ascendc::PoolCore& s = shared.sfumato_pool();
    if (!s.ready) sfumato::ascendc::fail("InitBufPool shares a TBufPool that InitBufPool never set up");
    if (len > s.len)
        sfumato::ascendc::fail("InitBufPool: " + std::to_string(len) + " bytes shared with a TBufPool of " +
                               std::to_string(s.len));
    sub.sfumato_pool().init(s.pos, s.base, s.len);
    return true;
}

template <TPosition pos, uint32_t bufIDSize = 4>
class TBufPool {
public:
    template <class Q>
    bool InitBuffer(Q& que, uint8_t num, uint32_t len) {
        return pool_init_queue(*this, que, num, len);
    }
    template <TPosition bufPos>
    bool InitBuffer(TBuf<bufPos>& buf, uint32_t len) {
        return pool_init_buf(*this, buf, len);
    }
    template <class Sub>
    bool InitBufPool(Sub& sub, uint32_t len) {
        return pool_init_sub(m_core, sub, len);
    }
    template <class Sub, class Shared>
    bool InitBufPool(Sub& sub, uint32_t len, Shared& shared) {
        return pool_init_shared(sub, len, shared);
    }
    void Reset() {
        sfumato::ascendc::enter("TBufPool::Reset");
        m_core.reset();
    }

    sfumato::ascendc::PoolCore& sfumato_pool() { return m_core; }
    const sfumato::ascendc::PoolCore& sfumato_pool() const { return m_core; }
    static constexpr TPosition kPos = pos;

private:
    sfumato::ascendc::PoolCore m_core;
};

template <class T>
bool TPipe::InitBufPool(T& bufPool, uint32_t len) {
    sfumato::ascendc::enter("TPipe::InitBufPool");
    not_a_copy();
    const TPosition p = T::kPos;
    const uint32_t at = m_pipe.Reserve(sfumato::ascendc::kernel_position(p), len, "TBufPool");
    bufPool.sfumato_pool().init(p, at, m_pipe.RoundUp(len, sfumato::ascendc::kernel_position(p)));
    return true;
}
template <class T, class U>
bool TPipe::InitBufPool(T& bufPool, uint32_t len, U& shareBuf) {
    return pool_init_shared(bufPool, len, shareBuf);
}

// A queue's or TBuf's buffers placed one by one by a user-defined pool.
template <TPosition src, TPosition dst, int32_t depth, auto mask>
void TQueBind<src, dst, depth, mask>::InitStartBufHandle(TBufHandle start, uint8_t num, uint32_t len) {
    sfumato::ascendc::enter("TQue::InitStartBufHandle");
    sfumato::kernel::QueuePipes pp = sfumato::ascendc::bound_pipes(src, dst);
    const bool bound = src != dst && src != TPosition::GM && dst != TPosition::GM;
    sfumato::ascendc::pool_pipe().InitBufferAt(m_q, num, len, start ? start->addr : 0, bound ? &pp : nullptr);
}
template <TPosition src, TPosition dst, int32_t depth, auto mask>
template <class Pool>
void TQueBind<src, dst, depth, mask>::InitBufHandle(Pool* pool, uint32_t index, TBufHandle handle,
                                                    uint32_t addr, uint32_t len) {
    sfumato::ascendc::enter("TQue::InitBufHandle");
    if (handle) *handle = {addr, len};
    sfumato::ascendc::pool_pipe().SetBufferAddress(m_q, index, addr);
    if (pool && index == 0) pool->sfumato_pool().queues.push_back(&m_q);
}
template <TPosition pos>
void TBuf<pos>::InitStartBufHandle(TBufHandle, uint8_t, uint32_t) {}
template <TPosition pos>
template <class Pool>
void TBuf<pos>::InitBufHandle(Pool*, uint32_t, TBufHandle handle, uint32_t addr, uint32_t len) {
    sfumato::ascendc::enter("TBuf::InitBufHandle");
    if (handle) *handle = {addr, len};
    sfumato::ascendc::pool_pipe().InitBufferAt(m_b, len, addr);
    initialised = true;
}

}  // namespace AscendC

// A user-defined pool: the members every pool has, for a class at POSITION with BUFID_SIZE
// buffer handles. Its InitBuffer functions place queues with the handles and addresses below.
#define EXTERN_IMPL_BUFPOOL(EXT_BUFPOOL, POSITION, BUFID_SIZE)                                       \
public:                                                                                               \
    static constexpr AscendC::TPosition kPos = POSITION;                                              \
    sfumato::ascendc::PoolCore& sfumato_pool() { return sfumato_core_; }                              \
    const sfumato::ascendc::PoolCore& sfumato_pool() const { return sfumato_core_; }                  \
    void Init() { sfumato_core_ = sfumato::ascendc::PoolCore{}; }                                     \
    void Reset() {                                                                                    \
        sfumato::ascendc::enter(#EXT_BUFPOOL "::Reset");                                              \
        sfumato_core_.reset();                                                                        \
    }                                                                                                 \
    AscendC::TBufHandle GetBufHandle(uint8_t offset) {                                                \
        if (offset >= (BUFID_SIZE))                                                                   \
            sfumato::ascendc::fail(#EXT_BUFPOOL "::GetBufHandle(" + std::to_string(offset) +          \
                                   ") past its " + std::to_string(BUFID_SIZE) + " handles");          \
        return &sfumato_handles_[offset];                                                             \
    }                                                                                                 \
    uint32_t GetCurAddr() const { return sfumato_core_.cur; }                                         \
    void SetCurAddr(uint32_t addr) {                                                                  \
        if (addr > sfumato_core_.base + sfumato_core_.len)                                            \
            sfumato::ascendc::fail(#EXT_BUFPOOL "::SetCurAddr past the pool's range");                \
        sfumato_core_.cur = addr;                                                                     \
    }                                                                                                 \
    uint8_t GetCurBufSize() const { return static_cast<uint8_t>(sfumato_core_.bufs); }                \
    void SetCurBufSize(uint8_t n) { sfumato_core_.bufs = n; }                                         \
                                                                                                      \
private:                                                                                              \
    sfumato::ascendc::PoolCore sfumato_core_;                                                         \
    sfumato::ascendc::BufHandleSlot sfumato_handles_[BUFID_SIZE] = {}
