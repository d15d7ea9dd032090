// Contract: the timing interface between memory clients (MTE pipes, FixPipe, SDMA engines) and
// the memory system (L2, NoC, HBM). A client fills a MemRequest it owns (no allocation per
// request), submits it, and is called back exactly once through IMemClient::mem_done at the
// simulated time the access completes (SystemC time). Requests carry no data: functional data
// moves through IBackingStore, separately, so timing mode costs the same cycles without it.
// A target may call mem_done from within submit() only if done_tick is the current time.
#pragma once
#include <cstdint>
#include <vector>

#include "sim/time.h"

namespace sfumato {

// ICACHE, DCACHE and PTW are an AI core's scalar unit: code fetches, scalar loads/stores and
// page-table walks.
enum class Requester : uint8_t { MTE2, MTE3, FIX, MTE1, SDMA, HOST, ICACHE, DCACHE, PTW, kCount };
inline const char* requester_name(Requester r) {
    constexpr const char* names[] = {"mte2", "mte3", "fix", "mte1", "sdma", "host", "icache", "dcache", "ptw"};
    return names[static_cast<int>(r)];
}

class IMemClient;

struct MemRequest;
// A burst: the requests a client would issue one by one (a DMA instruction's chunks, a traffic
// generator's next requests), handed over as one request to a target that takes bursts
// (IMemTarget::takes_bursts(): the bulk memory service). The spans are the requests in issue
// order; at most slots.size() of them are outstanding at once (the client's request slots):
// a span issues at the earliest free slot's time, no earlier than the burst's submit time and
// not before `gap` ticks after the previous burst of the same chain issued its last span (an
// engine's start-up between instructions). A chain's bursts issue one after the other. The
// target updates the chain and fills the results.
struct MemBurstChain {
    // When each request slot is free (tick). The target's order: a ring sorted ascending from
    // slots[first] (equal values, as reset() leaves them, are in any order).
    std::vector<uint64_t> slots;
    uint32_t first = 0;           // the target's: where the ring starts (the earliest free slot)
    uint64_t last_issue = 0;      // tick the chain's last span issued
    MemRequest* head = nullptr;   // the target's: bursts handed over and not yet all issued
    MemRequest* tail = nullptr;
    void reset(uint32_t n, uint64_t t) {
        slots.assign(n, t);
        first = 0;
        last_issue = t;
    }
};
struct MemSpan {
    uint64_t addr = 0;
    uint32_t bytes = 0;
};
struct MemBurst {
    std::vector<MemSpan> spans;
    MemBurstChain* chain = nullptr;
    uint64_t gap = 0;
    // The completion's time (mem_done's done_tick): the end of the last span (false), or the
    // time the chain's next span could issue, its earliest free slot (true: a client that keeps
    // its stream going submits the next burst then).
    bool done_at_next_issue = false;
    uint64_t end = 0;  // set by the target: when the last span's data is back (or written)
    size_t next = 0;   // the target's: the next span to issue
    uint64_t submitted = 0;  // the target's: when it was handed over
};

struct MemRequest {
    uint64_t addr = 0;
    uint32_t bytes = 0;
    bool write = false;
    bool atomic_add = false;
    Requester who = Requester::MTE2;
    bool target_part = false;  // the target's own: a part it split off a larger request (clients leave it false)
    uint16_t port = 0;        // requesting core / engine index
    Tick issue_tick;          // when the client submitted it (set by the client)
    Tick done_tick;           // set by the target before mem_done
    IMemClient* client = nullptr;
    uint64_t tag = 0;         // client's own bookkeeping
    MemRequest* next = nullptr;  // free for the current holder's intrusive queues
    MemBurst* burst = nullptr;   // a burst (addr, bytes: its first span, its bytes in all), else nullptr
};

class IMemClient {
public:
    virtual ~IMemClient() = default;
    virtual void mem_done(MemRequest& req) = 0;
    // Whether the completion of `req` may be delivered ahead of SystemC time (a target that
    // offers it: models/mem/memory_system.h): then mem_done takes its time from req.done_tick,
    // touches only the client's own state and submits requests (timed at req.done_tick), and
    // notifies no event. Asked just before the completion would be delivered.
    virtual bool takes_ahead(const MemRequest& req) const {
        (void)req;
        return false;
    }
};

class IMemTarget {
public:
    virtual ~IMemTarget() = default;
    virtual void submit(MemRequest& req) = 0;
    // Whether submit() takes bursts (MemRequest::burst); a client sends them only then.
    virtual bool takes_bursts() const { return false; }
};

// Functional global memory: byte storage only, no timing. Untouched bytes read as zero.
class IBackingStore {
public:
    virtual ~IBackingStore() = default;
    virtual void read(uint64_t addr, void* dst, uint64_t len) const = 0;
    virtual void write(uint64_t addr, const void* src, uint64_t len) = 0;
    virtual uint64_t capacity() const = 0;
    virtual uint64_t resident_bytes() const = 0;  // bytes actually backed (sparse)
};

}  // namespace sfumato
