// Same-instant order of memory requests. SystemC runs the processes woken at one instant in an
// order it leaves open: it follows the kernel's queue of timed events, which holds every pending
// event of the simulation, so that order (and with it, which delta cycle a process acts in)
// changes with whatever else is simulated: the other chips of a system, how many there are,
// their index. A memory target that serves requests first come, first served (a core port or a
// slice port's free-at time, the first miss to a line taking the MSHR) would make a chip's
// timing depend on them. SubmitOrder collects the requests submitted at one instant and hands
// them to the target once every process of that instant has run (when SystemC has no other
// activity left at the current time), still at that time, ordered by port with a round-robin
// priority (after an instant in which several ports had requests, the port after the first one
// served comes first), then by requester, then by arrival (the requests of one client, a pipe or
// an engine, keep their own order). A chip's timing then depends on its own requests only.
// Requests made outside an evaluation phase (between sc_start calls) are accepted at once.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "sim/mem_if.h"

namespace sfumato {

namespace detail {
class InstantEnd;
}

class SubmitOrder {
    friend class detail::InstantEnd;

public:
    // Construct during elaboration. `accept` takes one request into the target at the current
    // time (it must not submit through this object).
    SubmitOrder(uint32_t ports, std::function<void(MemRequest&)> accept);
    ~SubmitOrder();
    SubmitOrder(const SubmitOrder&) = delete;
    SubmitOrder& operator=(const SubmitOrder&) = delete;
    void submit(MemRequest& r);
    // Stages `r` in a batch of the target's own, without the end-of-instant service: the target
    // hands it over with flush_direct() (a run-ahead client's requests of one tick, whose
    // callbacks run ahead of SystemC time: models/mem/memory_system.h). Both batches take turns
    // in one round robin.
    void stage(MemRequest& r) { m_direct.push_back(&r); }
    // (Inline, as stage(): a run-ahead client's tick stages one request most of the time, which
    // needs no ordering.)
    void flush_direct() {
        if (m_direct.size() == 1) {
            MemRequest& r = *m_direct.front();
            m_direct.clear();  // before accept, as hand_over(): a later stage starts a new batch
            m_accept(r);
            return;
        }
        hand_over(m_direct);
    }
    // Moves the requests stage() holds into the current instant's batch, in their order, ahead of
    // those submitted after (a run-ahead tick that SystemC time has reached before its end).
    void direct_to_instant();
    // Asks for `hook` to be called once the current instant is over (every process of it ran, its
    // requests were handed over, nothing else is pending at this time), whether or not a request
    // is staged: the target may then act for times before the kernel's next activity, which no
    // other process can reach first (models/mem/memory_system.h, the pipes' completions ahead).
    // Set once; called at most once per want_end(), which returns whether it will be (not
    // outside a running simulation, nor without a hook).
    void set_end_hook(std::function<void()> hook) { m_end_hook = std::move(hook); }
    bool want_end();
    // A target whose next activation waits for its end hook (it asked want_end() and did not
    // schedule its wake-up) shows that activation's tick here until the hook runs (nullptr: none):
    // another target's hook, which may act ahead of SystemC time, must not go past it, and the
    // kernel does not know it yet. The pointer is read when asked (the tick may move earlier).
    void set_deferred(const uint64_t* tick) { m_deferred = tick; }
    // The earliest such tick among the other targets whose hooks are due at the end of this
    // instant (~0 when none): they are the only ones that can have one.
    uint64_t others_deferred() const;
    // Instants whose requests came from more than one port (for tests).
    uint64_t contended() const { return m_contended; }
    // Hands over the staged requests (the end-of-instant service calls it, or the target after
    // stage()).
    void flush();
    // The end-of-instant service: runs the hook if want_end() asked for it.
    void instant_over();

private:
    // A batch of several, as hand_over() orders it.
    struct Staged {
        uint64_t key;  // the port rotated (round robin), requester, arrival
        MemRequest* req;
    };
    void hand_over(std::vector<MemRequest*>& from);
    detail::InstantEnd* m_end;
    uint32_t m_ports;
    uint32_t m_first = 0;  // the port with the highest priority at the next instant
    std::function<void(MemRequest&)> m_accept;
    // The requests of this instant (submit) and of the target's own batch (stage), in arrival
    // order: their sort key is made only when a batch has more than one.
    std::vector<MemRequest*> m_staged, m_direct, m_moving;
    std::vector<Staged> m_batch;
    std::function<void()> m_end_hook;
    bool m_want_end = false;  // the hook is due at the end of this instant
    bool m_listed = false;    // in the end-of-instant service's list for this instant
    const uint64_t* m_deferred = nullptr;  // set_deferred()
    uint64_t m_contended = 0;
};

}  // namespace sfumato
