// Conservative parallel simulation of a system whose parts (endpoints: the chips) meet only through
// timed messages, the way parallel discrete-event simulators of HPC systems split a machine over
// processes (SST's rank partitions). Each rank (an MPI process, or the loopback's one) simulates
// some endpoints with its own SystemC kernel, window by window. A message posted at time t takes
// effect at its tick >= t + lookahead (the smallest latency between endpoints: a link's), so a
// window [start, start + lookahead) never receives a message for itself: ranks simulate their
// windows independently and exchange the window's messages at its end. The next window starts
// at the earliest pending activity over all ranks (idle stretches are skipped in one step).
// Messages cross between every two endpoints this way, on the same rank too, so the run is the
// same whatever the number of ranks: messages for a window are delivered at its start in (tick,
// source endpoint, source's sequence number) order, before any event of the window.
// Plain C++ around the SystemC kernel calls; the transport (IRankTransport) is MPI or the
// loopback, never home-made.
#pragma once
#include <cstdint>
#include <vector>

namespace sfumato {

struct RemoteMsg {
    uint64_t tick = 0;          // when it takes effect at the receiver (ps)
    uint32_t src = 0, dst = 0;  // endpoints
    uint64_t seq = 0;           // per source endpoint, in posting order (set by post())
    uint16_t port = 0;          // which receiver on the endpoint's rank (IRemotePort)
    uint16_t kind = 0;          // the receiver's own message kind
    std::vector<uint64_t> words;
};

// Contract: the collective operations ranks synchronise with. Every rank calls them in the
// same order (they block until all have). exchange() sends out[r] to rank r and returns, per
// sending rank, what it sent to this one; all_min() replaces each element by its minimum over
// the ranks, all_sum() by its sum.
class IRankTransport {
public:
    virtual ~IRankTransport() = default;
    virtual uint32_t rank() const = 0;
    virtual uint32_t size() const = 0;
    virtual std::vector<std::vector<uint64_t>> exchange(const std::vector<std::vector<uint64_t>>& out) = 0;
    virtual void all_min(std::vector<uint64_t>& v) = 0;
    virtual void all_sum(std::vector<uint64_t>& v) = 0;
};

// One rank: what it sends to itself comes back.
class LoopbackTransport : public IRankTransport {
public:
    uint32_t rank() const override { return 0; }
    uint32_t size() const override { return 1; }
    std::vector<std::vector<uint64_t>> exchange(const std::vector<std::vector<uint64_t>>& out) override { return out; }
    void all_min(std::vector<uint64_t>&) override {}
    void all_sum(std::vector<uint64_t>&) override {}
};

// Contract: a receiver of messages. deliver() is called at the start of the window that holds
// m.tick (the simulated time is earlier than m.tick); the receiver schedules its effect at m.tick.
class IRemotePort {
public:
    virtual ~IRemotePort() = default;
    virtual void deliver(const RemoteMsg& m) = 0;
};

class WindowSync {
public:
    static constexpr uint64_t kNever = ~uint64_t(0);
    // rank_of[e]: the rank that simulates endpoint e. lookahead_ps >= 2.
    WindowSync(IRankTransport& t, std::vector<uint32_t> rank_of, uint64_t lookahead_ps);
    uint32_t rank() const { return m_t.rank(); }
    uint32_t ranks() const { return m_t.size(); }
    uint64_t lookahead_ps() const { return m_lookahead; }
    bool local(uint32_t endpoint) const { return m_rank_of.at(endpoint) == rank(); }
    uint32_t endpoints() const { return static_cast<uint32_t>(m_rank_of.size()); }
    IRankTransport& transport() { return m_t; }
    // Receivers bind in the same order on every rank (the port ids must agree).
    uint16_t bind(IRemotePort* p);
    // From a process of endpoint m.src: throws ModelError when m.tick is sooner than the lookahead.
    void post(RemoteMsg m);

    // Elaboration and time zero's first delta (collective): what it posted is exchanged, to be
    // delivered at the first step.
    void start();
    enum class Step { Ran, AllDone, Stalled, Failed };
    // One window on every rank (collective): delivers the messages received at the last window's
    // end, agrees on the next window from the earliest pending activity over all ranks, runs it
    // and exchanges the messages posted in it. AllDone: every rank said done (nothing is run);
    // Stalled: nothing is pending anywhere and some rank is not done; Failed: some rank failed.
    Step step(bool local_done, bool local_failed);
    uint64_t windows() const { return m_windows; }
    uint64_t messages() const { return m_messages; }

private:
    void deliver_inbox();
    void exchange();

    IRankTransport& m_t;
    std::vector<uint32_t> m_rank_of;
    uint64_t m_lookahead;
    std::vector<IRemotePort*> m_ports;
    std::vector<uint64_t> m_seq;  // per endpoint
    std::vector<RemoteMsg> m_outbox, m_inbox;
    uint64_t m_windows = 0, m_messages = 0;
};

// The ranks' endpoints: endpoint e of n goes to rank e * ranks / n (contiguous blocks).
std::vector<uint32_t> block_partition(uint32_t endpoints, uint32_t ranks);

}  // namespace sfumato
