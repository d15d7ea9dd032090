#include "sim/sc_time_util.h"

namespace sfumato {

void init_time_resolution() {
    static bool done = false;
    if (!done) {
        sc_core::sc_set_time_resolution(1, sc_core::SC_PS);
        sc_core::sc_report_handler::set_actions("/OSCI/SystemC", sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
        done = true;
    }
}

}  // namespace sfumato
