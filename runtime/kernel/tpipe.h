// Ascend-C-like buffer management: TPipe owns a core's local buffers and hands out ranges to
// queues (TQue) and scratch buffers (TBuf). A TQue of N buffers inserts the synchronisation a
// kernel author would otherwise write by hand: EnQue sets producer->consumer, DeQue waits for
// it; FreeTensor sets consumer->producer, and the next AllocTensor of that buffer waits for it.
// Each buffer has its own event id per direction, so a binary flag never has to count.
// AllocTensor takes the next buffer in turn that is not in use (in-order use keeps a strict
// rotation); allocating while every buffer is in use (a missing FreeTensor) is an error. Each
// queue operation charges the scalar unit its bookkeeping (ApiOps::kQueueOp) besides its flags.
#pragma once
#include <deque>
#include <exception>
#include <string>
#include <vector>

#include "runtime/kernel/tensor.h"
#include "sim/error.h"

namespace sfumato::kernel {

// Producer and consumer pipes of a queue position.
struct QueuePipes {
    Pipe producer, consumer;
};
QueuePipes queue_pipes(TPosition p, isa::CoreKind kind);

class TPipe;

class TQueBase {
public:
    TQueBase() = default;
    TQueBase(const TQueBase&) = delete;
    TQueBase& operator=(const TQueBase&) = delete;
    // A queue going out of scope consumes its pending free flags (issuing wait_flags).
    virtual ~TQueBase() noexcept(false);
    // Consumes free flags still pending, so the next block on this core starts clean.
    void drain();
    // Buffers allocated and not freed, tensors enqueued and not dequeued, buffers in all.
    uint32_t in_use() const;
    uint32_t queued() const { return static_cast<uint32_t>(m_fifo.size()); }
    uint32_t buffers() const { return static_cast<uint32_t>(m_bufs.size()); }
    const QueuePipes& pipes() const { return m_pipes; }
    const std::string& name() const { return m_name; }

protected:
    struct Buf {
        uint32_t addr = 0;
        uint8_t fwd_ev = 0, back_ev = 0;
        bool back_pending = false;
        bool in_use = false;  // allocated and not yet freed
    };
    friend class TPipe;
    void setup(KernelContext& ctx, TPosition pos, uint32_t num, uint32_t base, uint32_t bytes, const std::string& name,
               const QueuePipes* pipes = nullptr);
    int alloc();
    void enque(int buf);
    int deque();
    void free_buf(int buf);

    KernelContext* m_ctx = nullptr;
    TPipe* m_pipe = nullptr;
    TPosition m_pos = TPosition::VECIN;
    QueuePipes m_pipes{Pipe::MTE2, Pipe::V};
    std::vector<Buf> m_bufs;
    uint32_t m_bytes = 0;
    uint32_t m_next = 0;
    std::deque<int> m_fifo;
    std::string m_name;
};

template <TPosition P>
class TQue : public TQueBase {
public:
    template <class T>
    LocalTensor<T> AllocTensor() {
        const int b = alloc();
        return LocalTensor<T>(m_ctx, physical(P), m_bufs[b].addr, m_bytes / sizeof(T), b);
    }
    template <class T>
    void EnQue(const LocalTensor<T>& t) { enque(t.buffer_index()); }
    template <class T>
    LocalTensor<T> DeQue() {
        const int b = deque();
        return LocalTensor<T>(m_ctx, physical(P), m_bufs[b].addr, m_bytes / sizeof(T), b);
    }
    template <class T>
    void FreeTensor(const LocalTensor<T>& t) { free_buf(t.buffer_index()); }
};

template <TPosition P>
class TBuf {
public:
    template <class T>
    LocalTensor<T> Get() const { return LocalTensor<T>(m_ctx, physical(P), m_addr, m_bytes / sizeof(T), -1); }

private:
    friend class TPipe;
    KernelContext* m_ctx = nullptr;
    uint32_t m_addr = 0, m_bytes = 0;
};

class TPipe {
public:
    explicit TPipe(KernelContext& ctx) : m_ctx(ctx) {}
    ~TPipe() noexcept(false) {
        if (std::uncaught_exceptions() == 0) Destroy();
        for (TQueBase* q : m_queues) q->m_pipe = nullptr;
    }
    TPipe(const TPipe&) = delete;
    TPipe& operator=(const TPipe&) = delete;

    template <TPosition P>
    void InitBuffer(TQue<P>& q, uint32_t num, uint32_t bytes) {
        init_queue(q, num, bytes, nullptr);
    }
    // A queue whose producer and consumer pipes are given (a queue bound between two positions,
    // e.g. VECIN -> VECOUT is MTE2 -> MTE3).
    template <TPosition P>
    void InitBuffer(TQue<P>& q, uint32_t num, uint32_t bytes, const QueuePipes& pipes) {
        init_queue(q, num, bytes, &pipes);
    }
    template <TPosition P>
    void init_queue(TQue<P>& q, uint32_t num, uint32_t bytes, const QueuePipes* pipes) {
        const uint32_t base = reserve(P, num * round_up(bytes, P), "queue");
        q.setup(m_ctx, P, num, base, bytes, "queue " + std::to_string(m_queues.size()), pipes);
        q.m_pipe = this;
        for (uint32_t i = 0; i < num; ++i) q.m_bufs[i].addr = base + i * round_up(bytes, P);
        m_queues.push_back(&q);
    }
    template <TPosition P>
    void InitBuffer(TBuf<P>& b, uint32_t bytes) {
        b.m_ctx = &m_ctx;
        b.m_addr = reserve(P, round_up(bytes, P), "tbuf");
        b.m_bytes = bytes;
    }
    // Buffers the caller places itself (Ascend C's TBufPool carves a reserved range into queues
    // and buffers, and pools may share a range): nothing is reserved here. A queue set up again
    // first consumes the free flags still pending on its old buffers.
    template <TPosition P>
    void InitBufferAt(TQue<P>& q, uint32_t num, uint32_t bytes, uint32_t base, const QueuePipes* pipes = nullptr) {
        if (q.m_pipe == this) {
            q.drain();
            forget(&q);
        }
        q.m_fifo.clear();
        q.m_next = 0;
        q.setup(m_ctx, P, num, base, bytes, "queue " + std::to_string(m_queues.size()), pipes);
        for (auto& b : q.m_bufs) b = TQueBase::Buf{0, b.fwd_ev, b.back_ev, false, false};
        q.m_pipe = this;
        for (uint32_t i = 0; i < num; ++i) q.m_bufs[i].addr = base + i * round_up(bytes, P);
        m_queues.push_back(&q);
    }
    // Moves buffer i of a queue set up by InitBufferAt (pools that place buffers one by one).
    void SetBufferAddress(TQueBase& q, uint32_t i, uint32_t addr) {
        if (i >= q.m_bufs.size())
            throw InputError(q.m_name + ": buffer " + std::to_string(i) + " of a queue of " +
                             std::to_string(q.m_bufs.size()));
        q.m_bufs[i].addr = addr;
    }
    template <TPosition P>
    void InitBufferAt(TBuf<P>& b, uint32_t bytes, uint32_t addr) {
        b.m_ctx = &m_ctx;
        b.m_addr = addr;
        b.m_bytes = bytes;
    }
    // Reserves bytes of position P as InitBuffer does (for a pool the caller carves) and returns
    // their address.
    uint32_t Reserve(TPosition p, uint32_t bytes, const char* what) { return reserve(p, round_up(bytes, p), what); }
    uint32_t RoundUp(uint32_t bytes, TPosition p) const { return round_up(bytes, p); }
    void Destroy();
    void forget(TQueBase* q);

private:
    uint32_t round_up(uint32_t bytes, TPosition p) const;
    uint32_t reserve(TPosition p, uint32_t bytes, const char* what);
    KernelContext& m_ctx;
    uint64_t m_used[static_cast<size_t>(isa::Pos::kCount)] = {};
    std::vector<TQueBase*> m_queues;
};

}  // namespace sfumato::kernel
