#include "runtime/kernel/tpipe.h"

#include <algorithm>

namespace sfumato::kernel {

QueuePipes queue_pipes(TPosition p, isa::CoreKind kind) {
    switch (p) {
        case TPosition::VECIN: return {Pipe::MTE2, Pipe::V};
        case TPosition::VECOUT: return {Pipe::V, Pipe::MTE3};
        case TPosition::A1: case TPosition::B1: return {Pipe::MTE2, Pipe::MTE1};
        case TPosition::A2: case TPosition::B2: return {Pipe::MTE1, Pipe::M};
        case TPosition::CO1: return {Pipe::M, kind == isa::CoreKind::Coupled ? Pipe::V : Pipe::FIX};
        case TPosition::CO2: return {Pipe::V, Pipe::MTE3};
        case TPosition::C1: return {Pipe::MTE2, Pipe::MTE1};
        case TPosition::C2: return {Pipe::MTE1, Pipe::M};
        case TPosition::C2PIPE2GM: return {Pipe::FIX, Pipe::FIX};  // copy_l1_to_fb, then the fixpipe reading it
        default: return {Pipe::V, Pipe::V};
    }
}

TQueBase::~TQueBase() noexcept(false) {
    if (!m_pipe) return;
    m_pipe->forget(this);
    if (std::uncaught_exceptions() == 0) drain();
}

void TQueBase::setup(KernelContext& ctx, TPosition pos, uint32_t num, uint32_t base, uint32_t bytes, const std::string& name,
                     const QueuePipes* pipes) {
    (void)base;
    if (num == 0) throw InputError(name + ": a queue needs at least one buffer");
    m_ctx = &ctx;
    m_pos = pos;
    m_pipes = pipes ? *pipes : queue_pipes(pos, ctx.sink().core_kind());
    m_bytes = bytes;
    m_name = name;
    m_bufs.resize(num);
    for (auto& b : m_bufs) {
        b.fwd_ev = ctx.alloc_event(m_pipes.producer, m_pipes.consumer, name);
        b.back_ev = ctx.alloc_event(m_pipes.consumer, m_pipes.producer, name);
    }
}

uint32_t TQueBase::in_use() const {
    uint32_t n = 0;
    for (const auto& b : m_bufs) n += b.in_use ? 1 : 0;
    return n;
}

int TQueBase::alloc() {
    if (m_bufs.empty()) throw InputError("AllocTensor on a queue that InitBuffer never set up");
    uint32_t i = m_next;
    while (m_bufs[i].in_use) {
        i = (i + 1) % m_bufs.size();
        if (i == m_next)
            throw InputError(m_name + ": AllocTensor with all " + std::to_string(m_bufs.size()) +
                             " buffers in use (each needs a FreeTensor before it is allocated again)");
    }
    const int b = static_cast<int>(i);
    m_next = (i + 1) % m_bufs.size();
    m_ctx->scalar(ApiOps::kQueueOp);
    Buf& buf = m_bufs[b];
    buf.in_use = true;
    if (buf.back_pending) {
        m_ctx->wait_flag(m_pipes.consumer, m_pipes.producer, buf.back_ev);
        buf.back_pending = false;
    }
    return b;
}

void TQueBase::enque(int b) {
    if (b < 0 || b >= static_cast<int>(m_bufs.size())) throw InputError(m_name + ": EnQue of a tensor it did not allocate");
    m_ctx->scalar(ApiOps::kQueueOp);
    m_ctx->set_flag(m_pipes.producer, m_pipes.consumer, m_bufs[b].fwd_ev);
    m_fifo.push_back(b);
}

int TQueBase::deque() {
    if (m_fifo.empty()) throw InputError(m_name + ": DeQue on an empty queue");
    m_ctx->scalar(ApiOps::kQueueOp);
    const int b = m_fifo.front();
    m_fifo.pop_front();
    m_ctx->wait_flag(m_pipes.producer, m_pipes.consumer, m_bufs[b].fwd_ev);
    return b;
}

void TQueBase::free_buf(int b) {
    if (b < 0 || b >= static_cast<int>(m_bufs.size()) || !m_bufs[b].in_use)
        throw InputError(m_name + ": FreeTensor of a tensor it did not allocate (or freed twice)");
    m_bufs[b].in_use = false;
    m_ctx->scalar(ApiOps::kQueueOp);
    m_ctx->set_flag(m_pipes.consumer, m_pipes.producer, m_bufs[b].back_ev);
    m_bufs[b].back_pending = true;
}

void TQueBase::drain() {
    for (auto& b : m_bufs) {
        if (!b.back_pending) continue;
        m_ctx->wait_flag(m_pipes.consumer, m_pipes.producer, b.back_ev);
        b.back_pending = false;
    }
}

uint32_t TPipe::round_up(uint32_t bytes, TPosition p) const {
    const isa::Pos pos = physical(p);
    const uint32_t a = pos == isa::Pos::L0A || pos == isa::Pos::L0B ? 512 : pos == isa::Pos::L0C || pos == isa::Pos::BT ? 64 : 32;
    return (bytes + a - 1) / a * a;
}

uint32_t TPipe::reserve(TPosition p, uint32_t bytes, const char* what) {
    const isa::Pos pos = physical(p);
    uint64_t& used = m_used[static_cast<size_t>(pos)];
    const uint64_t cap = m_ctx.sink().buffer_size(pos);
    if (used + bytes > cap)
        throw InputError(std::string("TPipe::InitBuffer: ") + what + " of " + std::to_string(bytes) + " bytes does not fit in " +
                         isa::pos_name(pos) + " (" + std::to_string(used) + " of " + std::to_string(cap) + " bytes used)");
    const uint32_t at = static_cast<uint32_t>(used);
    used += bytes;
    return at;
}

void TPipe::forget(TQueBase* q) { m_queues.erase(std::remove(m_queues.begin(), m_queues.end(), q), m_queues.end()); }

void TPipe::Destroy() {
    for (TQueBase* q : m_queues) q->drain();
    m_queues.clear();
}

}  // namespace sfumato::kernel
