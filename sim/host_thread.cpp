#include "sim/host_thread.h"

#include "sim/failure.h"

namespace sfumato {

HostThread::HostThread(sc_core::sc_module_name name, std::function<void()> program, bool stop_when_done)
    : sc_core::sc_module(name), m_program(std::move(program)), m_stop(stop_when_done) {
    SC_THREAD(run);
}

void HostThread::run() {
    try {
        m_program();
        m_finished = true;
        if (m_stop) sc_core::sc_pause();  // sc_start returns; later steps (a replay's drain) may resume
    } catch (...) {
        record_failure(std::current_exception());
    }
}

}  // namespace sfumato
