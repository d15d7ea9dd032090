#include "sim/sc_time_util.h"

namespace sfumato {

void init_time_resolution() {
    static bool done = false;
    if (!done) {
        sc_core::sc_set_time_resolution(1, sc_core::SC_PS);
        sc_core::sc_report_handler::set_actions("/OSCI/SystemC", sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
        // W571: a run slice whose next event lies beyond it (a long kernel stand-in of the timing
        // re-use service, an idle link) moves neither time nor deltas; the run drivers detect
        // starvation themselves, so the warning is noise (thousands of lines on an LLM run).
        sc_core::sc_report_handler::set_actions("no activity or clock movement for sc_start() invocation",
                                                sc_core::SC_DO_NOTHING);
        done = true;
    }
}

}  // namespace sfumato
