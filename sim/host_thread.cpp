#include "sim/host_thread.h"

#include "sim/failure.h"
#include "sim/run_horizon.h"

namespace sfumato {

HostThread::HostThread(sc_core::sc_module_name name, std::function<void()> program, bool stop_when_done)
    : sc_core::sc_module(name), m_program(std::move(program)), m_stop(stop_when_done) {
    SC_THREAD(run);
}

void HostThread::run() {
    try {
        m_program();
        m_finished = true;
        if (m_stop) {
            // sc_start returns; later steps (a replay's drain) may resume, after the driver acted
            // at this time: nothing runs ahead of it (sim/run_horizon.h).
            run_horizon() = sc_core::sc_time_stamp().value();
            sc_core::sc_pause();
        }
    } catch (...) {
        record_failure(std::current_exception());
    }
}

}  // namespace sfumato
