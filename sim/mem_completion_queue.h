// Completes memory requests at their done_tick: a min-heap ordered by (done_tick, arrival
// order) drained by one SC_METHOD that sleeps until the earliest completion. A memory model
// that computes latencies arithmetically pushes each request once and is never ticked.
#pragma once
#include <queue>
#include <systemc>
#include <vector>

#include "sim/mem_if.h"

namespace sfumato {

class MemCompletionQueue : public sc_core::sc_module {
public:
    SC_HAS_PROCESS(MemCompletionQueue);
    explicit MemCompletionQueue(sc_core::sc_module_name name);
    // Schedules req->client->mem_done(*req) at req.done_tick (>= now).
    void push(MemRequest& req);
    size_t pending() const { return m_heap.size(); }

private:
    struct Item {
        uint64_t tick;
        uint64_t seq;
        MemRequest* req;
        bool operator>(const Item& o) const { return tick != o.tick ? tick > o.tick : seq > o.seq; }
    };
    void fire();
    std::priority_queue<Item, std::vector<Item>, std::greater<Item>> m_heap;
    uint64_t m_seq = 0;
    sc_core::sc_event m_wake;
};

}  // namespace sfumato
