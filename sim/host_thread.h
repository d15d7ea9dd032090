// The host side of a simulation: one SC_THREAD that runs a host program (the graph executor, a
// workload replay, a user's C++ program against runtime/rt). Runtime calls made from it advance
// simulated host time with wait(). When the program returns the simulation stops; if the
// kernel runs out of events first, the run driver reports a deadlock.
#pragma once
#include <functional>
#include <systemc>

namespace sfumato {

class HostThread : public sc_core::sc_module {
public:
    SC_HAS_PROCESS(HostThread);
    HostThread(sc_core::sc_module_name name, std::function<void()> program);
    bool finished() const { return m_finished; }

private:
    void run();
    std::function<void()> m_program;
    bool m_finished = false;
};

}  // namespace sfumato
