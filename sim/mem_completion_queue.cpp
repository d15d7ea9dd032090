#include "sim/mem_completion_queue.h"

#include "sim/sc_time_util.h"

namespace sfumato {

MemCompletionQueue::MemCompletionQueue(sc_core::sc_module_name name) : sc_core::sc_module(name) {
    SC_METHOD(fire);
    sensitive << m_wake;
    dont_initialize();
}

void MemCompletionQueue::push(MemRequest& req) {
    const uint64_t now = now_tick().v;
    const bool earliest = m_heap.empty() || req.done_tick.v < m_heap.top().tick;
    m_heap.push({req.done_tick.v < now ? now : req.done_tick.v, m_seq++, &req});
    if (earliest) m_wake.notify(to_sc_time(Tick(m_heap.top().tick - now)));
}

void MemCompletionQueue::fire() {
    const uint64_t now = now_tick().v;
    while (!m_heap.empty() && m_heap.top().tick <= now) {
        MemRequest* r = m_heap.top().req;
        m_heap.pop();
        r->client->mem_done(*r);
    }
    if (!m_heap.empty()) m_wake.notify(to_sc_time(Tick(m_heap.top().tick - now)));
}

}  // namespace sfumato
