// The communicator's rendezvous split over window-synchronised processes (comm_remote.cpp).
#pragma once
#include <map>
#include <systemc>
#include <vector>

#include "sim/window_sync.h"

namespace sfumato::comm {

class Communicator;

class RemoteRendezvous : public IRemotePort {
public:
    RemoteRendezvous(Communicator& c, WindowSync& s);
    // words: generation, from rank, to rank, then (init_rank) In, Out, Scratch, the sender's
    // data slots and ack slots per rank.
    void deliver(const RemoteMsg& m) override;
    // From rank `rank`'s host thread: posts its arrival, returns when the others' have reached it.
    void wait(uint32_t rank, bool with_state);

private:
    struct Arrivals {
        uint32_t count = 0;
        uint64_t latest = 0;
    };
    Communicator& m_c;
    WindowSync& m_s;
    uint16_t m_port;
    std::vector<uint64_t> m_gen;  // per rank
    std::map<std::pair<uint64_t, uint64_t>, Arrivals> m_arrivals;  // (to rank, generation)
    sc_core::sc_event m_event;
};

}  // namespace sfumato::comm
