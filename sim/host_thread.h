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
    // stop_when_done: the program's return ends the simulation (false when several host
    // programs run side by side, one per device of a system, and the driver waits for all).
    HostThread(sc_core::sc_module_name name, std::function<void()> program, bool stop_when_done = true);
    bool finished() const { return m_finished; }

private:
    void run();
    std::function<void()> m_program;
    bool m_stop;
    bool m_finished = false;
};

}  // namespace sfumato
